"""TFLite operator converters: one function per builtin operator (or tight family), registered
with ``@converter`` and the newest operator version it understands (TFLite's op_version.cc
numbering). Each takes the :class:`Graph` and the :class:`Op` and returns the IR value of the op's
output in TFLite layout and dtype; ``tflite.py`` checks it against the output tensor.

Layout: conv, depthwise and pools run in NCHW between transposes (``TO_NCHW``/``TO_NHWC``) that
``convert_layout`` cancels. int8: QDQ form where legalize_qdq's arithmetic is TFLM's (conv,
depthwise, fully connected, add, mul, softmax, logistic, tanh, concatenation, quantize); TFLM's own
parameters otherwise (``int8``).
"""
from __future__ import annotations

import math

import numpy as np

from ... import quant
from ...ir import Constant, Expr, call
from . import int8 as i8
from . import int16 as i16
from ..onnx.reader import sanitize
from .int8 import F32
from .registry import (TO_NCHW, TO_NHWC, Graph, Op, S, Tensor, _names, activation, constant,
                              converter, dequantize, finish, is_int8, is_quantized, real, reshape, transpose)


# ----------------------------------------------------------------------------------------- helpers

def same_padding(size, kernel, strides, dilation, padding: str, op: Op) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) of TensorFlow's SAME (the odd pixel goes bottom/right) or VALID."""
    if padding == "VALID":
        return 0, 0, 0, 0
    if padding != "SAME":
        raise op.error(f"padding {padding} is not supported (SAME or VALID)")
    begin, end = [], []
    for n, k, s, d in zip(size, kernel, strides, dilation):
        total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
        begin.append(total // 2)
        end.append(total - total // 2)
    return begin[0], begin[1], end[0], end[1]


def window(op: Op, x: Tensor, kernel) -> dict:
    """strides, dilation and padding attributes of a conv/pool op on an NHWC input."""
    strides = (op.opt("strideH", 1), op.opt("strideW", 1))
    dilation = (op.opt("dilationHFactor", 1), op.opt("dilationWFactor", 1))
    if min(strides) < 1 or min(dilation) < 1:
        raise op.error(f"strides {list(strides)} and dilations {list(dilation)} must be positive")
    padding = _names(S.Padding).get(op.opt("padding", 0), "?")
    return dict(strides=strides, dilation=dilation,
                padding=same_padding(x.shape[1:3], kernel, strides, dilation, padding, op))


def weight(op: Op, t: Tensor, value: np.ndarray, axis: int, tflite_axis: int) -> Expr:
    """A weight constant in IR layout: ``qnn.dequantize(int8 Constant)`` with its per-channel scales
    (on ``tflite_axis`` in the file) moved to ``axis`` (float and float16 weights: a float Constant)."""
    if t.dtype in ("float32", "float16"):
        return Constant(np.ascontiguousarray(value, np.float32), sanitize(t.name))
    if t.dtype != "int8" or not t.quantized:
        raise op.error(f"weights '{t.name}' {t} are not supported (float32, float16 or quantized int8)")
    if t.scale.size > 1 and t.axis != tflite_axis:
        raise op.error(f"weights '{t.name}' {t} are quantized per channel on axis {t.axis}, expected {tflite_axis}")
    if is_quantized(op.inputs[0]) and np.any(t.zero_point != 0):
        raise op.error(f"int8 weights '{t.name}' have non-zero zero points; the TFLite int8 spec needs "
                       "symmetric weights")
    c = Constant(np.ascontiguousarray(value), sanitize(t.name))
    if t.scale.size > 1:
        return call("qnn.dequantize", c, scale=t.scale.copy(), zero_point=t.zero_point.copy(), axis=axis)
    return call("qnn.dequantize", c, scale=float(t.scale[0]), zero_point=int(t.zero_point[0]), axis=axis)


def bias(op: Op, t: Tensor | None, n: int, shape) -> Expr | None:
    """The bias as ``reshape(dequantize(int32 / int64 Constant))`` (int8 and 16x8 models) or a float
    Constant; a 16x8 op without one gets the zero bias TFLM accumulates with (``int16.absent_bias``)."""
    if t is None:
        x, w = op.inputs[0], op.inputs[1]
        return i16.absent_bias(op, x, w, n, shape) if x.dtype == "int16" else None
    b = constant(op, t, "bias").reshape(-1)
    if b.size != n:
        raise op.error(f"bias '{t.name}' {t} does not match {n} output channels")
    i16.bias_type(op, op.inputs[0], t)
    if t.dtype in ("int32", "int64"):
        if not t.quantized:
            raise op.error(f"{t.dtype} bias '{t.name}' has no quantization parameters")
        return reshape(weight_int32(t, b), shape, op.span)
    if t.dtype in ("float32", "float16"):
        return Constant(b.astype(np.float32).reshape(shape), sanitize(t.name))
    raise op.error(f"bias '{t.name}' {t} has element type {t.dtype} (int32, int64 or float32 expected)")


def weight_int32(t: Tensor, b: np.ndarray) -> Expr:
    """An int32 (int64: 16x8) bias constant behind its dequantize."""
    c = Constant(np.ascontiguousarray(b, np.int64 if t.dtype == "int64" else np.int32), sanitize(t.name))
    scale = t.scale.copy() if t.scale.size > 1 else float(t.scale[0])
    return call("qnn.dequantize", c, scale=scale, zero_point=0, axis=0)


def hybrid_or_quantized(op: Op, x: Tensor, w: Tensor) -> None:
    """int8 and int16 activations need int8 weights; float activations take float or int8 weights
    (hybrid: the weights are dequantized at compile time, as in the ONNX twin)."""
    if is_quantized(x) and w.dtype != "int8":
        raise op.error(f"{x.dtype} input with {w.dtype} weights '{w.name}' is not supported")
    if w.dtype not in ("int8", "float32", "float16"):
        raise op.error(f"weights '{w.name}' {w} have element type {w.dtype}", "int4/int16 weights have no kernels")


# ----------------------------------------------------------------------------------------- conv, fc, pools

@converter("CONV_2D", max_version=8)
def convert_conv2d(g: Graph, op: Op):
    x, w = op.inputs[0], op.inputs[1]
    b = op.inputs[2] if len(op.inputs) > 2 else None
    hybrid_or_quantized(op, x, w)
    i16.zero_points(op, x, op.outputs[0])
    wv = constant(op, w, "filter")
    if wv.ndim != 4 or len(x.shape) != 4:
        raise op.error("CONV_2D needs a 4-D NHWC input and a 4-D OHWI filter")
    o, kh, kw, ci = wv.shape
    if x.shape[3] % ci:
        raise op.error(f"input channels {x.shape[3]} are not a multiple of filter channels {ci}")
    wd = weight(op, w, wv.transpose(0, 3, 1, 2), axis=0, tflite_axis=0)     # OHWI → OIHW
    y = call("nn.conv2d", real(g, x, op, TO_NCHW), wd, groups=x.shape[3] // ci, span=op.span,
             **window(op, x, (kh, kw)))
    bb = bias(op, b, o, (1, o, 1, 1))
    if bb is not None:
        y = call("add", y, bb, span=op.span)
    return finish(y, op, TO_NHWC)


@converter("DEPTHWISE_CONV_2D", max_version=7)
def convert_depthwise(g: Graph, op: Op):
    x, w = op.inputs[0], op.inputs[1]
    b = op.inputs[2] if len(op.inputs) > 2 else None
    hybrid_or_quantized(op, x, w)
    i16.zero_points(op, x, op.outputs[0])
    wv = constant(op, w, "filter")
    if len(x.shape) != 4 or wv.ndim != 4 or wv.shape[0] != 1:
        raise op.error("DEPTHWISE_CONV_2D needs a 4-D NHWC input and a [1, KH, KW, C*M] filter")
    _, kh, kw, oc = wv.shape
    c = x.shape[3]
    if oc % c:
        raise op.error(f"filter channels {oc} are not a multiple of input channels {c}")
    wd = weight(op, w, wv[0].transpose(2, 0, 1)[:, None], axis=0, tflite_axis=3)   # 1HWC → [C*M, 1, KH, KW]
    y = call("nn.conv2d", real(g, x, op, TO_NCHW), wd, groups=c, span=op.span, **window(op, x, (kh, kw)))
    bb = bias(op, b, oc, (1, oc, 1, 1))
    if bb is not None:
        y = call("add", y, bb, span=op.span)
    return finish(y, op, TO_NHWC)


@converter("FULLY_CONNECTED", max_version=12)
def convert_fully_connected(g: Graph, op: Op):
    x, w = op.inputs[0], op.inputs[1]
    b = op.inputs[2] if len(op.inputs) > 2 else None
    hybrid_or_quantized(op, x, w)
    if op.opt("weightsFormat", 0) != 0:
        raise op.error("shuffled weights (weights_format SHUFFLED4x16INT8) are not supported")
    wv = constant(op, w, "weights")
    if wv.ndim != 2 or math.prod(x.shape) % wv.shape[1]:
        raise op.error(f"weights {list(wv.shape)} do not fit input {list(x.shape)}")
    n, k = wv.shape
    xr = reshape(g.value(x), (math.prod(x.shape) // k, k), op.span)
    y = call("nn.matmul", dequantize(xr, x, op=op), weight(op, w, wv.T, axis=1, tflite_axis=0), span=op.span)
    bb = bias(op, b, n, (n,))
    if bb is not None:
        y = call("add", y, bb, span=op.span)
    return reshape(finish(y, op), op.outputs[0].shape, op.span)


def pool(g: Graph, op: Op, kind: str):
    x, out = op.inputs[0], op.outputs[0]
    if len(x.shape) != 4:
        raise op.error(f"{op.name} needs a 4-D NHWC input")
    kernel = (op.opt("filterHeight", 1), op.opt("filterWidth", 1))
    attrs = window(op, x, kernel)
    attrs = dict(pool_size=kernel, strides=attrs["strides"], padding=attrs["padding"], count_include_pad=False)
    if not is_quantized(x):
        y = call(f"nn.{kind}_pool2d", transpose(g.value(x), TO_NCHW, op.span), span=op.span, **attrs)
        return transpose(activation(y, out, op), TO_NHWC, op.span)
    # TFLM pools int8 / int16 values as they are (no rescale to the output's scale): max, or the rounded mean
    name = "nn.max_pool2d" if kind == "max" else "qnn.avg_pool2d"
    y = call(name, transpose(g.value(x), TO_NCHW, op.span), span=op.span, **attrs)
    return transpose(activation(y, out, op), TO_NHWC, op.span)


@converter("MAX_POOL_2D", max_version=3)
def convert_max_pool(g: Graph, op: Op):
    return pool(g, op, "max")


@converter("AVERAGE_POOL_2D", max_version=3)
def convert_avg_pool(g: Graph, op: Op):
    return pool(g, op, "avg")


# ----------------------------------------------------------------------------------------- element-wise

def binary_inputs(g: Graph, op: Op) -> tuple[Expr, Expr]:
    a, b = op.inputs[0], op.inputs[1]
    if a.dtype != b.dtype:
        raise op.error(f"operand types differ: {a.dtype} and {b.dtype}")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise op.error(f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast") from None
    return real(g, a, op), real(g, b, op)


@converter("ADD", max_version=5)
def convert_add(g: Graph, op: Op):
    return finish(call("add", *binary_inputs(g, op), span=op.span), op)


@converter("MUL", max_version=7)
def convert_mul(g: Graph, op: Op):
    i16.zero_points(op, *op.inputs[:2], op.outputs[0])
    return finish(call("multiply", *binary_inputs(g, op), span=op.span), op)


@converter("SUB", max_version=5)
def convert_sub(g: Graph, op: Op):
    a, b, out = op.inputs[0], op.inputs[1], op.outputs[0]
    if not is_quantized(out):
        return finish(call("subtract", *binary_inputs(g, op), span=op.span), op)
    binary_inputs(g, op)
    try:
        params = i8.sub_as_add(a.q, b.q, out.q, out.dtype)
    except ValueError as e:
        raise op.error(str(e)) from None
    y = call("qnn.add", g.value(a), g.value(b), a_zero_point=a.q[1], b_zero_point=b.q[1], out_zero_point=out.q[1],
             span=op.span, **params)
    return activation(y, out, op)


def unary(float_op: str, **attrs):
    def convert(g: Graph, op: Op):
        i16.check_logistic(op)
        return finish(call(float_op, real(g, op.inputs[0], op), span=op.span, **attrs), op)
    return convert


converter("LOGISTIC", max_version=3)(unary("sigmoid"))
converter("TANH", max_version=3)(unary("tanh"))


@converter("RELU", "RELU6", max_version=3)
def convert_relu(g: Graph, op: Op):
    """TFLM int8 RELU requantizes to the output's scale (float32 ratio) and clamps at the output's
    zero point; RELU6 clamps the raw input to [zp_in, min(127, zp_in + round(6 / s_in))] without
    rescaling (TFLM's FloatToQuantizedType saturates 6.0 to the int8 range)."""
    x, out = op.inputs[0], op.outputs[0]
    if not is_int8(out):
        if op.name == "RELU":
            return call("nn.relu", g.value(x), span=op.span)
        return call("clip", g.value(x), a_min=0.0, a_max=6.0, span=op.span)
    if op.name == "RELU6":
        six = min(127, i8.quantize_f32(6.0, *x.q))
        return call("clip", g.value(x), a_min=x.q[1], a_max=six, span=op.span)
    y = i8.requantize(g.value(x), float(F32(x.q[0]) / F32(out.q[0])), x.q[1], out.q[1], op.span)
    return call("clip", y, a_min=max(-128, out.q[1]), a_max=127, span=op.span)


@converter("HARD_SWISH", max_version=1)
def convert_hard_swish(g: Graph, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    if not is_int8(out):
        return call("hard_swish", g.value(x), span=op.span)
    try:
        table = i8.hard_swish_table(x.q, out.q)
    except ValueError as e:
        raise op.error(str(e)) from None
    return call("qnn.lut", g.value(x), table=table, span=op.span,
                real_fn=("hard_swish", (), *i8.real_q(x.q), *i8.real_q(out.q)))


@converter("LEAKY_RELU", max_version=2)
def convert_leaky_relu(g: Graph, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    alpha = float(op.opt("alpha", 0.2))
    if not is_int8(out):
        return call("nn.leaky_relu", g.value(x), alpha=alpha, span=op.span)
    return call("qnn.lut", g.value(x), table=i8.leaky_relu_table(x.q, out.q, alpha), span=op.span,
                real_fn=("nn.leaky_relu", (("alpha", alpha),), *i8.real_q(x.q), *i8.real_q(out.q)))


@converter("SOFTMAX", max_version=3)
def convert_softmax(g: Graph, op: Op):
    """Softmax over the last axis; beta scales the input (folded into the dequantize scale)."""
    x, out, beta = op.inputs[0], op.outputs[0], float(op.opt("beta", 1.0))
    if not is_quantized(x):
        y = g.value(x)
        if beta != 1.0:
            y = call("multiply", y, Constant(np.array(beta, np.float32)), span=op.span)
        return call("nn.softmax", y, axis=len(x.shape) - 1, span=op.span)
    s, z = x.q
    if not quant.softmax_supported(x.dtype, out.dtype, s * beta, z, *out.q):
        raise op.error(f"{x.dtype} → {out.dtype} softmax with output quantization {out.q} has no TFLM kernel "
                       "(int8 → int8, int8 → int16 (1/65536, -32768), int16 (zero point 0) → int16 (1/32768, 0))")
    xd = call("qnn.dequantize", g.value(x), scale=float(np.float32(s * beta)), zero_point=z, axis=0)
    return finish(call("nn.softmax", xd, axis=len(x.shape) - 1, span=op.span), op)


# ----------------------------------------------------------------------------------------- data movement

@converter("RESHAPE", max_version=1)
def convert_reshape(g: Graph, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    if math.prod(x.shape) != math.prod(out.shape):
        raise op.error(f"cannot reshape {list(x.shape)} to {list(out.shape)}")
    return reshape(g.value(x), out.shape, op.span)


@converter("SQUEEZE", max_version=2)
def convert_squeeze(g: Graph, op: Op):
    return convert_reshape(g, op)


@converter("TRANSPOSE", max_version=6)
def convert_transpose(g: Graph, op: Op):
    x = op.inputs[0]
    perm = [int(p) % max(len(x.shape), 1) for p in constant(op, op.inputs[1], "perm").reshape(-1)]
    if sorted(perm) != list(range(len(x.shape))):
        raise op.error(f"perm {perm} is not a permutation of the axes of {list(x.shape)}")
    return transpose(g.value(x), perm, op.span)


@converter("CONCATENATION", max_version=4)
def convert_concat(g: Graph, op: Op):
    xs = op.inputs
    rank = len(xs[0].shape)
    axis = op.opt("axis", 0)
    if not -rank <= axis < rank:
        raise op.error(f"axis {axis} out of range for rank {rank}")
    parts = [real(g, t, op) for t in xs]
    y = parts[0] if len(parts) == 1 else call("concatenate", *parts, axis=axis % rank, span=op.span)
    return finish(y, op)


@converter("PAD", "PADV2", max_version=4)
def convert_pad(g: Graph, op: Op):
    """Constant padding; int8 pads with the output zero point (PAD) or the given value (PADV2),
    as raw bytes (TFLM does not rescale)."""
    x, out = op.inputs[0], op.outputs[0]
    pads = constant(op, op.inputs[1], "paddings").astype(np.int64).reshape(-1, 2)
    if pads.shape[0] != len(x.shape) or pads.min() < 0:
        raise op.error(f"paddings {pads.tolist()} do not fit input {list(x.shape)}")
    value = op.inputs[2] if len(op.inputs) > 2 and op.inputs[2] is not None else None
    if is_quantized(x):       # TFLM pads int16 with 0 when no value is given (pad.cc), int8 with the zero point
        default = out.q[1] if is_int8(x) else 0
        pad_value = int(constant(op, value, "constant_values").reshape(-1)[0]) if value is not None else default
    else:
        pad_value = float(constant(op, value, "constant_values").reshape(-1)[0]) if value is not None else 0.0
    if not pads.any():
        return g.value(x)
    return call("nn.pad", g.value(x), pad_width=tuple(map(tuple, pads.tolist())), pad_value=pad_value, span=op.span)


@converter("MEAN", max_version=3)
def convert_mean(g: Graph, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    rank = len(x.shape)
    raw_axes = [int(a) for a in constant(op, op.inputs[1], "axis").reshape(-1)]
    if any(not -rank <= a < rank for a in raw_axes):
        raise op.error(f"axes {raw_axes} out of range for rank {rank}")
    axes = tuple(sorted({a % rank for a in raw_axes}))
    keep = bool(op.opt("keepDims", False))
    if not is_quantized(x):
        return call("mean", g.value(x), axes=axes, keepdims=keep, span=op.span)
    return reshape(i8.mean(g.value(x), axes, x.q, out.q, op.span, out.dtype), out.shape, op.span)


# ----------------------------------------------------------------------------------------- quantization

@converter("QUANTIZE", max_version=3)
def convert_quantize(g: Graph, op: Op):
    """int8 / int16 → int8 / int16: TFLM's requantize, exact. float → int8 / int16: qnn.quantize as
    TFLM's AffineQuantize (reference_ops/quantize.h): x / float(scale) in float32, rounded half away from
    zero. int8 / int16 → int32 and int8 → uint8: one requantize (legalize_qdq's boundary)."""
    x, out = op.inputs[0], op.outputs[0]
    if out.dtype in ("uint8", "int32") and is_quantized(x) and out.quantized:   # a uint8 / int32 model output
        return call("qnn.quantize", real(g, x, op), scale=out.q[0], zero_point=out.q[1], axis=1,
                    out_dtype=out.dtype, span=op.span)
    if not is_quantized(out):
        raise op.error(f"QUANTIZE to {out.dtype} is not supported (int8, int16, and uint8 / int32 from int8 / int16)")
    if x.dtype == "float32" and x.data is None:
        return call("qnn.quantize", g.value(x), scale=out.q[0], zero_point=out.q[1], axis=1, out_dtype=out.dtype,
                    rounding="half_away", span=op.span)
    return finish(real(g, x, op), op)


@converter("DEQUANTIZE", max_version=6)
def convert_dequantize(g: Graph, op: Op):
    x = op.inputs[0]
    if x.dtype == "float16":
        return g.value(x)                            # fp16 weights: a float32 Constant
    if x.dtype not in ("int8", "int16"):
        raise op.error(f"DEQUANTIZE of {x.dtype} is not supported (int8, int16, float16)")
    if x.data is not None:                           # int8 weights of a float op: folded at compile time
        return dequantize(g.value(x), x, axis=x.axis, op=op)
    return real(g, x, op)
