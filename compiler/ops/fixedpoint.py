"""gemmlowp fixed-point arithmetic beyond softmax's (compiler/quant.py), as TFLite's
kernels/internal/common.h uses it: log(x) for x >= 1 (LOG_SOFTMAX) and 1/sqrt(x) as a Q31
multiplier (L2_NORMALIZATION). Numpy on int64 arrays holding int32 values; the C twins are in
runtime_c/include/tinyfuse/fixedpoint.h. Registers no op.

A FixedPoint<int32, I> holds value·2^(31−I); ``*`` is SaturatingRoundingDoublingHighMul (the integer
bits add), ``+``/``-`` add the raw values, Rescale<J> multiplies by 2^(I−J) (a saturating left shift or
a rounding right shift).
"""
from __future__ import annotations

import numpy as np

from .. import quant

INT32_MIN, INT32_MAX = quant.INT32_MIN, quant.INT32_MAX


def sat_pot(x, exponent: int):
    """SaturatingRoundingMultiplyByPOT(Param): x·2^exponent, saturating up, rounding down."""
    x = np.asarray(x, np.int64)
    if exponent == 0:
        return x
    if exponent > 0:
        return quant.sat_shl(x, exponent)
    return quant.rdbp(x, -exponent)


def sat32(x):
    """Clamp to int32 (SaturatingAddNonGemmlowp / SaturatingSub of the int64 result)."""
    return np.clip(np.asarray(x, np.int64), INT32_MIN, INT32_MAX)


def clz32(x):
    """CountLeadingZeros of the uint32 bit pattern of int32 values (32 for 0)."""
    u = np.asarray(x, np.int64) & 0xFFFFFFFF
    out = np.full(u.shape, 32, np.int64)
    for b in range(31, -1, -1):
        out = np.where((out == 32) & (u >> b & 1 == 1), 31 - b, out)
    return out


def rounding_half_sum(a, b):
    """gemmlowp RoundingHalfSum: (a + b ± 1) / 2, truncating (the sign of the sum)."""
    s = np.asarray(a, np.int64) + np.asarray(b, np.int64)
    t = s + np.where(s >= 0, 1, -1)
    return np.where(t >= 0, t // 2, -((-t) // 2))


def log_x_ge_1(x, in_bits: int, out_bits: int):
    """log_x_for_x_greater_than_or_equal_to_1_impl<out_bits, in_bits>: ln(x) of a FixedPoint<in_bits>
    x >= 1, as FixedPoint<out_bits> (TFLite common.h; the constants are its Q0.31 ones)."""
    m, acc_bits = quant.srdhm, out_bits + 1
    log_2, sqrt_sqrt_half, sqrt_half, quarter = 1488522236, 1805811301, 1518500250, 536870912
    alpha_n, alpha_d, alpha_i, alpha_f = 117049297, 127690142, 1057819769, 638450708
    shifted_quarter = sat_pot(quarter, -acc_bits)
    z_a = np.asarray(x, np.int64)
    hz_a = clz32(z_a)
    r_a_tmp = _sat_pot_each(z_a, hz_a - 1)
    r_a = sat_pot(m(r_a_tmp, sqrt_half), 1)
    za_adj = sat32(_sat_pot_const(in_bits - hz_a, 31 - acc_bits) + shifted_quarter)
    z_b = m(z_a, sqrt_half)
    hz_b = clz32(z_b) - 1
    r_b = _sat_pot_each(z_a, hz_b)
    zb_adj = sat32(_sat_pot_const(in_bits - hz_b, 31 - acc_bits) - shifted_quarter)
    r = np.minimum(r_a, r_b)
    z_pow_2_adj = np.maximum(za_adj, zb_adj)
    p = rounding_half_sum(r, sqrt_sqrt_half)
    q = quant.wrap32(2 * quant.wrap32(r - sqrt_sqrt_half))
    common_sq = m(q, q)
    num = quant.wrap32(m(q, r) + m(m(q, common_sq), alpha_n))
    denom_minus_one = quant.wrap32(m(p, quant.wrap32(quant.wrap32(alpha_i + q) + m(alpha_d, common_sq)))
                                   + m(alpha_f, q))
    recip = quant.one_over_one_plus_x(denom_minus_one)
    num_scaled = sat_pot(num, -acc_bits)
    total = quant.wrap32(m(z_pow_2_adj, log_2) + m(num_scaled, recip))   # FixedPoint<acc_bits>
    return sat_pot(total, acc_bits - out_bits)


def _sat_pot_each(x, exponents):
    """sat_pot with a per-element exponent >= 0."""
    x, e = np.asarray(x, np.int64), np.asarray(exponents, np.int64)
    out = np.empty(np.broadcast(x, e).shape, np.int64)
    xb, eb = np.broadcast_to(x, out.shape), np.broadcast_to(e, out.shape)
    for k in np.unique(eb):
        sel = eb == k
        out[sel] = sat_pot(xb[sel], int(k))
    return out


def _sat_pot_const(values, exponent: int):
    return sat_pot(np.asarray(values, np.int64), exponent)


def inv_sqrt_multiplier(x: int) -> tuple[int, int]:
    """GetInvSqrtQuantizedMultiplierExp(x, kReverseShift = -1) of one int32 x >= 0: (Q31 multiplier,
    shift) with 1/sqrt(x) ≈ multiplier·2^(shift−31) (TFLite common.h: Newton-Raphson in Q3.28)."""
    if x <= 1:
        return INT32_MAX, 0
    shift = 11
    while x >= 1 << 29:
        x //= 4
        shift += 1
    pairs = (int(clz32(x)) - 1) // 2 - 1
    shift -= pairs
    x <<= 2 * pairs
    m = quant.srdhm
    fx = np.int64(x >> 1)
    half = sat_pot(fx, -1)
    three_halves = (1 << 28) + (1 << 27)
    y = np.int64(1 << 28)
    for _ in range(5):
        y3 = sat_pot(m(m(y, y), y), 6)
        y = sat_pot(quant.wrap32(m(three_halves, y) - m(half, y3)), 3)
    raw = int(m(y, 1518500250))
    if shift < 0:
        raw = int(quant.wrap32(raw << -shift))
        shift = 0
    return raw, -shift
