"""TFLite transposed convolutions → ``nn.conv2d_transpose`` (NCHW between transposes, IOHW weights,
like conv2d in ``ops``; ``convert_layout`` brings both back to NHWC/OHWI).

- TRANSPOSE_CONV (up to v5): inputs output_shape (int32 [4], constant), weights OHWI [O, KH, KW, I],
  input NHWC, optional bias [O] (v3+); options padding SAME/VALID, strides, fused activation (v5).
  Padding as TFLite's kernels/transpose_conv.cc computes it, ComputePaddingHeightWidth with the roles
  of input and output swapped: for each spatial dim with output size ``out`` (from output_shape),

      n = ceil(out / s) (SAME) or (out − k + s) // s (VALID);  top = max((n − 1)·s + k − out, 0) // 2

  and each input pixel i scatters to out rows s·i − top + r (rows outside [0, out) are dropped).
  int8: QDQ form, legalized into TFLM's integer TransposeConv arithmetic (passes/conv_transpose_rules).
- CUSTOM 'Convolution2DTransposeBias' (MediaPipe, mediapipe/util/tflite/operations/
  transpose_conv_bias.cc): float32 input NHWC, weights OHWI, bias [O] (all three required); its
  custom options are TfLiteTransposeConvParams as raw little-endian int32: padding (1 SAME, 2 VALID),
  stride_width, stride_height. SAME: total = max(0, k − (in − 1) mod s − 1), top = total // 2;
  output size s·(in − 1) + k − total (VALID: total = 0). No dilation, no groups, no activation.
"""
from __future__ import annotations

import struct

import numpy as np

from ...ir import Constant, call
from .ops import bias, hybrid_or_quantized, weight
from .registry import S, TO_NCHW, TO_NHWC, Graph, Op, Tensor, _names, converter, finish, real

CUSTOM_CONVT = "CUSTOM 'Convolution2DTransposeBias'"


def _const(g: Graph, op: Op, t: Tensor | None, what: str) -> np.ndarray:
    """A constant operand: stored data, or the Constant an earlier operator made (DEQUANTIZE of float16)."""
    if t is not None and t.data is not None:
        return t.data
    e = g.env.get(t.index) if t is not None else None
    if isinstance(e, Constant):
        return e.value
    raise op.error(f"{what} must be a constant tensor")


def _weights(g: Graph, op: Op, x: Tensor, w: Tensor) -> np.ndarray:
    """The OHWI filter, checked against the NHWC input (one group: I = input channels)."""
    wv = _const(g, op, w, "filter")
    if wv.ndim != 4 or len(x.shape) != 4 or wv.shape[3] != x.shape[3]:
        raise op.error(f"needs a 4-D NHWC input and an OHWI filter with {x.shape[3] if len(x.shape) == 4 else '?'} "
                       f"input channels, got filter {list(wv.shape)}")
    return wv


def _conv_t(g: Graph, op: Op, x: Tensor, w: Tensor, wv: np.ndarray, b: Tensor | None, strides, crop):
    """``[add](nn.conv2d_transpose(x, W), B)`` in NCHW (weights OHWI → IOHW, per-channel axis 0 → 1)."""
    o = wv.shape[0]
    y = call("nn.conv2d_transpose", real(g, x, op, TO_NCHW), weight(op, w, wv.transpose(3, 0, 1, 2), 1, 0),
             strides=strides, padding=crop, span=op.span)
    if b is not None and b.data is None and isinstance(g.env.get(b.index), Constant):   # a DEQUANTIZEd float16 bias
        bb = Constant(g.env[b.index].value.astype(np.float32).reshape(1, o, 1, 1))
    else:
        bb = bias(op, b, o, (1, o, 1, 1))
    return y if bb is None else call("add", y, bb, span=op.span)


def _check_strides(op: Op, strides) -> tuple[int, int]:
    if min(strides) < 1:
        raise op.error(f"strides {list(strides)} must be positive")
    return tuple(int(s) for s in strides)


@converter("TRANSPOSE_CONV", max_version=5)
def convert_transpose_conv(g: Graph, op: Op):
    if len(op.inputs) < 3:
        raise op.error("TRANSPOSE_CONV needs inputs output_shape, weights and input")
    shape_t, w, x = op.inputs[:3]
    b = op.inputs[3] if len(op.inputs) > 3 else None
    hybrid_or_quantized(op, x, w)
    wv = _weights(g, op, x, w)
    out = tuple(int(d) for d in _const(g, op, shape_t, "output_shape").reshape(-1))
    if out != tuple(op.outputs[0].shape) or out[3] != wv.shape[0] or out[0] != x.shape[0]:
        raise op.error(f"output_shape {list(out)} disagrees with the output {op.outputs[0]} or filter {list(wv.shape)}")
    strides = _check_strides(op, (op.opt("strideH", 1), op.opt("strideW", 1)))
    padding = _names(S.Padding).get(op.opt("padding", 0), "?")
    if padding not in ("SAME", "VALID"):
        raise op.error(f"padding {padding} is not supported (SAME or VALID)")
    crop = []
    for size, k, s, n_out in zip(x.shape[1:3], wv.shape[1:3], strides, out[1:3]):
        n = -(-n_out // s) if padding == "SAME" else (n_out - k + s) // s
        top = max((n - 1) * s + k - n_out, 0) // 2
        crop.append((top, s * (size - 1) + k - top - n_out))
    (pt, pb), (pl, pr) = crop
    return finish(_conv_t(g, op, x, w, wv, b, strides, (pt, pl, pb, pr)), op, TO_NHWC)


@converter(CUSTOM_CONVT, max_version=1)
def convert_convolution2d_transpose_bias(g: Graph, op: Op):
    if len(op.inputs) != 3 or any(t is None for t in op.inputs):
        raise op.error("Convolution2DTransposeBias needs inputs input, weights and bias")
    x, w, b = op.inputs
    if x.dtype != "float32":
        raise op.error(f"Convolution2DTransposeBias runs on float32 only (MediaPipe's kernel), got {x.dtype}")
    wv = _weights(g, op, x, w)
    raw = op.options if isinstance(op.options, bytes) else b""
    if len(raw) < 12:
        raise op.error(f"custom options hold {len(raw)} bytes; expected TfLiteTransposeConvParams (padding, "
                       "stride_width, stride_height as int32)")
    pad_code, stride_w, stride_h = struct.unpack("<iii", raw[:12])
    if pad_code not in (1, 2):
        raise op.error(f"custom option padding {pad_code} is not supported (1 SAME, 2 VALID)")
    strides = _check_strides(op, (stride_h, stride_w))
    crop = []
    for size, k, s in zip(x.shape[1:3], wv.shape[1:3], strides):
        total = max(0, k - (size - 1) % s - 1) if pad_code == 1 else 0
        crop.append((total // 2, total - total // 2))
    (pt, pb), (pl, pr) = crop
    return finish(_conv_t(g, op, x, w, wv, b, strides, (pt, pl, pb, pr)), op, TO_NHWC)
