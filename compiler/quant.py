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


MBQM_SAT = 2**31 - 2**16   # the saturated requantization result (quant.h TF_MBQM_SAT: why this value)


def mbqm(acc, m, shift):
    """MultiplyByQuantizedMultiplier, double rounding (TFLM / CMSIS-NN default). int64 in and out.

    ``acc`` int32 values, ``m`` Q31 multipliers in [2^30, 2^31) (or 0), ``shift`` int32 exponents.
    Where shift > 0 (real multiplier > 1) and acc · 2^shift does not fit int32 — TFLM's int32 shift
    wraps there — the result saturates to ±MBQM_SAT (0 for acc == 0): the true value is then at
    least 2^30 in magnitude, so every int8/int16 output clamps to the right bound.
    """
    acc, shift = np.asarray(acc, np.int64), np.asarray(shift, np.int64)
    left, right = np.clip(shift, 0, 31), np.maximum(-shift, 0)
    shifted = acc << left
    overflow = (shift > 31) & (acc != 0) | (shifted > INT32_MAX) | (shifted < INT32_MIN)
    out = rdbp(srdhm(np.where(overflow, 0, shifted), m), right)
    return np.where(overflow, np.sign(acc) * MBQM_SAT, out)


def mbqm_single(acc, m, shift):
    """Single rounding: (acc·m + 2^(30−shift)) >> (31−shift) in 64-bit (TFLite reference FC), saturating
    to ±MBQM_SAT where a left shift (shift > 0) takes the result beyond int32 (as mbqm)."""
    acc, m, shift = np.asarray(acc, np.int64), np.asarray(m, np.int64), np.asarray(shift, np.int64)
    p = acc * m
    total = 31 - np.minimum(shift, 30)
    r = (p + (np.int64(1) << (total - 1))) >> total
    r = np.where((shift > 30) & (p != 0), np.sign(p) * (MBQM_SAT + 1), r)
    return np.where(shift > 0, np.clip(r, -MBQM_SAT, MBQM_SAT), r)


def mbqm64(acc, m, shift):
    """TFLM's MultiplyByQuantizedMultiplier of an int64 accumulator (kernels/internal/common.cc; the
    16x8 conv, depthwise and fully connected kernels with an int64 bias): the Q31 multiplier reduced to
    Q15, ``r = (m + 2^15) >> 16`` (0x7FFF from m >= 0x7FFF0000), then one rounding shift
    ``(acc·r + 2^(14 − shift)) >> (15 − shift)`` (halves up), whatever the rounding option. int64 in
    and out; ``shift`` <= 14 (ValueError beyond). Exact for |acc| < 2^47 (TFLM's contract); a result
    beyond int32, which TFLM truncates, saturates to ±MBQM_SAT as in ``mbqm``."""
    acc, m, shift = np.asarray(acc, np.int64), np.asarray(m, np.int64), np.asarray(shift, np.int64)
    if np.any(shift > 14):
        raise ValueError("a 64-bit requantization multiplier of 2^14 or more has no TFLM arithmetic")
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    total = 15 - shift
    r = (acc * reduced + (np.int64(1) << (total - 1))) >> total
    return np.clip(r, -MBQM_SAT, MBQM_SAT)


def requantize(acc, m, shift, rounding: str = "double"):
    return mbqm(acc, m, shift) if rounding == "double" else mbqm_single(acc, m, shift)


def saturate(x, dtype="int8"):
    info = np.iinfo(dtype)
    return np.clip(np.asarray(x, np.int64), info.min, info.max).astype(dtype)


# ---------------------------------------------------------------------------------- TFLite ADD / MUL

ADD_LEFT_SHIFT = 20
#: the headroom of TFLM's ADD / SUB by output type (add_common.cc, sub_common.cc: 15 bits for int16)
LEFT_SHIFTS = {"int8": 20, "int16": 15}


