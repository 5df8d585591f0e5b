"""eliminate_dead_code: drop what computes nothing.

The IR is a DAG built from the outputs, so nodes no output reaches are already gone; this pass also
removes no-op calls: clip with no bounds, reshape to the same shape, identity transposes.
"""
from ..ir import Call, IRModule, rewrite


def eliminate_dead_code(mod: IRModule) -> IRModule:
    def visit(node, _orig):
        if not isinstance(node, Call) or not isinstance(node.op, str):
            return None
        if node.op == "clip" and node.attrs["a_min"] is None and node.attrs["a_max"] is None:
            return node.args[0]
        if node.op in ("reshape", "transpose") and node.args[0].ty.shape == node.ty.shape and (
                node.op == "reshape" or tuple(node.attrs["axes"]) == tuple(range(node.ty.ndim))):
            return node.args[0]
        return None

    return mod.with_main(rewrite(mod.main, visit))
