"""Quantized (int8) ops: the TFLite int8 spec / CMSIS-NN arithmetic (../shared/docs/QUANT.md), with
the numpy reference in ``tinyfuse.quant``. ``legalize_qdq`` produces them from QDQ graphs:

    dequantize → conv2d → add(bias) → relu → quantize
        becomes  qnn.conv2d (int32) → add(int32 bias) → qnn.requantize (int8) → clip (int8)

so after fuse_ops each kernel is one anchor plus exactly one requantize + clamp epilogue.
Array-valued attributes (LUT tables) are emitted as const arrays in flash.
"""
from __future__ import annotations

import numpy as np

from .. import quant
from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType
from .conv import Conv2D
from .elemwise import broadcast_type
from .pool import Pool2D, pool_out_size
from .qnn_int16 import softmax_int16


def _per_axis(v, x: np.ndarray, axis):
    """Broadcast a per-tensor or per-axis parameter against x (ONNX QuantizeLinear-13 ``axis``)."""
    v = np.asarray(v)
    if v.ndim == 0 or v.size == 1:
        return v.reshape(())
    shape = [1] * x.ndim
    shape[axis % x.ndim] = v.size
    return v.reshape(shape)


@register_op
class Quantize(OpDef):
    """q = saturate(round(x / scale) + zero_point), x / scale in float32; ``rounding`` "half_even"
    (ONNX QuantizeLinear-13) or "half_away" (TFLite's AffineQuantize: ``TfLiteRound`` = std::round,
    ties away from zero, reference_ops/quantize.h)."""
    name, c_expr, pattern, num_inputs = "qnn.quantize", "quantize", OpPattern.ELEMWISE, 1
    attrs = {"scale": 1.0, "zero_point": 0, "axis": 1, "out_dtype": "int8", "rounding": "half_even"}

    def infer(self, args, attrs):
        if attrs["rounding"] not in ("half_even", "half_away"):
            raise TinyfuseError(f"qnn.quantize rounding {attrs['rounding']!r} (half_even or half_away)")
        return TensorType(args[0].shape, attrs["out_dtype"])

    def compute(self, x, scale, zero_point, axis, out_dtype, rounding="half_even"):
        s = _per_axis(np.float32(scale) if np.ndim(scale) == 0 else np.asarray(scale, np.float32), x, axis)
        z = _per_axis(zero_point, x, axis)
        v = (x.astype(np.float32) / s).astype(np.float64)
        q = (np.rint(v) if rounding == "half_even" else np.sign(v) * np.floor(np.abs(v) + 0.5)) + z
        return quant.saturate(q, out_dtype)


@register_op
class Dequantize(OpDef):
    """x = (q - zero_point) * scale in float32 (ONNX DequantizeLinear-13)."""
    name, c_expr, pattern, num_inputs = "qnn.dequantize", "dequantize", OpPattern.ELEMWISE, 1
    attrs = {"scale": 1.0, "zero_point": 0, "axis": 1}

    def infer(self, args, attrs):
        return TensorType(args[0].shape, "float32")

    def compute(self, q, scale, zero_point, axis):
        s = _per_axis(np.asarray(scale, np.float32), q, axis)
        z = _per_axis(zero_point, q, axis)
        return ((q.astype(np.int64) - z).astype(np.float32) * s).astype(np.float32)


ACC_DTYPES = ("int32", "int64")


class Int32Accumulation:
    """Mixin of the integer twin of a conv-like float op: the same op on (x − input_zero_point) and the
    int8 weights in int64, returned as the accumulator (before bias and requantize): int32, or int64
    (``acc_dtype``) for TFLM's 16x8 kernels with an int64 bias (int16 input, reference_integer_ops
    ConvPerChannel<int64_t>)."""

    accumulates = True

    def infer(self, args, attrs):
        t = super().infer(args, attrs)
        if attrs.get("acc_dtype", "int32") not in ACC_DTYPES:
            raise TinyfuseError(f"{self.name}: accumulator {attrs['acc_dtype']} (int32 or int64)")
        return TensorType(t.shape, attrs.get("acc_dtype", "int32"))

    def compute(self, x, w, input_zero_point, acc_dtype="int32", **attrs):
        acc = super().compute(x.astype(np.int64) - input_zero_point, w.astype(np.int64), **attrs)
        return acc.astype(acc_dtype)


@register_op
class QConv2D(Int32Accumulation, Conv2D):
    """int32 acc = Σ (x − input_zero_point) · w over the real (unpadded) taps (CMSIS-NN
    arm_convolve_s8 without its output stage). Weights int8, symmetric."""
    name = "qnn.conv2d"
    attrs = {**Conv2D.attrs, "input_zero_point": 0, "acc_dtype": "int32"}


