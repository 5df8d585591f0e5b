/* tinyfuse/fixedpoint.h: gemmlowp fixed-point functions of TFLite's int8 LOG_SOFTMAX and
 * L2_NORMALIZATION (kernels/internal/common.h), bit-exact with TFLite Micro. Header-only, C99; needs
 * tinyfuse_quant.h (included first by the model's source). The numpy specification is
 * compiler/ops/fixedpoint.py. A FixedPoint<int32, I> holds value * 2^(31 - I). */
#ifndef TINYFUSE_FIXEDPOINT_H
#define TINYFUSE_FIXEDPOINT_H

#include <stdint.h>

/* SaturatingRoundingMultiplyByPOT(Param): x * 2^e, saturating for e > 0, rounding for e < 0. */
static inline int32_t tf_sat_pot(int32_t x, int32_t e)
{
  if (e == 0) return x;
  return e > 0 ? tf_sat_shl(x, e) : tf_rdbp(x, -e);
}

static inline int32_t tf_sat32(int64_t x)
{
  return x > INT32_MAX ? INT32_MAX : x < INT32_MIN ? INT32_MIN : (int32_t)x;
}

/* two's complement int32 add / sub (gemmlowp's raw + and -) */
static inline int32_t tf_add32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static inline int32_t tf_sub32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

static inline int32_t tf_clz_or_32(int32_t x)
{
  return x == 0 ? 32 : tf_clz32((uint32_t)x);
}

/* log(x) for x >= 1: log_x_for_x_greater_than_or_equal_to_1_impl<out_bits, in_bits>. */
static inline int32_t tf_log_x_ge_1(int32_t z_a, int32_t in_bits, int32_t out_bits)
{
  const int32_t acc_bits = out_bits + 1;
  const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301, sqrt_half = 1518500250;
  const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769, alpha_f = 638450708;
  const int32_t shifted_quarter = tf_sat_pot(536870912, -acc_bits);
  const int32_t hz_a = tf_clz_or_32(z_a);
  const int32_t r_a = tf_sat_pot(tf_srdhm(tf_sat_pot(z_a, hz_a - 1), sqrt_half), 1);
  const int32_t za_adj = tf_sat32((int64_t)tf_sat_pot(in_bits - hz_a, 31 - acc_bits) + shifted_quarter);
  const int32_t hz_b = tf_clz_or_32(tf_srdhm(z_a, sqrt_half)) - 1;
  const int32_t r_b = tf_sat_pot(z_a, hz_b);
  const int32_t zb_adj = tf_sat32((int64_t)tf_sat_pot(in_bits - hz_b, 31 - acc_bits) - shifted_quarter);
  const int32_t r = r_a < r_b ? r_a : r_b;
  const int32_t z_pow_2_adj = za_adj > zb_adj ? za_adj : zb_adj;
  const int64_t s = (int64_t)r + sqrt_sqrt_half;
  const int32_t p = (int32_t)((s + (s >= 0 ? 1 : -1)) / 2);
  const int32_t q = tf_add32(tf_sub32(r, sqrt_sqrt_half), tf_sub32(r, sqrt_sqrt_half));
  const int32_t common_sq = tf_srdhm(q, q);
  const int32_t num = tf_add32(tf_srdhm(q, r), tf_srdhm(tf_srdhm(q, common_sq), alpha_n));
  const int32_t denom = tf_add32(tf_srdhm(p, tf_add32(tf_add32(alpha_i, q), tf_srdhm(alpha_d, common_sq))),
                                 tf_srdhm(alpha_f, q));
  const int32_t recip = tf_one_over_one_plus_x(denom);
  const int32_t total = tf_add32(tf_srdhm(z_pow_2_adj, log_2), tf_srdhm(tf_sat_pot(num, -acc_bits), recip));
  return tf_sat_pot(total, acc_bits - out_bits);
}

/* GetInvSqrtQuantizedMultiplierExp(x, -1): 1/sqrt(x) as a Q31 multiplier and a shift, x >= 0. */
static inline int32_t tf_inv_sqrt_multiplier(int32_t x, int32_t *shift_out)
{
  int32_t shift = 11, pairs, y = 1 << 28, half;
  if (x <= 1) {
    *shift_out = 0;
    return INT32_MAX;
  }
  while (x >= (1 << 29)) {
    x /= 4;
    ++shift;
  }
  pairs = (tf_clz32((uint32_t)x) - 1) / 2 - 1;
  shift -= pairs;
  x <<= 2 * pairs;
  half = tf_rdbp(x >> 1, 1);
  for (int i = 0; i < 5; ++i) {
    const int32_t y3 = tf_sat_pot(tf_srdhm(tf_srdhm(y, y), y), 6);
    y = tf_sat_pot(tf_sub32(tf_srdhm((1 << 28) + (1 << 27), y), tf_srdhm(half, y3)), 3);
  }
  y = tf_srdhm(y, 1518500250);
  if (shift < 0) {
    y = (int32_t)((uint32_t)y << -shift);
    shift = 0;
  }
  *shift_out = -shift;
  return y;
}

#endif /* TINYFUSE_FIXEDPOINT_H */
