"""fold_constant: evaluate every Call whose operands are all Constants with the op's numpy reference
(but ``copy``: the frontends copy a constant model output into its buffer, reader.own_buffers)."""
from ..ir import Call, Constant, IRModule, get_op, rewrite


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

    return mod.with_main(rewrite(mod.main, visit))
