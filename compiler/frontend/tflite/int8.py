"""TFLM int8 arithmetic the QDQ pattern does not express, computed at compile time for the TFLite
frontend (tensorflow/lite/micro/kernels/*_common.cc and kernels/internal/reference/*.h):

- fused activation clamps (CalculateActivationRangeQuantized: float32 division, round half away);
- SUB (sub_common.cc: multipliers from float32 arithmetic) as ``qnn.add`` with the second input's
  multiplier negated, proved equal to TFLM on all 65,536 input pairs before it is used
  (``quant.sub_as_add``, shared with legalize_qdq);
- HARD_SWISH and LEAKY_RELU as 256-entry tables filled by TFLM's own integer code;
- MEAN (QuantizedMeanOrSum) as an int32 sum (a depthwise conv with a ones kernel and the input
  zero point as its offset) followed by one requantize with 1/n folded into the multiplier
  (``ops/reduce_int8.quantized_mean``, shared with legalize_qdq).
"""
from __future__ import annotations

import math

import numpy as np

from ... import quant
from ...ir import Constant, Expr, call
from ...ops.reduce_int8 import quantized_mean

F32 = np.float32
INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1

#: real bounds of the clamping fused activations and ops
ACTIVATION_BOUNDS = {"RELU": (0.0, None), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}


def round_away(x: float) -> int:
    """std::round / TfLiteRound."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def quantize_f32(value: float, scale: float, zero_point: int) -> int:
    """zero_point + round(value / scale), the division in float32 as TFLM does it."""
    return zero_point + round_away(float(F32(value) / F32(scale)))


def real_q(q) -> tuple[float, int]:
    """(scale as TFLM stores it, in float32 widened to float64, zero point): the real facts of a
    tensor's quantization for the real-arithmetic oracle (qnn.lut ``real_fn``)."""
    return float(F32(q[0])), int(q[1])


def activation_range(act: str, scale: float, zero_point: int, dtype: str = "int8") -> tuple[int, int]:
    """[act_min, act_max] of a fused activation on an int8 / int16 output (CalculateActivationRangeQuantized)."""
    info = np.iinfo(dtype)
    lo_real, hi_real = ACTIVATION_BOUNDS[act]
    lo = max(int(info.min), quantize_f32(lo_real, scale, zero_point))
    hi = int(info.max) if hi_real is None else min(int(info.max), quantize_f32(hi_real, scale, zero_point))
    return lo, hi


def requantize(x: Expr, real: float, zp_in: int, zp_out: int, span: str = "") -> Expr:
    """qnn.requantize by one real multiplier (double rounding); ``x`` itself for the identity."""
    if real == 1.0 and zp_in == zp_out:
        return x
    m, sh = quant.quantize_multiplier(real)
    return call("qnn.requantize", x, Constant(np.array(m, np.int32)), Constant(np.array(sh, np.int32)),
                input_zero_point=zp_in, output_zero_point=zp_out, span=span, real_multiplier=(float(real),))


# ----------------------------------------------------------------------------------------- SUB

sub_as_add = quant.sub_as_add        # moved to quant.py (shared with legalize_qdq)


# ----------------------------------------------------------------------------------------- HARD_SWISH

def _i16(v: int) -> int:
    """static_cast<int16_t>: two's complement wrap."""
    return ((v + (1 << 15)) & 0xFFFF) - (1 << 15)


def _tdiv(a: int, b: int) -> int:
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _srdhm16(a: int, b: int) -> int:
    """gemmlowp::SaturatingRoundingDoublingHighMul on int16."""
    if a == b == INT16_MIN:
        return INT16_MAX
    ab = a * b
    nudge = (1 << 14) if ab >= 0 else 1 - (1 << 14)
    return _i16(_tdiv(ab + nudge, 1 << 15))


def _sdhm16(a: int, b: int) -> int:
    """SaturatingDoublingHighMul (hard_swish.h): truncating, no nudge."""
    if a == b == INT16_MIN:
        return INT16_MAX
    return _i16(_tdiv(a * b, 1 << 15))


def _rdbp(x: int, e: int) -> int:
    mask = (1 << e) - 1
    return (x >> e) + ((x & mask) > (mask >> 1) + (1 if x < 0 else 0))


def _sat_left_shift16(v: int, amount: int) -> int:
    return max(INT16_MIN, min(INT16_MAX, v * (1 << amount)))


def _to_int16_multiplier(m: int) -> int:
    """DownScaleInt32ToInt16Multiplier."""
    return INT16_MAX if m >= (1 << 31) - 1 - (1 << 15) else (m + (1 << 15)) >> 16


def hard_swish_table(in_q, out_q) -> np.ndarray:
    """TFLM's int8 HARD_SWISH (HardSwishPrepare + reference_ops::HardSwish) on all 256 inputs."""
    hires = F32(1.0 / 128.0) * F32(in_q[0])
    out_m, out_e = quant.quantize_multiplier(float(hires / F32(out_q[0])))
    relu_m, relu_e = quant.quantize_multiplier(float(hires / F32(3.0 / 32768.0)))
    if out_e > 0:
        raise ValueError("int8 HARD_SWISH needs output_scale >= input_scale / 128 (TFLM refuses the model)")
    out_m16, relu_m16 = _to_int16_multiplier(out_m), _to_int16_multiplier(relu_m)
    table = []
    for q in range(-128, 128):
        v = _i16(q - in_q[1]) * (1 << 7)
        preshift = _srdhm16(v, out_m16)
        r = v
        if relu_e > 0:
            r = _sat_left_shift16(r, relu_e - 1)
        r = _srdhm16(r, relu_m16)
        if relu_e > 0:
            r = _sat_left_shift16(r, 1)
        if relu_e < 0:
            r = _rdbp(r, -relu_e)
        r = (r + (1 << 15)) >> 1
        y = _i16(_rdbp(_sdhm16(r, preshift), -out_e) + out_q[1])
        table.append(min(127, max(-128, y)))
    return np.array(table, np.int8)


# ----------------------------------------------------------------------------------------- LEAKY_RELU

def leaky_relu_table(in_q, out_q, alpha: float) -> np.ndarray:
    """TFLM's int8 LEAKY_RELU (CalculateOpDataLeakyRelu + QuantizeLeakyRelu) on all 256 inputs."""
    m_id, sh_id = quant.quantize_multiplier(float(F32(in_q[0]) / F32(out_q[0])))
    alpha_real = float(F32(in_q[0]) * F32(alpha) / F32(out_q[0]))
    m_a, sh_a = quant.quantize_multiplier(abs(alpha_real))
    x = np.arange(-128, 128, dtype=np.int64) - in_q[1]
    pos = quant.mbqm(x, m_id, sh_id)
    neg = quant.mbqm(x, m_a, sh_a) * (-1 if alpha_real < 0 else 1)
    return quant.saturate(np.where(x >= 0, pos, neg) + out_q[1])


# ----------------------------------------------------------------------------------------- MEAN

mean = quantized_mean                 # moved to ops/reduce_int8.py (shared with legalize_qdq)
