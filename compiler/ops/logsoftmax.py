"""nn.log_softmax (ONNX LogSoftmax-13, TFLite LOG_SOFTMAX float32) and qnn.log_softmax (TFLM's int8
LOG_SOFTMAX: reference_ops::LogSoftmaxQuantized, output fixed at scale 16/256, zero point 127).

The float kernel follows reference_ops::LogSoftmax: m = max, s = Σ exp(x − m) in float32, y = x − m −
log(s). The int8 one: per row, d = x − max; exps of d·s_in in Q5.26 summed in Q12.19 where d ≥ diff_min,
log of the sum in Q5.26, y = RDBP(d·s_in (Q5.26) − log_sum, 22) + 127 where d exceeds an adjusted
minimum, else −128 (:func:`log_softmax_int8`, parameters :func:`log_softmax_params`).
"""
from __future__ import annotations

import math

import numpy as np

from .. import quant
from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from .fixedpoint import log_x_ge_1

LOG_SOFTMAX_OUT_Q = (16.0 / 256, 127)     # TFLM's only int8 output quantization
DIFF_INT_BITS, ACCUM_INT_BITS, OUT_INT_BITS = 5, 12, 4


@register_op
class LogSoftmax(OpDef):
    """log(softmax(x)) along ``axis`` (non-negative), float32."""
    name, pattern, num_inputs = "nn.log_softmax", OpPattern.OPAQUE, 1
    attrs = {"axis": -1}
    cost_family = "softmax"

    def infer(self, args, attrs):
        x = args[0]
        if not 0 <= attrs["axis"] < x.ndim or x.dtype != "float32":
            raise TinyfuseError(f"nn.log_softmax: axis {attrs['axis']} / type {x.dtype} invalid for {list(x.shape)}")
        return x

    def compute(self, x, axis):
        v = x.astype(np.float64)
        d = v - v.max(axis=axis, keepdims=True)
        return (d - np.log(np.exp(d).sum(axis=axis, keepdims=True))).astype(x.dtype)


@register_op
class QLogSoftmax(OpDef):
    """TFLM's int8 LOG_SOFTMAX along ``axis`` (module doc); ``in_scale`` the input's float32 scale; the
    input zero point (``in_zero_point``, recorded for the model's I/O facts) cancels in x − max; the
    output is (16/256, 127)."""
    name, pattern, num_inputs = "qnn.log_softmax", OpPattern.OPAQUE, 1
    attrs = {"axis": -1, "in_scale": 1.0, "in_zero_point": 0}
    cost_family = "softmax"

    def infer(self, args, attrs):
        x = args[0]
        if not 0 <= attrs["axis"] < x.ndim or x.dtype != "int8":
            raise TinyfuseError(f"qnn.log_softmax: axis {attrs['axis']} / type {x.dtype} invalid for {list(x.shape)}")
        log_softmax_params(attrs["in_scale"])
        return x

    def compute(self, x, axis, in_scale, in_zero_point):
        return log_softmax_int8(x, log_softmax_params(in_scale), axis)


def log_softmax_params(in_scale: float) -> dict:
    """PreprocessLogSoftmaxScalingExp (beta 1, 5 integer bits, double rounding) and diff_min =
    −CalculateInputRadius(5, left_shift): the Q31 ``multiplier`` and ``left_shift`` of d·s_in into
    Q5.26, the ``reverse_multiplier`` / ``reverse_shift`` of the inverse scaling."""
    real = min(float(np.float32(in_scale)) * float(1 << (31 - DIFF_INT_BITS)), float((1 << 31) - 1))
    m, left = quant.quantize_multiplier(real)
    if left < 0 or m == 0:
        raise TinyfuseError(f"qnn.log_softmax: input scale {in_scale} too small for TFLM's kernel")
    rm, rs = quant.quantize_multiplier((1 << (31 - left)) / m)
    if rs > 0:
        raise TinyfuseError(f"qnn.log_softmax: input scale {in_scale} gives a reverse scaling above one")
    radius = math.floor(((1 << DIFF_INT_BITS) - 1) * (1 << (31 - DIFF_INT_BITS)) / (1 << left))
    return dict(multiplier=m, left_shift=left, reverse_multiplier=rm, reverse_shift=rs, diff_min=-radius)


def log_softmax_int8(x, p: dict, axis: int = -1) -> np.ndarray:
    """reference_ops::LogSoftmaxQuantized<int8> along ``axis`` with parameters ``p``."""
    xm = np.moveaxis(np.asarray(x, np.int64), axis, -1)
    d = xm - xm.max(axis=-1, keepdims=True)
    scaled = quant.mbqm(np.maximum(d, p["diff_min"]), p["multiplier"], p["left_shift"])
    e = quant.rdbp(quant.exp_on_negative_values(scaled, DIFF_INT_BITS), ACCUM_INT_BITS)
    total = np.where(d >= p["diff_min"], e, 0).sum(axis=-1, keepdims=True)
    log_sum = log_x_ge_1(total, ACCUM_INT_BITS, DIFF_INT_BITS)
    adjusted = np.maximum(p["diff_min"] - 1,
                          quant.mbqm(quant.wrap32(log_sum + quant.INT32_MIN), p["reverse_multiplier"], p["reverse_shift"]))
    y = quant.rdbp(quant.wrap32(scaled - log_sum), 31 - DIFF_INT_BITS - OUT_INT_BITS) + 127
    y = np.where(d > adjusted, np.clip(y, -128, 127), -128)
    return np.ascontiguousarray(np.moveaxis(y.astype(np.int8), -1, axis))
