/* tinyfuse/quant.h: int8 fixed-point arithmetic of the TFLite int8 spec, bit-exact with TFLite Micro
 * and CMSIS-NN (arm_nn_requantize). Header-only, C99, <stdint.h> only; copied next to the generated
 * sources of every int8 model as tinyfuse_quant.h. The numpy specification is compiler/quant.py. */
#ifndef TINYFUSE_QUANT_H
#define TINYFUSE_QUANT_H

#include <stdint.h>

/* SaturatingRoundingDoublingHighMul(a, b): (a*b + nudge) / 2^31 rounded to nearest, saturating.
 * TFLM's nudge (1 - 2^30 for a negative product, then truncation toward zero) equals a floor shift
 * of a*b + 2^30 (CMSIS-NN arm_nn_doubling_high_mult_no_sat): one SMLAL on Arm. */
static inline int32_t tf_srdhm(int32_t a, int32_t b)
{
  if (a == b && a == INT32_MIN) return INT32_MAX;
  return (int32_t)(((int64_t)a * (int64_t)b + (1LL << 30)) >> 31);
}

/* RoundingDivideByPOT(x, e), 0 <= e <= 31: x / 2^e, halves away from zero. */
static inline int32_t tf_rdbp(int32_t x, int32_t e)
{
  const int32_t mask = (int32_t)((1u << e) - 1u);
  const int32_t rem = x & mask;
  const int32_t thr = (mask >> 1) + (int32_t)((uint32_t)x >> 31);
  return (x >> e) + (rem > thr ? 1 : 0);
}

/* What a requantization returns when acc * 2^shift does not fit int32 (TFLM's kernels wrap there). The
 * true value then has |acc * m * 2^(shift-31)| >= 2^30 (m >= 2^30), beyond every int8/int16 result, so
 * the saturated value is the right one after the output clamp; 2^31 - 2^16, not INT32_MAX, so that adding
 * an output zero point (|zp| <= 2^15) cannot wrap. The numpy twin is compiler/quant.py (MBQM_SAT). */
#define TF_MBQM_SAT 2147418112

/* acc * 2^shift (shift >= 1) overflows int32: the sign-saturated result, 0 for acc == 0. */
static inline int32_t tf_mbqm_saturated(int64_t acc)
{
  return acc > 0 ? TF_MBQM_SAT : acc < 0 ? -TF_MBQM_SAT : 0;
}

/* MultiplyByQuantizedMultiplier, double rounding (TFLM default): acc * m/2^31 * 2^shift.
 * m >= 0, as quantize_multiplier makes every multiplier, so the one saturating case of SRDHM
 * (a == m == INT32_MIN) cannot occur and tf_srdhm's test is left out. A left shift (multiplier > 1)
 * is TFLM's arithmetic while acc * 2^shift fits int32, else saturates (TF_MBQM_SAT). */
static inline int32_t tf_mbqm(int32_t acc, int32_t m, int32_t shift)
{
  if (shift > 0) {
    if (shift > 31 || acc > (INT32_MAX >> shift) || acc < -(INT32_MAX >> shift) - 1)
      return tf_mbqm_saturated(acc);
    return (int32_t)(((int64_t)(int32_t)((uint32_t)acc << shift) * (int64_t)m + (1LL << 30)) >> 31);
  }
  return tf_rdbp((int32_t)(((int64_t)acc * (int64_t)m + (1LL << 30)) >> 31), -shift);
}

/* Single rounding: (acc*m + 2^(30-shift)) >> (31-shift) in 64 bits, saturating (TF_MBQM_SAT) where
 * a left shift (multiplier > 1) takes the result beyond int32. */
static inline int32_t tf_mbqm_single(int32_t acc, int32_t m, int32_t shift)
{
  const int64_t p = (int64_t)acc * (int64_t)m;
  if (shift > 0) {
    if (shift > 30) return tf_mbqm_saturated(p);
    const int64_t r = (p + (1LL << (30 - shift))) >> (31 - shift);
    return r > TF_MBQM_SAT ? TF_MBQM_SAT : r < -TF_MBQM_SAT ? -TF_MBQM_SAT : (int32_t)r;
  }
  return (int32_t)((p + (1LL << (30 - shift))) >> (31 - shift));
}

static inline int8_t tf_sat_i8(int32_t x)
{
#if defined(__ARM_FEATURE_SAT) && defined(__GNUC__)
  return (int8_t)__builtin_arm_ssat(x, 8);       /* one SSAT (ARMv7-M and up; gcc and clang) */
#else
  return (int8_t)(x < -128 ? -128 : x > 127 ? 127 : x);
#endif
}

static inline uint8_t tf_sat_u8(int32_t x)
{
  return (uint8_t)(x < 0 ? 0 : x > 255 ? 255 : x);
}

/* The integer of an int8/uint8 quantize (ONNX QuantizeLinear, TFLite QUANTIZE: round half to even):
 * v clamped to [-1024, 1024] first (beyond, every int8/uint8 code saturates alike; NaN compares false
 * and gives -1024, the lowest code), then rounded in the FPU by adding and subtracting 1.5 * 2^23,
 * exactly as rintf for |v| <= 2^22 in the default round-to-nearest mode. No library call: newlib's
 * rintf costs about 100 instructions on a Cortex-M4F (no VRINT before FPv5). The volatile keeps
 * -ffast-math from folding the two additions. */
static inline int32_t tf_quantize_rint(float v)
{
  volatile float t;
  v = v > -1024.0f ? v : -1024.0f;
  v = v < 1024.0f ? v : 1024.0f;
  t = v + 12582912.0f;
  return (int32_t)(t - 12582912.0f);
}

