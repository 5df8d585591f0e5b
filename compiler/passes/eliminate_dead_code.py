"""eliminate_dead_code: drop what computes nothing.

The IR is a DAG built from the outputs, so nodes no output reaches are already gone; this pass also
removes no-op calls: those whose OpDef.is_identity says so (clip with no bounds, reshape to the same
shape, identity transposes).
"""
from ..ir import Call, IRModule, get_op, rewrite


def eliminate_dead_code(mod: IRModule) -> IRModule:
    def visit(node, _orig):
        if not isinstance(node, Call) or not isinstance(node.op, str):
            return None
        return node.args[0] if get_op(node.op).is_identity(node) else None

    return mod.with_main(rewrite(mod.main, visit))
