"""ONNX quantization ops → IR.

QDQ (QuantizeLinear-13 / DequantizeLinear-13) map to ``qnn.quantize`` / ``qnn.dequantize``; the
``legalize_qdq`` pass later turns dequantize → float op → quantize into int8 kernels. QOperator ops
(QLinearConv, QLinearMatMul, and the com.microsoft ops onnxruntime.quantization writes) are expanded
here into the same QDQ form, so one pass legalizes both:

    QLinearConv(x, sx, zx, W, sw, zw, sy, zy, B)  →  quantize(conv(dq(x), dq(W)) + dq(B), sy, zy)

Activations are int8 or uint8 (legalize_qdq first shifts uint8 tensors to int8 with zero point
z − 128, exactly: passes/shift_uint8.py), or int16 in QDQ form (16x8, onnxruntime's QInt16 activations:
legalize_qdq's int16 rules); anything else is a clear error.
"""
from __future__ import annotations

import copy

import numpy as np

from ...ir import Constant, Expr, call
from .registry import CONVERTERS, Node, const_value, converter, scalar_value

QUANT_DTYPES = ("int8", "uint8", "int16", "int32")
MS_DOMAIN_OPS = {"QLinearAdd", "QLinearMul", "QLinearGlobalAveragePool", "QLinearSoftmax", "QGemm",
                 "QLinearSigmoid", "QLinearConcat"}
# (fewest, most) inputs the converters below read, trailing optional inputs included (onnxruntime's
# contrib-op schemas: ContribDefs.md); a QLinearConcat has Y's scale and zero point, then triples
MS_DOMAIN_INPUTS = {"QLinearAdd": (8, 8), "QLinearMul": (8, 8), "QLinearGlobalAveragePool": (5, 5),
                    "QLinearSoftmax": (5, 5), "QLinearSigmoid": (5, 5), "QGemm": (6, 9), "QLinearConcat": (5, None)}


def check_ms_inputs(node: Node) -> None:
    """TinyfuseError unless a com.microsoft node has the input count its converter reads (these ops
    have no schema in the onnx package, so check_schema cannot count them)."""
    lo, hi = MS_DOMAIN_INPUTS.get(node.op_type, (0, None))
    n = len(node.proto.input)
    if n < lo or (hi is not None and n > hi) or (node.op_type == "QLinearConcat" and (n - 2) % 3):
        want = f"{lo}" if lo == hi else f"{lo} + 3k" if node.op_type == "QLinearConcat" else f"{lo} to {hi}"
        raise node.error(f"has {n} inputs, expected {want}")


def _params(node: Node, scale: Expr, zp: Expr | None, dtype: str):
    s = const_value(node, scale, "scale").astype(np.float32)
    if s.size == 0 or not np.all(np.isfinite(s) & (s > 0)):
        raise node.error(f"quantization scale {s.reshape(-1)[:4].tolist()} is not positive and finite")
    z = const_value(node, zp, "zero_point") if zp is not None else np.zeros((), dtype)
    if z.dtype == np.uint16 or dtype == "uint16":
        raise node.error("uint16 quantization is not supported", "quantize activations to int8 or int16 (16x8)")
    s = float(s.reshape(())) if s.size == 1 else s
    z = int(z.reshape(())) if z.size == 1 else z.astype(np.int64)
    return s, z


def dequantize(node: Node, x: Expr, scale: Expr, zp: Expr | None, axis: int = 1) -> Expr:
    if x.ty.dtype not in QUANT_DTYPES:
        raise node.error(f"DequantizeLinear of {x.ty.dtype} is not supported (int8, uint8, int16, int32 only)")
    s, z = _params(node, scale, zp, x.ty.dtype)
    if (np.ndim(s) or np.ndim(z)) and not isinstance(x, Constant):
        raise node.error("per-axis dequantization of an activation is not supported (weights only)")
    axis = axis % max(x.ty.ndim, 1)
    for what, v in (("scale", s), ("zero_point", z)):
        if np.ndim(v) and (x.ty.ndim == 0 or np.size(v) != x.ty.shape[axis]):
            raise node.error(f"per-axis {what} of {np.size(v)} values for axis {axis} of {list(x.ty.shape)}")
    return call("qnn.dequantize", x, scale=s, zero_point=z, axis=axis, span=node.name)