/* TFLite reference ADD: inputs rescaled with 20 bits of headroom, one output requantize. */
static inline int32_t tf_qadd(int32_t a, int32_t za, int32_t m1, int32_t sh1,
                              int32_t b, int32_t zb, int32_t m2, int32_t sh2,
                              int32_t mo, int32_t sho, int32_t zo)
{
  const int32_t x1 = tf_mbqm((a - za) * (1 << 20), m1, sh1);
  const int32_t x2 = tf_mbqm((b - zb) * (1 << 20), m2, sh2);
  return tf_mbqm(x1 + x2, mo, sho) + zo;
}

/* TFLite reference MUL. */
static inline int32_t tf_qmul(int32_t a, int32_t za, int32_t b, int32_t zb, int32_t m, int32_t sh, int32_t zo)
{
  return tf_mbqm((a - za) * (b - zb), m, sh) + zo;
}

/* Average of `count` summed int8 values, rounding half away from zero (TFLM AveragePool). */
static inline int32_t tf_avg_round(int32_t sum, int32_t count)
{
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

/* ---- TFLite int8 SOFTMAX: gemmlowp fixed-point exp and reciprocal (compiler/quant.py, softmax_int8).
 * Qm.n: an int32 holding value * 2^n, m integer bits, n = 31 - m. */

/* gemmlowp SaturatingRoundingMultiplyByPOT, exponent e in 1..30: x * 2^e clamped to int32. */
static inline int32_t tf_sat_shl(int32_t x, int32_t e)
{
  const int32_t thr = (int32_t)((1u << (31 - e)) - 1u);
  if (x > thr) return INT32_MAX;
  if (x < -thr) return INT32_MIN;
  return (int32_t)((uint32_t)x << e);
}

/* Count of leading zero bits, x != 0. */
static inline int32_t tf_clz32(uint32_t x)
{
#if defined(__GNUC__)
  return (int32_t)__builtin_clz(x);                    /* one CLZ on Arm */
#else
  int32_t n = 0;
  while (!(x & 0x80000000u)) { x <<= 1; ++n; }
  return n;
#endif
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out: degree-4 Taylor polynomial around -1/8. */
static inline int32_t tf_exp_quarter(int32_t a)
{
  const int32_t c = 1895147668;                        /* exp(-1/8) */
  const int32_t x = a + (1 << 28);                     /* a + 1/8 */
  const int32_t x2 = tf_srdhm(x, x), x3 = tf_srdhm(x2, x), x4 = tf_srdhm(x2, x2);
  const int32_t poly = tf_rdbp(tf_srdhm(tf_rdbp(x4, 2) + x3, 715827883) + x2, 1);  /* x^4/24 + x^3/6 + x^2/2 */
  return c + tf_srdhm(c, x + poly);
}

/* gemmlowp exp_on_negative_values for a <= 0 in Q5.26 (the softmax's scaled difference); result in
 * Q0.31. a = q + r, r in [-1/4, 0) by polynomial, then one factor exp(-2^k) per set bit k of -q. */
static inline int32_t tf_exp_on_negative_values(int32_t a)
{
  const int32_t quarter = 1 << 24;
  const int32_t r = (a & (quarter - 1)) - quarter;
  const int32_t rest = r - a;                          /* -q >= 0 */
  int32_t y = tf_exp_quarter(r * 32);                  /* Q5.26 -> Q0.31; |r| <= 1/4: no saturation */
  if (rest & (1 << 24)) y = tf_srdhm(y, 1672461947);   /* exp(-1/4) */
  if (rest & (1 << 25)) y = tf_srdhm(y, 1302514674);   /* exp(-1/2) */
  if (rest & (1 << 26)) y = tf_srdhm(y, 790015084);    /* exp(-1) */
  if (rest & (1 << 27)) y = tf_srdhm(y, 290630308);    /* exp(-2) */
  if (rest & (1 << 28)) y = tf_srdhm(y, 39332535);     /* exp(-4) */
  if (rest & (1 << 29)) y = tf_srdhm(y, 720401);       /* exp(-8) */
  if (rest & (1 << 30)) y = tf_srdhm(y, 242);          /* exp(-16) */
  return a == 0 ? INT32_MAX : y;
}

/* gemmlowp one_over_one_plus_x_for_x_in_0_1: 1/(1 + a) for a in [0, 1), Q0.31 in and out.
 * Newton-Raphson on d = (1 + a)/2 in Q2.29: x = 48/17 - 32/17 d, three steps x += x (1 - d x). */
static inline int32_t tf_one_over_one_plus_x(int32_t a)
{
  const int32_t d = (int32_t)(((int64_t)a + INT32_MAX + 1) >> 1);   /* RoundingHalfSum(a, One), a >= 0 */
  int32_t x = 1515870810 + tf_srdhm(d, -1010580540);
  for (int i = 0; i < 3; ++i)
    x += tf_sat_shl(tf_srdhm(x, (1 << 29) - tf_srdhm(d, x)), 2);
  return tf_sat_shl(x, 1);                              /* x/2 as Q1.30 -> Q0.31 */
}

/* TFLite GetReciprocal of a softmax's Q12.19 sum of exps (sum > 0): returns 1/(sum scaled into [1, 2))
 * in Q0.31 and sets *exponent to the int8 output's RoundingDivideByPOT exponent,
 * num_bits_over_unit + 31 - 8. */
static inline int32_t tf_softmax_reciprocal(int32_t sum, int32_t *exponent)
{
  const int32_t lz = tf_clz32((uint32_t)sum);
  *exponent = 12 - lz + 23;
  return tf_one_over_one_plus_x((int32_t)(((uint32_t)sum << lz) - 0x80000000u));
}

#endif /* TINYFUSE_QUANT_H */
