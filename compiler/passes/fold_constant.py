"""fold_constant: evaluate every Call whose operands are all Constants with the op's numpy reference
(but ``copy``: the frontends copy a constant model output into its buffer, reader.own_buffers). A model
output that folds to a constant here (an SSD's anchor boxes: a dequantized, tiled, concatenated constant)
gets the same ``copy``, so one kernel writes it into its output buffer beside the computed outputs."""
from ..ir import Call, Constant, Function, IRModule, Tuple, call, get_op, rewrite


def fold_constant(mod: IRModule, keep_dequantize: bool = False) -> IRModule:
    """``keep_dequantize``: leave ``qnn.dequantize(Constant)`` alone (the first run, before
    legalize_qdq has seen the int8 weights behind it)."""
    def visit(node, _orig):
        if (isinstance(node, Call) and isinstance(node.op, str) and node.args and node.op != "copy"
                and not (keep_dequantize and node.op == "qnn.dequantize")
                and all(isinstance(a, Constant) for a in node.args)):
            value = get_op(node.op).compute(*(a.value for a in node.args), **node.attrs)
            return Constant(value, f"{node.span or node.op}_folded")
        return None

    return mod.with_main(_copy_constant_outputs(rewrite(mod.main, visit)))


def _copy_constant_outputs(func: Function) -> Function:
    """``func`` with every non-empty Constant output copied (when the model has a run-time input: without one
    the driver's error says there is nothing to compute)."""
    outs = func.outputs
    if not func.params or not any(isinstance(o, Constant) and o.ty.size for o in outs):
        return func
    copies = [call("copy", o, span=f"{o.name} (output copy)") if isinstance(o, Constant) and o.ty.size else o
              for o in outs]
    return Function(func.params, Tuple(tuple(copies)) if isinstance(func.body, Tuple) else copies[0], func.attrs)