def add_params(s1: float, s2: float, s_out: float, left_shift: int = ADD_LEFT_SHIFT) -> dict:
    """TFLite reference ADD parameters (QUANT.md): inputs rescaled to 2·max(s1, s2) with ``left_shift``
    bits of headroom (20 for int8, 15 for int16), one output multiplier. ``left_shift`` is returned
    too unless it is int8's 20."""
    twice_max = 2.0 * max(float(s1), float(s2))
    m1, sh1 = quantize_multiplier(float(s1) / twice_max)
    m2, sh2 = quantize_multiplier(float(s2) / twice_max)
    mo, sho = quantize_multiplier(twice_max / ((1 << left_shift) * float(s_out)))
    extra = {} if left_shift == ADD_LEFT_SHIFT else {"left_shift": left_shift}
    return dict(m1=m1, sh1=sh1, m2=m2, sh2=sh2, mo=mo, sho=sho, **extra)


def qadd(q1, z1, q2, z2, zo, p: dict):
    left = p.get("left_shift", ADD_LEFT_SHIFT)
    x1 = mbqm((np.asarray(q1, np.int64) - z1) << left, p["m1"], p["sh1"])
    x2 = mbqm((np.asarray(q2, np.int64) - z2) << left, p["m2"], p["sh2"])
    return mbqm(x1 - x2 if p.get("subtract") else x1 + x2, p["mo"], p["sho"]) + zo


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


# ---------------------------------------------------------------------------------- TFLite SOFTMAX
# The int8 → int8 SOFTMAX of TFLite Micro (micro/kernels/softmax_common.cc prepares, and
# kernels/internal/reference/softmax.h runs, on gemmlowp's fixed-point exp and reciprocal).
# Output quantization is fixed at (1/256, -128). Per row:
#   d = x − max(x)                                  (the input zero point cancels)
#   elements with d < diff_min have exp ≈ 0: they output -128 and add nothing to the sum
#   a = SRDHM(d · 2^left_shift, multiplier)          d · beta · in_scale in Q5.26
#   e = exp(a) in Q0.31                              (exp_on_negative_values)
#   sum = Σ RDBP(e, 12) in Q12.19                    (int32, no saturation)
#   1/sum as a Q0.31 value r of 1/(sum normalised to [1, 2)) and a power of two
#   y = RDBP(SRDHM(r, e), num_bits_over_unit + 23) − 128, saturated to int8
# TFLM aborts (TFLITE_CHECK exponent ≤ 31) when a sum reaches 2^28: 512 or more elements tied at the max.

SOFTMAX_DIFF_INT_BITS = 5        # integer bits of the scaled difference (kScaledDiffIntegerBits)
SOFTMAX_ACCUM_INT_BITS = 12      # integer bits of the sum of exps (kAccumulationIntegerBits)
SOFTMAX_OUT_Q = (1.0 / 256, -128)

# exp(-2^k) in Q0.31 for k = -2 .. 4: the factors of exp_on_negative_values' barrel shifter.
_EXP_NEG_POW2 = (1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242)


def softmax_params(in_scale: float, beta: float = 1.0) -> dict:
    """TFLM's int8 SOFTMAX preparation (PreprocessSoftmaxScaling, CalculateInputRadius).

    beta and in_scale are float32 in the model; their product, widened to double, times 2^26 and
    capped at 2^31 − 1, becomes a Q31 multiplier with a left shift (it is > 1 for any sane scale).
    diff_min = −floor(31 · 2^26 / 2^left_shift): the most negative x − max(x) whose scaled value
    still fits Q5.26. Returns dict(multiplier, left_shift, diff_min).
    """
    frac = 31 - SOFTMAX_DIFF_INT_BITS
    real = min(float(np.float32(beta)) * float(np.float32(in_scale)) * float(1 << frac), float(INT32_MAX))
    if not real > 1.0:
        raise ValueError(f"softmax: beta·input_scale {real / (1 << frac):g} is too small for TFLM's kernel")
    m, shift = quantize_multiplier(real)
    radius = (((1 << SOFTMAX_DIFF_INT_BITS) - 1) << frac) >> shift      # exact floor of the double division
    return dict(multiplier=m, left_shift=shift, diff_min=-radius)


