"""select(condition, x, y): element-wise choice (ONNX Where-16, TFLite SELECT_V2); a uniform constant
condition is folded to x or y by the frontend.

``y_i = condition_i ? x_i : y_i`` with numpy (ONNX multidirectional) broadcasting over all three
operands; ``condition`` is a bool (or uint8, nonzero = true) tensor, computed or a constant mask
that lowering reads as a weight array; x and y share their dtype, which the output keeps. numpy
reference: ``np.where`` (ONNX Where-16's reference implementation).
"""
from __future__ import annotations

import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType


@register_op
class Select(OpDef):
    """condition ? x : y, element-wise with broadcasting (module doc)."""

    name, c_expr = "select", "select"
    pattern = OpPattern.BROADCAST
    num_inputs = 3
    cost_family = "elemwise"

    def infer(self, args, attrs):
        cond, x, y = args
        if x.dtype != y.dtype:
            raise TinyfuseError(f"select: x is {x.dtype} and y is {y.dtype}; they must share a dtype")
        if cond.dtype not in ("bool", "uint8"):
            raise TinyfuseError(f"select: the condition is {cond.dtype}, not bool")
        try:
            shape = np.broadcast_shapes(cond.shape, x.shape, y.shape)
        except ValueError:
            raise TinyfuseError(f"select: shapes {[cond.shape, x.shape, y.shape]} do not broadcast") from None
        return TensorType(tuple(int(d) for d in shape), x.dtype)

    def compute(self, cond, x, y):
        return np.where(cond.astype(bool), x, y).astype(x.dtype)
