"""The transposed convolution's layout and int8 rules (``passes/rules.py``: read by ``convert_layout`` and
``legalize_qdq``); its bias add is tried before the general add rule.

Layout: ``nn/qnn.conv2d_transpose`` NCHW with IOHW weights [C, M, KH, KW] → NHWC with OHWI weights
[G·M, KH, KW, Cg] (``ops.conv_transpose.weight_to_ohwi``), like conv2d's OIHW → OHWI.

int8: ``quantize([clamp](add(conv2d_transpose(dq(x), dq(W)), dq(B))))`` becomes
``clip(qnn.requantize(add(qnn.conv2d_transpose(x, W), B), M, shift))``: TFLM's TRANSPOSE_CONV int8
arithmetic (tflite-micro kernels/transpose_conv.cc → reference integer_ops::TransposeConv): an int32
accumulator of (x − z_x)·W, the int32 bias added, then MultiplyByQuantizedMultiplier per output
channel with M = double(s_x)·double(s_w[c]) / double(s_out) (PopulateConvolutionQuantizationParams,
as for CONV_2D), the output zero point and the clamp. Weights must be symmetric int8 quantized per
tensor or per output channel (IOHW axis 1, one group).
"""
from __future__ import annotations

import numpy as np

from ..errors import TinyfuseError
from ..ir import Call, Constant, call
from ..ops.conv_transpose import weight_to_ohwi
from .legalize_qdq import _dq_const, _dq_tensor, _is, bias_and_requantize
from .rules import layout_rule, qdq_rule

CONV_T = ("nn.conv2d_transpose", "qnn.conv2d_transpose")


@layout_rule(*CONV_T)
def _layout_rule(node: Call, args, lay):
    if node.attrs["data_layout"] != "NCHW" or not isinstance(node.args[1], Constant):
        return None
    w = weight_to_ohwi(node.args[1].value, node.attrs["groups"])
    return call(node.op, lay.to_nhwc(*args[0]), Constant(w, node.args[1].name), span=node.span,
                **{**node.attrs, "data_layout": "NHWC", "kernel_layout": "OHWI"}), True


def _anchor(lg, op: Call, bias, s_out: float, z_out: int):
    """The int8 transposed conv (module doc), or None when the operands are not int8 QDQ."""
    t, w = _dq_tensor(op.args[0]), _dq_const(op.args[1])
    if t is None or w is None or w[0].dtype != np.int8 or op.attrs["kernel_layout"] != "IOHW":
        return None
    x, s_x, z_x = t
    w_int, s_w, axis = w
    n_out = op.ty.shape[1]
    if s_w.size not in (1, n_out) or (s_w.size > 1 and (axis % 4 != 1 or op.attrs["groups"] != 1)):
        raise TinyfuseError(f"node '{op.span}' ({op.op}): weight scales of size {s_w.size} on axis {axis} "
                            f"do not match {n_out} output channels (per-channel scales: axis 1, one group)")
    acc = call("qnn.conv2d_transpose", x, Constant(w_int), input_zero_point=z_x, span=op.span, **op.attrs)
    return bias_and_requantize(acc, bias, s_x, s_w, (n_out, (1, n_out, 1, 1)), (s_out, z_out), lg.rounding)


@qdq_rule("nn.conv2d_transpose")
def _conv_t_rule(lg, y: Call, s_out: float, z_out: int):
    return _anchor(lg, y, None, s_out, z_out)


@qdq_rule("add", first=True)
def _bias_add_rule(lg, y: Call, s_out: float, z_out: int):
    """conv2d_transpose + dequantized bias: the anchor with its int32 bias; else None (the general add rule)."""
    if _is(y.args[0], "nn.conv2d_transpose") and _dq_const(y.args[1]) is not None:
        return _anchor(lg, y.args[0], y.args[1], s_out, z_out)
    return None