@register_op
class QMatMul(OpDef):
    """acc[..., n] = Σ_k (a[..., k] − input_zero_point) · b[k, n] (arm_fully_connected_s8 core), int32
    or, ``acc_dtype`` int64, TFLM's 16x8 FULLY_CONNECTED with an int64 bias."""
    name, pattern, num_inputs = "qnn.matmul", OpPattern.OUT_ELEMWISE_FUSABLE, 2
    accumulates, horizontal, cost_feature, cost_family = True, "matmul", True, "dense"
    attrs = {"input_zero_point": 0, "acc_dtype": "int32"}

    def infer(self, args, attrs):
        a, b = args
        if b.ndim != 2 or a.shape[-1] != b.shape[0] or attrs.get("acc_dtype", "int32") not in ACC_DTYPES:
            raise TinyfuseError(f"qnn.matmul: shapes {a.shape} x {b.shape}, accumulator {attrs.get('acc_dtype')} "
                                "unsupported")
        return TensorType(a.shape[:-1] + (b.shape[1],), attrs.get("acc_dtype", "int32"))

    def compute(self, a, b, input_zero_point, acc_dtype="int32"):
        return np.matmul(a.astype(np.int64) - input_zero_point, b.astype(np.int64)).astype(acc_dtype)


@register_op
class Requantize(OpDef):
    """y = saturate(MBQM(x − input_zero_point, multiplier, shift) + output_zero_point): multiplier
    (Q31) and shift are int32 tensors broadcast against x (per-channel or per-tensor). An int64 x (the
    accumulator of a 16x8 kernel with an int64 bias) takes TFLM's 64-bit form (``quant.mbqm64``)
    whatever ``rounding`` says.

    ``real_multiplier`` (tuple of float64, one per element of ``multiplier``, or None) is the real
    value M the Q31 pair encodes (e.g. s_x·s_w[c]/s_out): the C ignores it; the independent real-
    arithmetic oracle (harness/real_oracle.py) computes round((x − zp_in)·M) + zp_out with it."""
    name, c_expr, pattern, num_inputs = "qnn.requantize", "requantize", OpPattern.BROADCAST, 3
    cost_feature, cost_family = True, "elemwise"
    attrs = {"input_zero_point": 0, "output_zero_point": 0, "rounding": "double", "out_dtype": "int8",
             "real_multiplier": None}

    def infer(self, args, attrs):
        t = broadcast_type(args, self.name)
        return TensorType(t.shape, attrs["out_dtype"])

    def compute(self, x, multiplier, shift, input_zero_point, output_zero_point, rounding, out_dtype,
                real_multiplier=None):
        acc = x.astype(np.int64) - input_zero_point
        y = quant.mbqm64(acc, multiplier, shift) if x.dtype == np.int64 else \
            quant.requantize(acc, multiplier, shift, rounding)
        return quant.saturate(y + output_zero_point, out_dtype)


@register_op
class QAdd(OpDef):
    """TFLite reference int8 / int16 ADD (QUANT.md): both inputs rescaled to 2·max(s1, s2) with
    ``left_shift`` bits of headroom (20 for int8, 15 for int16), summed (``subtract``: the second
    subtracted, TFLM's int16 SUB), requantized once. Parameters from ``quant.add_params``. ``real_scales``
    (s_a, s_b, s_out) as float64, or None, is for the real-arithmetic oracle only (a SUB has −s_b):
    real y = (a − za)·s_a + (b − zb)·s_b; the C ignores it."""
    name, c_expr, pattern, num_inputs = "qnn.add", "qadd", OpPattern.BROADCAST, 2
    cost_feature, cost_family = True, "elemwise"
    attrs = {"a_zero_point": 0, "b_zero_point": 0, "out_zero_point": 0,
             "m1": 0, "sh1": 0, "m2": 0, "sh2": 0, "mo": 0, "sho": 0, "real_scales": None, "left_shift": 20,
             "subtract": False}

    def infer(self, args, attrs):
        return broadcast_type(args, self.name)

    def compute(self, a, b, a_zero_point, b_zero_point, out_zero_point, real_scales=None, **p):
        return quant.saturate(quant.qadd(a, a_zero_point, b, b_zero_point, out_zero_point, p), a.dtype)


@register_op
class QMul(OpDef):
    """TFLite reference int8 / int16 MUL: MBQM((a − za)(b − zb), s_a·s_b/s_out) + z_out. ``real_scales``
    (s_a, s_b, s_out) as float64, or None, is for the real-arithmetic oracle only; the C ignores it."""
    name, c_expr, pattern, num_inputs = "qnn.mul", "qmul", OpPattern.BROADCAST, 2
    attrs = {"a_zero_point": 0, "b_zero_point": 0, "out_zero_point": 0, "multiplier": 0, "shift": 0,
             "real_scales": None}

    def infer(self, args, attrs):
        return broadcast_type(args, self.name)

    def compute(self, a, b, a_zero_point, b_zero_point, out_zero_point, multiplier, shift, real_scales=None):
        return quant.saturate(quant.qmul(a, a_zero_point, b, b_zero_point, out_zero_point, multiplier, shift), a.dtype)