def quantize(node: Node, x: Expr, scale: Expr, zp: Expr | None, axis: int = 1) -> Expr:
    out_dtype = str(const_value(node, zp, "zero_point").dtype) if zp is not None else "uint8"
    if out_dtype not in ("int8", "uint8", "int16"):
        raise node.error(f"QuantizeLinear to {out_dtype} is not supported (int8, uint8, int16 only)")
    s, z = _params(node, scale, zp, out_dtype)
    if np.ndim(s) or np.ndim(z):
        raise node.error("per-axis quantization of an activation is not supported")
    return call("qnn.quantize", x, scale=s, zero_point=z, axis=axis % max(x.ty.ndim, 1), out_dtype=out_dtype,
                span=node.name)


def convert_dequantize(node: Node, args):
    """DequantizeLinear with per-tensor or weight parameters (quant_axis.convert_dequantize_axis, the
    registered one, calls it)."""
    return dequantize(node, args[0], args[1], args[2] if len(args) > 2 else None, node.attr("axis", 1))


def convert_quantize(node: Node, args):
    """QuantizeLinear with per-tensor or weight parameters (quant_axis.convert_quantize_axis calls it)."""
    return quantize(node, args[0], args[1], args[2] if len(args) > 2 else None, node.attr("axis", 1))


def _int8_activation(node: Node, x: Expr):
    if x.ty.dtype not in ("int8", "uint8"):
        raise node.error(f"{x.ty.dtype} activations have no kernel (int8 and uint8 only)",
                         "quantize with activation_type=QInt8 or QUInt8")


@converter("QLinearConv")
def convert_qlinear_conv(node: Node, args):
    x, sx, zx, w, sw, zw, sy, zy = args[:8]
    _int8_activation(node, x)
    xd = dequantize(node, x, sx, zx)
    wd = dequantize(node, w, sw, zw, axis=0)
    conv_args = [xd, wd]
    if len(args) > 8 and args[8] is not None:
        bias_scale = const_value(node, sx, "x_scale").astype(np.float64) * const_value(node, sw, "w_scale")
        conv_args.append(call("qnn.dequantize", args[8], scale=bias_scale.astype(np.float32).reshape(-1)
                              if bias_scale.size > 1 else float(bias_scale.reshape(())), zero_point=0, axis=0))
    return quantize(node, CONVERTERS["Conv"](node, conv_args), sy, zy)


@converter("QLinearMatMul")
def convert_qlinear_matmul(node: Node, args):
    a, sa, za, b, sb, zb, sy, zy = args
    _int8_activation(node, a)
    y = CONVERTERS["MatMul"](node, [dequantize(node, a, sa, za), dequantize(node, b, sb, zb, axis=1)])
    return quantize(node, y, sy, zy)


@converter("QGemm")
def convert_qgemm(node: Node, args):
    a, sa, za, b, sb, zb = args[:6]
    _int8_activation(node, a)
    c = args[6] if len(args) > 6 else None
    ins = [dequantize(node, a, sa, za), dequantize(node, b, sb, zb, axis=0 if node.attr("transB", 0) else 1)]
    if c is not None:
        cs = const_value(node, sa, "a_scale").astype(np.float64) * const_value(node, sb, "b_scale")
        ins.append(call("qnn.dequantize", c, scale=cs.astype(np.float32).reshape(-1) if cs.size > 1
                        else float(cs.reshape(())), zero_point=0, axis=0))
    y = CONVERTERS["Gemm"](node, ins)
    if len(args) > 7 and args[7] is not None:
        return quantize(node, y, args[7], args[8] if len(args) > 8 else None)
    return y


def _binary(op_type):
    def convert(node: Node, args):
        a, sa, za, b, sb, zb, sy, zy = args
        _int8_activation(node, a)
        y = CONVERTERS[op_type](_as(node, op_type), [dequantize(node, a, sa, za), dequantize(node, b, sb, zb)])
        return quantize(node, y, sy, zy)
    return convert


