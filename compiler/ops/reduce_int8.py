"""TFLM's int8 MEAN (reference/integer_ops/mean.h QuantizedMeanOrSum) as qnn ops, shared by the
TFLite frontend (MEAN) and legalize_qdq (ONNX DQ → ReduceMean → Q). Registers no op."""
from __future__ import annotations

import math

import numpy as np

from .. import quant
from ..errors import TinyfuseError
from ..ir import Constant, Expr, call


def quantized_mean(x: Expr, axes: tuple[int, ...], in_q, out_q, span: str = "", dtype: str = "int8",
                   compute_sum: bool = False) -> Expr:
    """TFLM QuantizedMeanOrSum over ``axes`` of the int8 or int16 ``x``: sum − zp_in·n by a ones
    depthwise conv (int32), then MBQM with m' = (m << s) // n, shift' = shift − s,
    s = min(floor(log2 n), 32, 31 + shift) (``compute_sum``, TFLite SUM: MBQM with m and shift as they
    are), saturated to ``dtype`` (the output's: TFLM's QuantizedMeanOrSum<int16_t> for 16x8). The
    result has the reduced axes kept as size 1 (the caller reshapes)."""
    shape = x.ty.shape
    rank = len(shape)
    n = math.prod(shape[a] for a in axes)
    if rank == 4 and set(axes) <= {1, 2}:                  # NHWC over H and/or W: NCHW conv window
        xn = call("transpose", x, axes=(0, 3, 1, 2), span=span)
        kh, kw = (shape[1] if 1 in axes else 1), (shape[2] if 2 in axes else 1)
    else:                                                  # kept axes first, then [1, K, R, 1]
        kept = [a for a in range(rank) if a not in axes]
        xt = call("transpose", x, axes=(*kept, *axes), span=span) if kept + list(axes) != list(range(rank)) else x
        xn = call("reshape", xt, newshape=(1, math.prod(shape[a] for a in kept), n, 1), span=span)
        kh, kw = n, 1
    c = xn.ty.shape[1]
    ones = Constant(np.ones((c, 1, kh, kw), np.int8), f"{span}_ones")
    acc = call("qnn.conv2d", xn, ones, strides=(kh, kw), groups=c, input_zero_point=int(in_q[1]), span=span)
    real = float(np.float64(np.float32(in_q[0])) / np.float64(np.float32(out_q[0])))
    m, shift = quant.quantize_multiplier(real)
    if not compute_sum:
        s = min(n.bit_length() - 1, 32, 31 + shift)
        m, shift = (m << s) // n, shift - s
    if not 0 <= m < 2 ** 31:
        raise TinyfuseError(f"{span}: MEAN multiplier out of range")
    y = call("qnn.requantize", acc, Constant(np.full((1, c, 1, 1), m, np.int32)),
             Constant(np.full((1, c, 1, 1), shift, np.int32)), output_zero_point=int(out_q[1]), span=span,
             real_multiplier=(real if compute_sum else real / n,) * c,
             **({"out_dtype": dtype} if dtype != "int8" else {}))
    return call("transpose", y, axes=(0, 2, 3, 1), span=span)      # [N, C, oh, ow] → [N, oh, ow, C]