@register_op
class LUT(OpDef):
    """y = table[x + 128]: any int8 → int8 unary function (sigmoid, tanh, hard-swish ...) as a
    256-entry table computed at compile time (TFLM LOGISTIC/TANH match a float-computed LUT).
    ``real_fn`` (float op name, its attrs as sorted (key, value) pairs, s_in, z_in, s_out, z_out), or
    None, is for the real-arithmetic oracle only: y = quantize(f(dequantize(x))); the C ignores it."""
    name, c_expr, pattern, num_inputs = "qnn.lut", "lut", OpPattern.ELEMWISE, 1
    attrs = {"table": None, "real_fn": None}

    def infer(self, args, attrs):
        return args[0]

    def compute(self, x, table, real_fn=None):
        return np.asarray(table, np.int8)[x.astype(np.int64) + 128]


@register_op
class QSoftmax(OpDef):
    """int8 softmax along `axis`. With output (1/256, -128), the only one TFLite allows, it is TFLM's
    fixed-point kernel bit for bit (quant.softmax_int8: gemmlowp exp, Q12.19 sum, reciprocal).
    Any other output quantization (possible in ONNX QDQ models, e.g. onnxruntime's 1/255) has no TFLM
    counterpart: quant.softmax_int8_table, integer only (256-entry exp tables per input scale, a 64-bit
    sum, an exact division rounding half to even as ONNX QuantizeLinear), equal to the float64 ONNX
    reference on every tested row (tests/c/test_int8_softmax_any_scale.py). ``out_dtype`` int16 (None: the
    input's dtype): TFLM's int8 → int16 kernel (output (1/65536, -32768)) or, for an int16 input, its
    int16 table kernel (ops/qnn_int16.py, output (1/32768, 0))."""
    name, pattern, num_inputs = "qnn.softmax", OpPattern.OPAQUE, 1
    cost_feature, cost_family = True, "softmax"
    attrs = {"axis": -1, "in_scale": 1.0, "in_zero_point": 0, "out_scale": 1.0 / 256, "out_zero_point": -128,
             "out_dtype": None}

    def infer(self, args, attrs):
        out = attrs.get("out_dtype") or args[0].dtype
        if not quant.softmax_supported(args[0].dtype, out, attrs["in_scale"], attrs["in_zero_point"],
                                       attrs["out_scale"], attrs["out_zero_point"]):
            raise TinyfuseError(f"qnn.softmax: {args[0].dtype} → {out} with these quantizations has no TFLM kernel")
        return TensorType(args[0].shape, out)

    def compute(self, x, axis, in_scale, in_zero_point, out_scale, out_zero_point, out_dtype=None):
        if x.dtype == np.int16:
            return softmax_int16(x, in_scale, axis=axis)
        if out_dtype == "int16":
            return quant.softmax_int8(x, quant.softmax_params(in_scale), axis=axis, out_dtype="int16")
        if quant.softmax_is_fixed_point(in_scale, out_scale, out_zero_point):
            return quant.softmax_int8(x, quant.softmax_params(in_scale), axis=axis)
        return quant.softmax_int8_table(x, in_scale, out_scale, out_zero_point, axis=axis)


@register_op
class QAvgPool2D(Pool2D):
    """int8 average pool (TFLM reference): int32 sum of the real taps divided by their count with
    rounding half away from zero. Input and output share (scale, zero_point); padded taps and the
    ceil_mode tail are not counted (count_include_pad=0 only)."""
    name = "qnn.avg_pool2d"
    cost_feature = True

    def infer(self, args, attrs):
        if attrs["count_include_pad"] and any(attrs["padding"]):
            raise TinyfuseError("qnn.avg_pool2d: count_include_pad=1 with padding has no int8 kernel")
        if tuple(attrs.get("dilation", (1, 1))) != (1, 1):
            raise TinyfuseError(f"qnn.avg_pool2d: dilation {attrs['dilation']} has no int8 kernel")
        return super().infer(args, attrs)

    def compute(self, x, pool_size, strides, padding, ceil_mode, count_include_pad, layout, dilation=(1, 1),
                input_layout=None):
        xn = x.astype(np.int64) if (input_layout or layout) == "NCHW" else x.astype(np.int64).transpose(0, 3, 1, 2)
        n, c, h, w = xn.shape
        (kh, kw), (sh, sw), (pt, pl, pb, pr) = pool_size, strides, padding
        oh, ow = pool_out_size(h, kh, sh, pt, pb, ceil_mode), pool_out_size(w, kw, sw, pl, pr, ceil_mode)
        total = np.zeros((n, c, oh, ow), np.int64)
        cnt = np.zeros((oh, ow), np.int64)
        for i in range(oh):
            for j in range(ow):
                r0, r1 = max(i * sh - pt, 0), min(i * sh - pt + kh, h)
                c0, c1 = max(j * sw - pl, 0), min(j * sw - pl + kw, w)
                total[:, :, i, j] = xn[:, :, r0:r1, c0:c1].sum(axis=(2, 3))
                cnt[i, j] = (r1 - r0) * (c1 - c0)
        q = np.where(total > 0, (total + cnt // 2) // cnt, -((-total + cnt // 2) // cnt))
        q = quant.saturate(q, x.dtype)
        return q if layout == "NCHW" else q.transpose(0, 2, 3, 1)
