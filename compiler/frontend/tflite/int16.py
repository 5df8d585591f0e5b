"""What the TFLite frontend checks and adds for int16 activations (16x8 quantization: int16
activations, int8 weights, int64 or int32 bias), where TFLite Micro's int16 kernels differ from its
int8 ones (tensorflow/lite/micro/kernels/*.cc, *_common.cc):

- the ops with an int16 kernel here (``INT16_OPS``): the converters of ops.py take int16 tensors as
  they take int8 ones (QDQ form; legalize_qdq gives the int16 arithmetic);
- CONV_2D and DEPTHWISE_CONV_2D ignore the int16 zero points (reference_integer_ops ConvPerChannel
  and DepthwiseConvPerChannel on int16 add none), MUL, SOFTMAX, LOGISTIC and TANH refuse nonzero ones:
  ``zero_points`` refuses a model whose int16 zero points are not 0 there, as its real arithmetic
  would not be TFLM's;
- a 16x8 conv or fully connected without a bias accumulates in int64 unless its options say
  ``quantized_bias_type`` INT32 (conv.cc, fully_connected.cc): ``absent_bias`` gives the zero bias of
  that type, so that legalize_qdq picks the accumulator from the bias alone; DEPTHWISE_CONV_2D reads
  its bias as int64 (``bias_type``).
"""
from __future__ import annotations

import numpy as np

from ...ir import Constant, Expr, call
from ...ops.qnn_int16 import output_is_q15
from .registry import Op, Tensor
from .schema import S

#: TFLite ops whose int16 activations tinyfuse runs (beside the int16 state of SVDF and the int8 LSTM)
INT16_OPS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL", "SOFTMAX",
                       "LOGISTIC", "TANH", "AVERAGE_POOL_2D", "MAX_POOL_2D", "QUANTIZE", "DEQUANTIZE",
                       "CONCATENATION", "RESHAPE", "SQUEEZE", "PAD", "PADV2", "MEAN",
                       "UNIDIRECTIONAL_SEQUENCE_LSTM", "SVDF"})


def zero_points(op: Op, *tensors: Tensor | None) -> None:
    """Refuse int16 ``tensors`` of ``op`` whose zero point is not 0 (TFLM's kernel ignores or refuses it)."""
    for t in tensors:
        if t is not None and t.dtype == "int16" and t.quantized and int(t.zero_point[0]) != 0:
            raise op.error(f"int16 tensor '{t.name}' {t} has zero point {int(t.zero_point[0])}; TFLM's int16 "
                           f"{op.name} needs 0 (16x8 quantization is symmetric)")


def bias_type(op: Op, x: Tensor, b: Tensor | None) -> None:
    """int16 input: the bias is int64, or int32 (CONV_2D and FULLY_CONNECTED only, as TFLM)."""
    if x.dtype != "int16" or b is None:
        return
    allowed = ("int64",) if op.name == "DEPTHWISE_CONV_2D" else ("int64", "int32")
    if b.dtype not in allowed:
        raise op.error(f"bias '{b.name}' {b} of an int16 {op.name} must be {' or '.join(allowed)}")


def absent_bias(op: Op, x: Tensor, w: Tensor, n: int, shape) -> Expr | None:
    """The zero bias a 16x8 op without one accumulates with (int64, or int32 by ``quantizedBiasType``),
    as ``reshape(dequantize(Constant))`` of scale s_x · s_w; None for other ops."""
    if x.dtype != "int16":
        return None
    dtype = np.int32 if op.opt("quantizedBiasType", 0) == S.TensorType.INT32 else np.int64
    scale = np.float32(x.scale[0]) * np.broadcast_to(np.asarray(w.scale, np.float32), (n,))
    c = Constant(np.zeros(n, dtype), f"{op.span}_zero_bias")
    dq = call("qnn.dequantize", c, scale=scale.copy() if scale.size > 1 else float(scale[0]), zero_point=0, axis=0)
    return call("reshape", dq, newshape=tuple(shape), span=op.span) if tuple(shape) != (n,) else dq


def check_logistic(op: Op) -> None:
    """int16 LOGISTIC / TANH: input zero point 0, output (2^-15, 0) (TFLM's Prepare)."""
    x, out = op.inputs[0], op.outputs[0]
    if x.dtype != "int16":
        return
    zero_points(op, x)
    if not output_is_q15(*out.q):
        raise op.error(f"int16 {op.name} output '{out.name}' is quantized {out.q}; TFLM needs (2^-15, 0)")
