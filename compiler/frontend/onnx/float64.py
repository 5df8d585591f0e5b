"""Which ONNX operators compute float64 (ONNX ``double``, C ``double``) tensors.

A float64 model input or run-time value is accepted by the operators of ``FLOAT64_OPS`` only: their
converters and lowerings compute in C ``double`` (element-wise arithmetic, comparisons, Max/Min, Mod,
the reductions, CumSum, Einsum, Cast, data movement). Any other operator reading or producing a
float64 run-time tensor is one ``error:`` line naming the node, instead of float32 arithmetic (a
float32 libm call, a float32 accumulator) on double data. Constant operands fold in any type.
"""
from __future__ import annotations

from ...ir import Constant, Expr
from .registry import Node, shown

FLOAT64_OPS = frozenset({
    "Add", "Sub", "Mul", "Div", "Neg", "Abs", "Max", "Min", "Sum", "Mod", "Equal", "Greater", "Less",
    "GreaterOrEqual", "LessOrEqual", "Where", "Cast", "CastLike", "CumSum", "Einsum", "Exp", "Log", "Sqrt",
    "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp",
    "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Slice", "Split", "Expand", "Tile",
})


def check_float64(node: Node, args: list[Expr | None], outs: list[Expr]) -> None:
    """TinyfuseError when ``node`` reads or writes a float64 run-time tensor and its operator is not in
    FLOAT64_OPS (a float64 constant operand is no run-time tensor: it folds or is cast by the op)."""
    if node.op_type in FLOAT64_OPS:
        return
    named = [("input", n, e) for n, e in zip(node.proto.input, args)]
    named += [("output", n, e) for n, e in zip(node.proto.output, outs)]
    for kind, name, e in named:
        if e is not None and not isinstance(e, Constant) and e.ty.dtype == "float64":
            raise node.error(f"{kind} '{shown(name)}' {e.ty}: float64 tensors are not supported by this operator",
                             f"float64 runs in {', '.join(sorted(FLOAT64_OPS))}; export the model in float32")
