"""L2 normalization along the last axis (TFLite L2_NORMALIZATION: nn.l2_normalize float32,
qnn.l2_normalize TFLM int8) and the L2 pool (TFLite L2_POOL_2D float32: nn.l2_pool2d, NHWC).

- float: reference_ops::L2Normalization, y = x / max(sqrt(Σ x²), 1e-6), the sum in float32;
- int8: reference_integer_ops::L2Normalization, acc = Σ (x − z)², (m, shift) =
  GetInvSqrtQuantizedMultiplierExp(acc), y = clamp(MBQM(x − z, m, shift + 7)): an output of scale
  1/128 and zero point 0 whatever the output tensor says (TFLM ignores it);
- L2 pool: reference_ops::L2Pool, y = sqrt(Σ x² / n) over the window's n taps inside the input
  (TensorFlow SAME / VALID padding as top, left, bottom, right), float32.
"""
from __future__ import annotations

import numpy as np

from .. import quant
from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType
from .fixedpoint import inv_sqrt_multiplier

L2_EPSILON = 1e-6


@register_op
class L2Normalize(OpDef):
    """x / max(‖x‖₂, 1e-6) over the last axis, float32 (module doc)."""
    name, pattern, num_inputs = "nn.l2_normalize", OpPattern.OPAQUE, 1
    attrs: dict = {}

    def infer(self, args, attrs):
        if args[0].dtype != "float32" or not args[0].ndim:
            raise TinyfuseError(f"nn.l2_normalize: needs float32 of rank >= 1, not {args[0]}")
        return args[0]

    def compute(self, x):
        sq = np.sum(np.square(x.astype(np.float32)), axis=-1, keepdims=True, dtype=np.float32)
        return (x / np.maximum(np.sqrt(sq), np.float32(L2_EPSILON))).astype(x.dtype)


@register_op
class QL2Normalize(OpDef):
    """TFLM's int8 L2_NORMALIZATION over the last axis (module doc); ``in_zero_point`` of x."""
    name, pattern, num_inputs = "qnn.l2_normalize", OpPattern.OPAQUE, 1
    attrs = {"in_zero_point": 0}

    def infer(self, args, attrs):
        if args[0].dtype != "int8" or not args[0].ndim:
            raise TinyfuseError(f"qnn.l2_normalize: needs int8 of rank >= 1, not {args[0]}")
        return args[0]

    def compute(self, x, in_zero_point):
        v = x.astype(np.int64) - in_zero_point
        rows = v.reshape(-1, v.shape[-1])
        out = np.empty_like(rows)
        for i, row in enumerate(rows):
            m, shift = inv_sqrt_multiplier(int(np.sum(row * row)))
            out[i] = quant.mbqm(row, m, shift + 7)
        return quant.saturate(out).reshape(x.shape)


@register_op
class L2Pool2D(OpDef):
    """sqrt(mean of x² over each window's taps inside the input), NHWC float32 (module doc)."""
    name, pattern, num_inputs = "nn.l2_pool2d", OpPattern.OPAQUE, 1
    attrs = {"pool_size": (1, 1), "strides": (1, 1), "padding": (0, 0, 0, 0)}

    def infer(self, args, attrs):
        x = args[0]
        (kh, kw), (sh, sw), (pt, pl, pb, pr) = attrs["pool_size"], attrs["strides"], attrs["padding"]
        if x.ndim != 4 or x.dtype != "float32" or min(kh, kw, sh, sw) < 1:
            raise TinyfuseError(f"nn.l2_pool2d: needs a float32 NHWC input and positive window, not {x}")
        oh, ow = (x.shape[1] + pt + pb - kh) // sh + 1, (x.shape[2] + pl + pr - kw) // sw + 1
        if oh < 1 or ow < 1:
            raise TinyfuseError(f"nn.l2_pool2d: window {kh}x{kw} does not fit {list(x.shape)}")
        return TensorType((x.shape[0], oh, ow, x.shape[3]), x.dtype)

    def compute(self, x, pool_size, strides, padding):
        n, h, w, c = x.shape
        (kh, kw), (sh, sw), (pt, pl, pb, pr) = pool_size, strides, padding
        oh, ow = (h + pt + pb - kh) // sh + 1, (w + pl + pr - kw) // sw + 1
        out = np.zeros((n, oh, ow, c), np.float32)
        for i in range(oh):
            for j in range(ow):
                h0, w0 = i * sh - pt, j * sw - pl
                win = x[:, max(h0, 0):min(h0 + kh, h), max(w0, 0):min(w0 + kw, w), :].astype(np.float32)
                count = win.shape[1] * win.shape[2]
                out[:, i, j, :] = np.sqrt(np.sum(win * win, axis=(1, 2), dtype=np.float32) / np.float32(count))
        return out
