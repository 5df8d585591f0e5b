/* tinyfuse/qelem.h: TFLM's int8 element-wise arithmetic that needs more than one expression (int8 DIV).
 * Header-only C99; copied next to the generated sources as tinyfuse_qelem.h by the kernels that call it,
 * after tinyfuse_quant.h (tf_srdhm, tf_rdbp, tf_clz32, tf_one_over_one_plus_x). The numpy twin is
 * compiler/ops/qelemwise.py (qnn.div). */
#ifndef TINYFUSE_QELEM_H
#define TINYFUSE_QELEM_H

#include <stdint.h>

/* CountLeadingSignBits of an int32: the leading bits equal to the sign bit, less one (31 for 0 and -1). */
static inline int32_t tf_cls32(int32_t x)
{
  const uint32_t u = (uint32_t)(x ^ (x >> 31));
  return u == 0u ? 31 : tf_clz32(u) - 1;
}

/* TFLM int8 DIV (reference_ops::DivElementwise): (a - za) / (b - zb) requantized by m, shift
 * (QuantizeMultiplier of s_a / (s_b s_out)), + zo; b != zb (TFLM's kernel does not define a zero divisor).
 * The divisor's reciprocal is GetReciprocal's (gemmlowp one_over_one_plus_x on the normalised divisor), the
 * dividend normalised by its sign bits, the quotient MultiplyByQuantizedMultiplierSmallerThanOneExp'd.
 * Where that final RoundingDivideByPOT exponent exceeds 31 (small quotients of a multiplier below 2^6:
 * undefined shifts in TFLM's C++) the quotient, below 1/2 in magnitude, rounds to 0. */
static inline int32_t tf_qdiv(int32_t a, int32_t za, int32_t b, int32_t zb, int32_t m, int32_t shift, int32_t zo)
{
  int32_t x = a - za, y = b - zb;
  if (y < 0) {
    x = -x;
    y = -y;
  }
  const int32_t lz = tf_clz32((uint32_t)y);
  const int32_t inv = tf_one_over_one_plus_x((int32_t)(((uint32_t)y << lz) - 0x80000000u));
  const int32_t headroom = tf_cls32(x);
  const int32_t quotient = tf_srdhm((int32_t)((uint32_t)x << headroom), inv);
  const int32_t e = (31 - lz) + headroom - shift;
  return (e > 31 ? 0 : tf_rdbp(tf_srdhm(quotient, m), e)) + zo;
}

#endif /* TINYFUSE_QELEM_H */
