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

/* MultiplyByQuantizedMultiplier, double rounding (TFLM default): acc * m/2^31 * 2^shift.
 * m >= 0, as quantize_multiplier makes every multiplier, so the one saturating case of SRDHM
 * (a == m == INT32_MIN) cannot occur and tf_srdhm's test is left out. */
static inline int32_t tf_mbqm(int32_t acc, int32_t m, int32_t shift)
{
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  const int32_t a = (int32_t)((uint32_t)acc << left);
  return tf_rdbp((int32_t)(((int64_t)a * (int64_t)m + (1LL << 30)) >> 31), right);
}

/* Single rounding: (acc*m + 2^(30-shift)) >> (31-shift) in 64 bits. */
static inline int32_t tf_mbqm_single(int32_t acc, int32_t m, int32_t shift)
{
  const int32_t total = 31 - shift;
  return (int32_t)(((int64_t)acc * (int64_t)m + (1LL << (total - 1))) >> total);
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

#endif /* TINYFUSE_QUANT_H */
