/* tinyfuse/requant_arm.h: the short exact int8 requantize of the DSP kernels (Cortex-M4, M7, M33, M55)
 * and the single-lane MACs of the row-buffered depthwise kernel (codegen_templates/depthwise/rows_arm_dsp.c.j2).
 * Header-only C99 + ACLE; copied next to the generated sources as tinyfuse_requant_arm.h. The host twin
 * (portable C, for the sanitizer builds) is in simd_host.h; the numpy twin and the conditions under which
 * it equals quant.h's tf_mbqm bit for bit are compiler/lower/requant_arm.py (tests/unit/test_requant_arm.py
 * checks them exhaustively over the accumulator ranges that occur).
 *
 * Requantize, TFLM double rounding, right shift e = -shift >= 1 (a real multiplier below 1/2):
 *   tf_mbqm(acc, m, -e) + zp
 *     = RDBP(SRDHM(acc, m), e) + zp
 *     = (SMMULR(2 acc, m) - [acc < 0] + 2^(e-1) + zp 2^e) >> e          (arithmetic shift)
 *     = SMMLAR(2 acc, m, hz + (2 acc >> 31)) >> e,   hz = 2^(e-1) + zp 2^e (a compile-time constant)
 * SRDHM(a, m) = floor((a m + 2^30) / 2^31) (quant.h) = floor((2a m + 2^31) / 2^32) = SMMULR(2a, m) while
 * 2a fits int32; RDBP's "half away from zero" is floor((x + 2^(e-1) - [x < 0]) / 2^e), and [x < 0] may be
 * replaced by [acc < 0] (m >= 0: acc < 0 gives x <= 0, and x = 0 gives the same floor either way);
 * adding zp 2^e before the shift adds zp after it. The kernel keeps 2 acc (its weights and bias are
 * doubled at compile time) and checks per channel that 2 acc and the SMMLAR sum fit int32. Then an SSAT
 * (tf_sat_i8) clamps; with a constant e gcc folds the shift into it (SSAT Rd, #8, Rn, ASR #e). */
#ifndef TINYFUSE_REQUANT_ARM_H
#define TINYFUSE_REQUANT_ARM_H

#include <stdint.h>
#include <arm_acle.h>

/* SMMLAR: c + (a * b + 2^31) / 2^32, the high word of the rounded 64-bit sum (Arm ARM A7.7.146). */
static inline int32_t tf_smmlar(int32_t a, int32_t b, int32_t c)
{
  int32_t r;
  __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}

/* The requantized value before the clamp (see above): a2 = 2 * acc, hz = 2^(e-1) + zp * 2^e, e >= 1. */
static inline int32_t tf_rq2(int32_t a2, int32_t m, int32_t hz, int32_t e)
{
  return tf_smmlar(a2, m, hz + (a2 >> 31)) >> e;
}

/* an int8 value clamped to [lo, hi] (a fused activation narrower than int8) */
static inline int8_t tf_clamp_i8(int8_t v, int32_t lo, int32_t hi)
{
  return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

/* SMLABT: acc + bottom(a) * top(b); SMLATB: acc + top(a) * bottom(b) (16 x 16 signed). */
static inline int32_t tf_smlabt(int32_t a, int32_t b, int32_t acc)
{
  return __smlabt(a, b, acc);
}

static inline int32_t tf_smlatb(int32_t a, int32_t b, int32_t acc)
{
  return __smlatb(a, b, acc);
}

#endif /* TINYFUSE_REQUANT_ARM_H */