def softmax_is_fixed_point(in_scale: float, out_scale: float, out_zero_point: int, beta: float = 1.0) -> bool:
    """Whether qnn.softmax runs TFLM's fixed-point kernel: output (1/256, -128) in float32, and a
    beta·input scale TFLM accepts (> 2^-26). Other output quantizations (ONNX QDQ models may pick
    any) have no TFLM counterpart and take the integer table path (softmax_int8_table)."""
    real = float(np.float32(beta)) * float(np.float32(in_scale)) * float(1 << (31 - SOFTMAX_DIFF_INT_BITS))
    return (np.float32(out_scale) == np.float32(SOFTMAX_OUT_Q[0]) and int(out_zero_point) == SOFTMAX_OUT_Q[1]
            and real > 1.0)


def _near(scale: float, target: float) -> bool:
    """TF_LITE_ENSURE_NEAR(scale, target, target / 1000) on the float32 scale."""
    return abs(float(np.float32(scale)) - target) <= 0.001 * target


def softmax_supported(in_dtype: str, out_dtype: str, in_scale: float, in_zero_point: int, out_scale: float,
                      out_zero_point: int) -> bool:
    """Whether qnn.softmax has an integer kernel for these types (TFLM's SOFTMAX checks): int8 → int8
    (any output quantization, see softmax_is_fixed_point); int8 → int16 with output (1/65536, -32768)
    (the fixed-point kernel, 16 output bits); int16 → int16 with zero points 0 and output scale 1/32768
    (TFLM's table kernel, ops/qnn_int16.py)."""
    if (in_dtype, out_dtype) == ("int8", "int8"):
        return True
    if (in_dtype, out_dtype) == ("int8", "int16"):
        return out_zero_point == -32768 and _near(out_scale, 1 / 65536) and \
            float(np.float32(in_scale)) * float(1 << (31 - SOFTMAX_DIFF_INT_BITS)) > 1.0
    return (in_dtype, out_dtype) == ("int16", "int16") and in_zero_point == 0 and out_zero_point == 0 \
        and _near(out_scale, 1 / 32768)


def sat_shl(x, exponent: int):
    """gemmlowp SaturatingRoundingMultiplyByPOT with exponent > 0: x · 2^exponent clamped to int32."""
    x = np.asarray(x, np.int64)
    thr = (1 << (31 - exponent)) - 1
    return np.where(x > thr, INT32_MAX, np.where(x < -thr, INT32_MIN, x << exponent))


def _exp_quarter(a):
    """exp(a) for a in [-1/4, 0), Q0.31 → Q0.31: Taylor polynomial of degree 4 around -1/8."""
    c = 1895147668                                   # exp(-1/8)
    x = np.asarray(a, np.int64) + (1 << 28)          # a + 1/8
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    poly = rdbp(srdhm(rdbp(x4, 2) + x3, 715827883) + x2, 1)     # x^4/24 + x^3/6 + x^2/2
    return c + srdhm(c, x + poly)


def exp_on_negative_values(a, int_bits: int = SOFTMAX_DIFF_INT_BITS):
    """exp(a) for a ≤ 0 held in Q(int_bits).(31−int_bits), 0 ≤ int_bits ≤ 5; result in Q0.31.

    a = q + r with r in [-1/4, 0) and q a non-positive multiple of 1/4: exp(r) by polynomial, then
    one multiplication by exp(-2^k) for every bit k of −q. exp(0) is INT32_MAX (gemmlowp's One).
    """
    if not 0 <= int_bits <= 5:
        raise ValueError("exp_on_negative_values: only 0..5 integer bits (no -32 clamp)")
    a = np.asarray(a, np.int64)
    frac = 31 - int_bits
    quarter = 1 << (frac - 2)
    r = (a & (quarter - 1)) - quarter                # in [-1/4, 0)
    y = _exp_quarter(sat_shl(r, int_bits) if int_bits else r)
    rest = r - a                                      # −q ≥ 0, a multiple of 1/4
    for k, factor in zip(range(-2, 5), _EXP_NEG_POW2):
        if int_bits > k:
            y = np.where(rest & (1 << (frac + k)), srdhm(y, factor), y)
    return np.where(a == 0, INT32_MAX, y)


