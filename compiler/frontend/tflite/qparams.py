"""TFLM's int8 parameters and tables of the element-wise ops, computed at compile time as TFLM's Prepare
does (float32 where TFLM computes in float, QuantizeMultiplier on the double it then builds):

- ABS and RSQRT (kernels/elementwise.cc) and ELU (kernels/elu.cc) as 256-entry tables: TFLM's own
  per-value integer arithmetic (ABS, RSQRT: GetInvSqrtQuantizedMultiplierExp, gemmlowp fixed point)
  or float32 arithmetic (ELU's PopulateLookupTable) run here on every int8 input, in Python integers
  with TFLM's int32 wrap-around, so each table is TFLM's result by construction;
- the multipliers of qnn.compare, qnn.squared_difference, qnn.add_n and qnn.div (ops/qelemwise.py).

Every function raises ValueError where TFLM refuses the parameters (its TFLITE_CHECKs).
"""
from __future__ import annotations

import math

import numpy as np

from ... import quant

F32 = np.float32
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


# ----------------------------------------------------------------------------------------- int32 arithmetic

def wrap32(v: int) -> int:
    return ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def srdhm(a: int, b: int) -> int:
    """gemmlowp SaturatingRoundingDoublingHighMul."""
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    t = ab + ((1 << 30) if ab >= 0 else 1 - (1 << 30))
    return t // (1 << 31) if t >= 0 else -((-t) // (1 << 31))


def rdbp(x: int, e: int) -> int:
    """gemmlowp RoundingDivideByPOT."""
    mask = (1 << e) - 1
    return (x >> e) + ((x & mask) > (mask >> 1) + (1 if x < 0 else 0))


def sat_shl(x: int, e: int) -> int:
    """gemmlowp SaturatingRoundingMultiplyByPOT<e> for e > 0."""
    thr = (1 << (31 - e)) - 1
    return INT32_MAX if x > thr else INT32_MIN if x < -thr else x << e


def mbqm(x: int, m: int, shift: int) -> int:
    """TFLM MultiplyByQuantizedMultiplier (double rounding), its int32 left shift wrapping."""
    return rdbp(srdhm(wrap32(x * (1 << max(shift, 0))), m), max(-shift, 0))