def _as(node: Node, op_type: str) -> Node:
    """The same node seen as its float op type (for the float converters' error messages)."""
    clone = copy.copy(node)     # keeps the declared opset the errors name
    clone.op_type = op_type
    return clone


converter("QLinearAdd")(_binary("Add"))
converter("QLinearMul")(_binary("Mul"))


@converter("QLinearGlobalAveragePool")
def convert_qlinear_gap(node: Node, args):
    x, sx, zx, sy, zy = args
    _int8_activation(node, x)
    if node.attr("channels_last", 0):
        raise node.error("channels_last=1 is not supported")
    return quantize(node, CONVERTERS["GlobalAveragePool"](node, [dequantize(node, x, sx, zx)]), sy, zy)


@converter("QLinearSoftmax")
def convert_qlinear_softmax(node: Node, args):
    x, sx, zx, sy, zy = args
    _int8_activation(node, x)
    return quantize(node, CONVERTERS["Softmax"](node, [dequantize(node, x, sx, zx)]), sy, zy)


@converter("QLinearSigmoid")
def convert_qlinear_sigmoid(node: Node, args):
    x, sx, zx, sy, zy = args
    _int8_activation(node, x)
    return quantize(node, call("sigmoid", dequantize(node, x, sx, zx), span=node.name), sy, zy)


@converter("QLinearConcat")
def convert_qlinear_concat(node: Node, args):
    sy, zy, rest = args[0], args[1], args[2:]
    parts = [dequantize(node, rest[i], rest[i + 1], rest[i + 2]) for i in range(0, len(rest), 3)]
    for p in parts:
        _int8_activation(node, p.args[0])
    return quantize(node, CONVERTERS["Concat"](node, parts), sy, zy)




def _weight_minus_zero_point(node: Node, w: Expr, zw: Expr | None, axis: int) -> np.ndarray:
    """w − zw as int16 (exact for int8/uint8 weights and any per-channel zero point)."""
    wv = const_value(node, w, "weight").astype(np.int16)
    if zw is None:
        return wv
    z = const_value(node, zw, "weight zero point").astype(np.int16)
    if z.size > 1:
        shape = [1] * wv.ndim
        shape[axis] = z.size
        z = z.reshape(shape)
    return (wv - z).astype(np.int16)


@converter("ConvInteger")
def convert_conv_integer(node: Node, args):
    """ConvInteger-10: int32 Σ (x − x_zp)(w − w_zp[c]) → qnn.conv2d on (w − w_zp) int16 weights."""
    x, w = args[0], args[1]
    zx = args[2] if len(args) > 2 else None
    zw = args[3] if len(args) > 3 else None
    wz = _weight_minus_zero_point(node, w, zw, axis=0)
    zxv = int(scalar_value(node, zx, "x zero point")) if zx is not None else 0
    y = CONVERTERS["Conv"](_as(node, "Conv"), [x, Constant(wz.astype(np.float32))])
    conv = y if y.op == "nn.conv2d" else y.args[0]
    q = call("qnn.conv2d", x, Constant(wz), input_zero_point=zxv, span=node.name,
             **{k: v for k, v in conv.attrs.items()})
    return q if y.op == "nn.conv2d" else call("reshape", q, newshape=y.ty.shape, span=node.name)


@converter("MatMulInteger")
def convert_matmul_integer(node: Node, args):
    """MatMulInteger-10: int32 Σ (a − a_zp)(b − b_zp[n]) with a constant 2-D b → qnn.matmul."""
    a, b = args[0], args[1]
    za = args[2] if len(args) > 2 else None
    zb = args[3] if len(args) > 3 else None
    if not isinstance(b, Constant) or b.ty.ndim != 2:
        raise node.error(f"B must be a constant 2-D weight, got {list(b.ty.shape)}")
    if za is not None and const_value(node, za, "a zero point").size > 1:
        raise node.error("a per-row zero point of A is not supported")
    bz = _weight_minus_zero_point(node, b, zb, axis=1)
    zav = int(scalar_value(node, za, "a zero point")) if za is not None else 0
    return call("qnn.matmul", a, Constant(bz), input_zero_point=zav, span=node.name)
