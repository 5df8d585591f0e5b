/* tinyfuse/quant16.h: the int16 (16x8) fixed-point arithmetic of TFLite Micro, bit-exact with its
 * reference kernels. Header-only, C99, <stdint.h> only; copied next to the generated sources of every
 * model whose kernels call a tf16_ helper, as tinyfuse_quant16.h, after tinyfuse_quant.h (it uses
 * tf_mbqm and TF_MBQM_SAT). The numpy specifications are compiler/quant.py (mbqm64, qadd with a left
 * shift or a subtraction) and compiler/ops/qnn_int16.py (lut_lookup16, logistic16, tanh16, softmax_int16). */
#ifndef TINYFUSE_QUANT16_H
#define TINYFUSE_QUANT16_H

#include <stdint.h>

#ifndef TINYFUSE_QUANT_H
#error "include tinyfuse_quant.h before tinyfuse_quant16.h"
#endif

static inline int16_t tf16_sat(int32_t x)
{
#if defined(__ARM_FEATURE_SAT) && defined(__GNUC__)
  return (int16_t)__builtin_arm_ssat(x, 16);     /* one SSAT (ARMv7-M and up; gcc and clang) */
#else
  return (int16_t)(x < -32768 ? -32768 : x > 32767 ? 32767 : x);
#endif
}

/* An int64 value clamped to int32 (the int32 output of a requantize, e.g. QUANTIZE int16 -> int32). */
static inline int32_t tf16_sat32(int64_t x)
{
  return (int32_t)(x < INT32_MIN ? INT32_MIN : x > INT32_MAX ? INT32_MAX : x);
}

/* TFLM's MultiplyByQuantizedMultiplier of an int64 accumulator (the 16x8 conv, depthwise and fully
 * connected kernels with an int64 bias): the Q31 multiplier m reduced to Q15, then one rounding shift,
 * (acc * r + 2^(14 - shift)) >> (15 - shift), shift <= 14. Exact for |acc| < 2^47 (TFLM's contract;
 * the product is formed modulo 2^64, so nothing is undefined beyond it); a result beyond int32, which
 * TFLM truncates, saturates to +-TF_MBQM_SAT. */
static inline int32_t tf16_mbqm64(int64_t acc, int32_t m, int32_t shift)
{
  const int64_t r = m < 0x7FFF0000 ? ((int64_t)m + (1 << 15)) >> 16 : 0x7FFF;
  const int32_t total = 15 - shift;
  const int64_t v = (int64_t)((uint64_t)acc * (uint64_t)r + ((uint64_t)1 << (total - 1))) >> total;
  return v > TF_MBQM_SAT ? TF_MBQM_SAT : v < -TF_MBQM_SAT ? -TF_MBQM_SAT : (int32_t)v;
}

/* TFLite reference ADD / SUB of int16 tensors: tf_qadd's arithmetic with 15 bits of headroom. */
static inline int32_t tf16_qadd(int32_t a, int32_t za, int32_t m1, int32_t sh1,
                                int32_t b, int32_t zb, int32_t m2, int32_t sh2,
                                int32_t mo, int32_t sho, int32_t zo)
{
  const int32_t x1 = tf_mbqm((a - za) * (1 << 15), m1, sh1);
  const int32_t x2 = tf_mbqm((b - zb) * (1 << 15), m2, sh2);
  return tf_mbqm(x1 + x2, mo, sho) + zo;
}

/* TFLite reference SUB of int16 tensors (SubElementwise): the rescaled second input subtracted. */
static inline int32_t tf16_qsub(int32_t a, int32_t za, int32_t m1, int32_t sh1,
                                int32_t b, int32_t zb, int32_t m2, int32_t sh2,
                                int32_t mo, int32_t sho, int32_t zo)
{
  const int32_t x1 = tf_mbqm((a - za) * (1 << 15), m1, sh1);
  const int32_t x2 = tf_mbqm((b - zb) * (1 << 15), m2, sh2);
  return tf_mbqm(x1 - x2, mo, sho) + zo;
}

/* The integer of a quantize to int16 (ONNX QuantizeLinear, round half to even): tf_quantize_rint with
 * the clamp at +-65536, beyond which every int16 code saturates alike. */
static inline int32_t tf16_quantize_rint(float v)
{
  volatile float t;
  v = v > -65536.0f ? v : -65536.0f;
  v = v < 65536.0f ? v : 65536.0f;
  t = v + 12582912.0f;
  return (int32_t)(t - 12582912.0f);
}

/* TFLM's LUTLookup of an int16 value in a 513-entry table: the high 9 bits index it, the low 7
 * interpolate to the next entry, rounded half up. */
static inline int16_t tf16_lut(int32_t v, const int16_t *lut)
{
  const int32_t index = 256 + (v >> 7);
  const int32_t offset = v & 0x7f;
  const int32_t base = lut[index];
  const int32_t slope = (int16_t)(lut[index + 1] - base);
  return (int16_t)(base + ((slope * offset + 64) >> 7));
}

/* reference_integer_ops::Logistic on int16: x * mul rounded right by shift into units of 1/(3*4096),
 * |x| split into an index of the 256-entry table ``tab`` of sigmoid(k/24) in Q0.16 and 9 fraction
 * bits; the result in Q0.15. */
static inline int16_t tf16_logistic(int32_t x, int32_t mul, int32_t shift, const uint16_t *tab)
{
  const int32_t in = (x * mul + (shift > 0 ? 1 << (shift - 1) : 0)) >> shift;
  const uint32_t a = (uint32_t)(in < 0 ? -in : in);
  const uint32_t uh = a >> 9;
  uint32_t res;
  if (uh >= 255u) {
    res = 0x7FFFu << 10;
  } else {
    const uint32_t ua = tab[uh], ub = tab[uh + 1];
    res = (ua << 9) + (a & 0x1FFu) * (ub - ua);
  }
  res = in >= 0 ? res + (1u << 9) : (1u << 25) - res + (1u << 9) - 1u;
  return (int16_t)(res >> 10);
}

/* reference_integer_ops::Tanh on int16: as tf16_logistic with 8 fraction bits, tanh(x) = 2 sigmoid(2x) - 1. */
static inline int16_t tf16_tanh(int32_t x, int32_t mul, int32_t shift, const uint16_t *tab)
{
  const int32_t in = (x * mul + (shift > 0 ? 1 << (shift - 1) : 0)) >> shift;
  const uint32_t a = (uint32_t)(in < 0 ? -in : in);
  const uint32_t uh = a >> 8;
  int32_t res;
  if (uh >= 255u) {
    res = 0xFFFF << 8;
  } else {
    const uint32_t ua = tab[uh], ub = tab[uh + 1];
    res = (int32_t)((ua << 8) + (a & 0xFFu) * (ub - ua));
  }
  res = in >= 0 ? res - (1 << 23) + (1 << 7) : -res + (1 << 23) + (1 << 7) - 1;
  return (int16_t)(res >> 8);
}

#endif /* TINYFUSE_QUANT16_H */