def multiplier_below_one(real: float) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp: TFLM checks 0 < real < 1 and a shift <= 0."""
    m, shift = quant.quantize_multiplier(real)
    if not 0 < real < 1 or shift > 0:
        raise ValueError(f"multiplier {real:.6g} is not in (0, 1) (TFLM's QuantizeMultiplierSmallerThanOneExp)")
    return m, shift


# ----------------------------------------------------------------------------------------- tables

def _table(f) -> np.ndarray:
    return np.array([min(127, max(-128, f(q))) for q in range(-128, 128)], np.int8)


def abs_table(in_q, out_q) -> np.ndarray:
    """TFLM int8 ABS: |q − z_in| + z_out, requantized by float32(s_in / s_out) when the scales differ."""
    if F32(in_q[0]) == F32(out_q[0]):
        return _table(lambda q: abs(q - in_q[1]) + out_q[1])
    m, sh = quant.quantize_multiplier(float(F32(in_q[0]) / F32(out_q[0])))
    return _table(lambda q: mbqm(abs(q - in_q[1]), m, sh) + out_q[1])


def inv_sqrt_multiplier(v: int) -> tuple[int, int]:
    """GetInvSqrtQuantizedMultiplierExp(v, reverse_shift=-1): 1/√v as (Q31 multiplier, left shift), v ≥ 0."""
    if v <= 1:
        return INT32_MAX, 0
    shift = 11
    while v >= 1 << 29:
        v //= 4
        shift += 1
    pairs = (32 - v.bit_length() - 1) // 2 - 1
    shift -= pairs
    v <<= 2 * pairs
    half_input = rdbp(v >> 1, 1)
    x = 1 << 28                                             # F3 one
    for _ in range(5):
        x3 = sat_shl(srdhm(srdhm(x, x), x), 6)              # Rescale<3>(x*x*x): F9 → F3
        x = sat_shl(wrap32(srdhm((1 << 28) + (1 << 27), x) - srdhm(half_input, x3)), 3)
    x = srdhm(x, 1518500250)                                # × √2/2
    if shift < 0:
        x, shift = wrap32(x << -shift), 0
    return x, -shift


def rsqrt_table(in_q, out_q) -> np.ndarray:
    """TFLM int8 RSQRT (RsqrtEvalQuantized). Inputs below the zero point are an error in TFLM (its
    Invoke fails); their entries here are 127, the value of the zero point itself."""
    real = 1.0 / float(F32(math.sqrt(F32(in_q[0]))) * F32(out_q[0]))
    m, sh = quant.quantize_multiplier(real)

    def f(q):
        v = q - in_q[1]
        if v <= 0:
            return 127
        inv, inv_shift = inv_sqrt_multiplier(v)
        return mbqm(mbqm(1, inv, inv_shift + 20), m, sh - 20) + out_q[1]
    return _table(f)


def elu_table(in_q, out_q) -> np.ndarray:
    """TFLM int8 ELU (elu.cc PopulateLookupTable): float32 s·(q − z), expf − 1 below 0, × float32(1/s_out),
    rounded half away from zero, + z_out."""
    s, inv = F32(in_q[0]), F32(F32(1.0) / F32(out_q[0]))

    def f(q):
        x = F32(s * F32(q - in_q[1]))
        y = F32(F32(math.exp(float(x))) - F32(1.0)) if x < 0 else x
        return int(quant.round_half_away(float(F32(y * inv)))) + out_q[1]
    return _table(f)


# ----------------------------------------------------------------------------------------- qnn parameters

def compare_params(a_q, b_q) -> dict:
    """qnn.compare's multipliers: QuantizeMultiplierSmallerThanOneExp(double(s)) per operand."""
    (m1, sh1), (m2, sh2) = (multiplier_below_one(float(F32(q[0]))) for q in (a_q, b_q))
    return dict(a_zero_point=int(a_q[1]), b_zero_point=int(b_q[1]), m1=m1, sh1=sh1, m2=m2, sh2=sh2)


def squared_difference_params(a_q, b_q, out_q) -> dict:
    """qnn.squared_difference's multipliers (squared_difference.cc PrepareQuantized, left shift 7)."""
    twice = 2.0 * float(max(F32(a_q[0]), F32(b_q[0])))
    m1, sh1 = multiplier_below_one(float(F32(a_q[0])) / twice)
    m2, sh2 = multiplier_below_one(float(F32(b_q[0])) / twice)
    mo, sho = quant.quantize_multiplier(twice * twice / float(F32(F32(1 << 14) * F32(out_q[0]))))
    return dict(a_zero_point=int(a_q[1]), b_zero_point=int(b_q[1]), out_zero_point=int(out_q[1]), m1=m1, sh1=sh1,
                m2=m2, sh2=sh2, mo=mo, sho=sho, real_scales=(float(F32(a_q[0])), float(F32(b_q[0])),
                                                              float(F32(out_q[0]))))


def add_n_params(q, out_q) -> dict:
    """qnn.add_n's output multiplier: QuantizeMultiplierSmallerThanOneExp(2s / (2^20·s_out))."""
    twice = 2.0 * float(F32(q[0]))
    mo, sho = multiplier_below_one(twice / ((1 << 20) * float(F32(out_q[0]))))
    return dict(zero_point=int(q[1]), out_zero_point=int(out_q[1]), mo=mo, sho=sho,
                real_scales=(float(F32(q[0])), float(F32(out_q[0]))))


def div_params(a_q, b_q, out_q) -> dict:
    """qnn.div's multiplier: QuantizeMultiplier(s_a / (s_b·s_out)), the float32 scales divided in double
    (TFLM's DIV agrees with this on all 65,536 input pairs where a float32 quotient does not)."""
    m, sh = quant.quantize_multiplier(float(F32(a_q[0])) / (float(F32(b_q[0])) * float(F32(out_q[0]))))
    return dict(a_zero_point=int(a_q[1]), b_zero_point=int(b_q[1]), out_zero_point=int(out_q[1]), multiplier=m,
                shift=sh, real_scales=(float(F32(a_q[0])), float(F32(b_q[0])), float(F32(out_q[0]))))