def one_over_one_plus_x(a):
    """1 / (1 + a) for a in [0, 1) in Q0.31 → Q0.31: Newton-Raphson on half the denominator in Q2.29
    (start 48/17 − 32/17·d, three steps), then doubled with saturation."""
    a = np.asarray(a, np.int64)
    s = a + INT32_MAX                                 # RoundingHalfSum(a, One): (s ± 1) / 2 toward zero
    half_denom = np.where(s >= 0, (s + 1) // 2, -((1 - s) // 2))
    x = 1515870810 + srdhm(half_denom, -1010580540)
    for _ in range(3):
        x = x + sat_shl(srdhm(x, (1 << 29) - srdhm(half_denom, x)), 2)
    return sat_shl(x, 1)


def softmax_int8(x, params: dict, axis: int = -1, out_dtype: str = "int8") -> np.ndarray:
    """TFLM int8 SOFTMAX along `axis` (output (1/256, -128), or int16 (1/65536, -32768): reference_ops
    Softmax<int8_t, int16_t>, the reciprocal's exponent 16 bits lower); params from softmax_params."""
    x = np.asarray(x, np.int64)
    d = x - x.max(axis=axis, keepdims=True)
    live = d >= params["diff_min"]
    scaled = srdhm(np.where(live, d, 0) << params["left_shift"], params["multiplier"])
    e = np.where(live, exp_on_negative_values(scaled), 0)
    total = rdbp(e, SOFTMAX_ACCUM_INT_BITS).sum(axis=axis, keepdims=True)    # Q0.31 → Q12.19; > 0
    clz = 32 - np.frexp(total.astype(np.float64))[1]  # leading zeros of the uint32 sum (exact below 2^53)
    recip = one_over_one_plus_x((total << clz) - (1 << 31))
    info = np.iinfo(out_dtype)
    exponent = SOFTMAX_ACCUM_INT_BITS - clz + 31 - info.bits
    y = rdbp(srdhm(recip, e), exponent) + info.min
    return saturate(np.where(live, y, info.min), out_dtype)


# TFLM int8 / int16 SUB (sub_common.cc) as a qnn.add with the second multiplier negated
def _sub_multipliers(s1: float, s2: float, so: float, left_shift: int = ADD_LEFT_SHIFT):
    """CalculateOpDataSub: twice_max and the three real multipliers in float32."""
    twice = np.float32(2) * max(np.float32(s1), np.float32(s2))
    reals = (np.float32(s1) / twice, np.float32(s2) / twice,
             twice / (np.float32(1 << left_shift) * np.float32(so)))
    out = [quantize_multiplier(float(r)) for r in reals]
    if any(sh > 0 for _, sh in out):
        raise ValueError("quantized SUB needs multipliers below one (output scale too small for TFLM's kernel)")
    return out


def sub_as_add(a_q, b_q, out_q, dtype: str = "int8") -> dict:
    """qnn.add parameters computing TFLM's int8 or int16 SUB (``dtype``), headroom ``LEFT_SHIFTS[dtype]``.
    int16: ``subtract`` (the rescaled inputs subtracted, SubElementwise exactly). int8: the second
    multiplier negated, exact unless a rounding tie of SaturatingRoundingDoublingHighMul (which rounds
    halves up, not symmetrically) falls differently; every input pair is checked and a mismatch is a
    ValueError."""
    left = LEFT_SHIFTS[dtype]
    (m1, sh1), (m2, sh2), (mo, sho) = _sub_multipliers(a_q[0], b_q[0], out_q[0], left)
    real = (float(np.float32(a_q[0])), -float(np.float32(b_q[0])), float(np.float32(out_q[0])))
    if dtype == "int16":
        return dict(m1=m1, sh1=sh1, m2=m2, sh2=sh2, mo=mo, sho=sho, left_shift=left, subtract=True, real_scales=real)
    params = dict(m1=m1, sh1=sh1, m2=-m2, sh2=sh2, mo=mo, sho=sho)
    q = np.arange(-128, 128, dtype=np.int64)
    x1 = mbqm((q - a_q[1]) << left, m1, sh1)[:, None]
    x2 = mbqm((q - b_q[1]) << left, m2, sh2)[None, :]
    want = mbqm(x1 - x2, mo, sho) + out_q[1]                     # TFLM SubElementwise
    got = qadd(q[:, None], a_q[1], q[None, :], b_q[1], out_q[1], params)
    if not np.array_equal(saturate(got), saturate(want)):
        raise ValueError("int8 SUB with these scales has no exact tinyfuse kernel (a rounding tie of the "
                         "negated multiplier differs from TFLM)")
    return {**params, "real_scales": real}


def softmax_table_params(in_scale: float, out_scale: float, length: int) -> dict:
    """Tables of the integer qnn.softmax for any output quantization (not TFLM's (1/256, -128)).

    The input is int8, so d = max(x) − x takes at most 256 values and exp(−d·s_in) as many:
    ``exp_table[d]`` = round(exp(−d·s_in)·2^frac_bits) and ``out_table[d]`` =
    round(exp(−d·s_in)/s_out·2^frac_bits), both int64 [256], s_in and s_out the float32 scales in
    float64 (as the ONNX reference computes). frac_bits (≤ 62) keeps length·2^frac_bits and
    2^frac_bits/s_out below 2^62, so the row sum and every quotient fit in 64 bits. Raises ValueError
    for an output scale below 2^-30 (no room left for the fraction)."""
    s_in, s_out = float(np.float32(in_scale)), float(np.float32(out_scale))
    frac_bits = min(62 - max(int(length) - 1, 0).bit_length(), 62 - max(math.ceil(math.log2(1.0 / s_out)), 0))
    if frac_bits < 32:
        raise ValueError(f"softmax output scale {s_out} too small for the integer table")
    e = np.exp(-np.arange(256, dtype=np.float64) * s_in)
    exp_table = np.array([round(math.ldexp(v, frac_bits)) for v in e.tolist()], np.int64)
    out_table = np.array([round(math.ldexp(v / s_out, frac_bits)) for v in e.tolist()], np.int64)
    return {"frac_bits": frac_bits, "exp_table": exp_table, "out_table": out_table}


def softmax_int8_table(x, in_scale: float, out_scale: float, out_zero_point: int, axis: int = -1) -> np.ndarray:
    """int8 softmax with any output quantization, in integers only (``softmax_table_params``):
    sum = Σ exp_table[max − x] (64-bit), y = sat_int8(round_half_even(out_table[max − x] / sum) + z_out),
    the division exact (quotient and remainder; a remainder of exactly half rounds to the even quotient,
    as ONNX QuantizeLinear does). This is y = round(exp(r_i − max r) / Σ exp(r_j − max r) / s_out) + z_out
    of the ONNX Softmax + QuantizeLinear definition with the exps to 2^-frac_bits: equal to the float64
    reference except where that reference lies within ~N·2^-frac_bits/s_out of a half (never met on the
    test rows; exact ties, e.g. every element equal, come out exact). x: int8, any shape; returns int8."""
    x = np.moveaxis(np.asarray(x).astype(np.int64), axis, -1)
    p = softmax_table_params(in_scale, out_scale, x.shape[-1])
    d = x.max(axis=-1, keepdims=True) - x
    total = p["exp_table"][d].sum(axis=-1, keepdims=True)       # < 2^62 by the choice of frac_bits
    u = p["out_table"][d]
    q, r = u // total, u % total
    q = q + ((r > total - r) | ((r == total - r) & (q % 2 == 1)))
    return np.moveaxis(saturate(np.minimum(q, 512) + int(out_zero_point)), -1, axis)
