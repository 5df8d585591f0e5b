"""int8 fixed-point arithmetic of the TFLite int8 spec / TFLM / CMSIS-NN, in numpy.

This is the executable specification the generated C (``runtime_c/include/tinyfuse/quant.h``) must
match bit for bit, and the numpy reference the qnn ops use (see ../shared/docs/QUANT.md).

- real = (q - zero_point) * scale
- requantize: M = m * 2^shift with m in [0.5, 1) as a Q31 int32 (``quantize_multiplier``), applied as
  SaturatingRoundingDoublingHighMul + RoundingDivideByPOT ("double rounding", TFLM default,
  ``mbqm``) or one 64-bit rounding shift ("single rounding", ``mbqm_single``).
"""
from __future__ import annotations

import math

import numpy as np

INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def round_half_away(x):
    """std::round / TfLiteRound: halves go away from zero (numpy's round goes to even)."""
    x = np.asarray(x, np.float64)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def quantize_multiplier(real: float) -> tuple[int, int]:
    """real ≥ 0 → (Q31 multiplier m, shift) with real ≈ m / 2^31 · 2^shift (TFLite QuantizeMultiplier).

    frexp gives real = q · 2^shift with q in [0.5, 1); m = round_half_away(q · 2^31); if that rounds up
    to 2^31, halve it and increment shift. real == 0 gives (0, 0). Shifts below -31 flush to (0, 0).
    """
    if real == 0.0:
        return 0, 0
    if not (real > 0 and math.isfinite(real)):
        raise ValueError(f"requantization multiplier must be positive and finite, got {real}")
    q, shift = math.frexp(real)
    m = int(round_half_away(q * (1 << 31)))
    if m == 1 << 31:
        m //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return m, shift


def quantize_multipliers(reals) -> tuple[np.ndarray, np.ndarray]:
    """Vector form of quantize_multiplier: (int32 multipliers, int32 shifts)."""
    pairs = [quantize_multiplier(float(r)) for r in np.asarray(reals, np.float64).reshape(-1)]
    return (np.array([p[0] for p in pairs], np.int32).reshape(np.shape(reals)),
            np.array([p[1] for p in pairs], np.int32).reshape(np.shape(reals)))


def srdhm(a, b):
    """SaturatingRoundingDoublingHighMul(a, b) on int64 arrays holding int32 values."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    t = ab + nudge
    out = np.where(t >= 0, t >> 31, -((-t) >> 31))          # divide by 2^31 truncating toward 0
    return np.where((a == INT32_MIN) & (b == INT32_MIN), INT32_MAX, out)


def rdbp(x, exponent):
    """RoundingDivideByPOT: x / 2^exponent rounded half away from zero."""
    x, e = np.asarray(x, np.int64), np.asarray(exponent, np.int64)
    mask = (np.int64(1) << e) - 1
    rem = x & mask
    thr = (mask >> 1) + (x < 0)
    return (x >> e) + (rem > thr)


def wrap32(x):
    """Two's complement wrap of int64 values to int32 (what C's (int32_t) cast of a shifted value does)."""
    return ((np.asarray(x, np.int64) + (1 << 31)) % (1 << 32)) - (1 << 31)


def mbqm(acc, m, shift):
    """MultiplyByQuantizedMultiplier, double rounding (TFLM / CMSIS-NN default). int64 in and out."""
    acc, shift = np.asarray(acc, np.int64), np.asarray(shift, np.int64)
    left, right = np.maximum(shift, 0), np.maximum(-shift, 0)
    return rdbp(srdhm(wrap32(acc << left), m), right)


def mbqm_single(acc, m, shift):
    """Single rounding: (acc·m + 2^(30−shift)) >> (31−shift) in 64-bit (TFLite reference FC)."""
    acc, m, shift = np.asarray(acc, np.int64), np.asarray(m, np.int64), np.asarray(shift, np.int64)
    total = 31 - shift
    return (acc * m + (np.int64(1) << (total - 1))) >> total


def requantize(acc, m, shift, rounding: str = "double"):
    return mbqm(acc, m, shift) if rounding == "double" else mbqm_single(acc, m, shift)


def saturate(x, dtype="int8"):
    info = np.iinfo(dtype)
    return np.clip(np.asarray(x, np.int64), info.min, info.max).astype(dtype)


# ---------------------------------------------------------------------------------- TFLite ADD / MUL

ADD_LEFT_SHIFT = 20


def add_params(s1: float, s2: float, s_out: float) -> dict:
    """TFLite reference ADD parameters (QUANT.md): inputs rescaled to 2·max(s1, s2) with 20 bits of
    headroom, one output multiplier."""
    twice_max = 2.0 * max(float(s1), float(s2))
    m1, sh1 = quantize_multiplier(float(s1) / twice_max)
    m2, sh2 = quantize_multiplier(float(s2) / twice_max)
    mo, sho = quantize_multiplier(twice_max / ((1 << ADD_LEFT_SHIFT) * float(s_out)))
    return dict(m1=m1, sh1=sh1, m2=m2, sh2=sh2, mo=mo, sho=sho)


def qadd(q1, z1, q2, z2, zo, p: dict):
    x1 = mbqm((np.asarray(q1, np.int64) - z1) << ADD_LEFT_SHIFT, p["m1"], p["sh1"])
    x2 = mbqm((np.asarray(q2, np.int64) - z2) << ADD_LEFT_SHIFT, p["m2"], p["sh2"])
    return mbqm(x1 + x2, p["mo"], p["sho"]) + zo


def qmul(q1, z1, q2, z2, zo, m, shift):
    return mbqm((np.asarray(q1, np.int64) - z1) * (np.asarray(q2, np.int64) - z2), m, shift) + zo


def activation_range(kind_bounds, scale: float, zero_point: int, dtype="int8") -> tuple[int, int]:
    """[lo, hi] of a fused activation on the quantized output (TFLite CalculateActivationRangeQuantized).
    ``kind_bounds`` is a list of (a_min, a_max) real bounds (None = open)."""
    info = np.iinfo(dtype)
    lo, hi = info.min, info.max
    for a_min, a_max in kind_bounds:
        if a_min is not None:
            lo = max(lo, int(zero_point + round_half_away(a_min / scale)))
        if a_max is not None:
            hi = min(hi, int(zero_point + round_half_away(a_max / scale)))
    return lo, hi
