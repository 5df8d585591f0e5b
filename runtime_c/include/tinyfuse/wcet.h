/* tinyfuse/wcet.h: --wcet (real-time mode) forms of the int8 softmax arithmetic of tinyfuse/quant.h
 * (emitted beside the model as tinyfuse_wcet.h, after tinyfuse_quant.h): the same values as
 * tf_exp_on_negative_values / tf_softmax_reciprocal, without data-dependent branches (every conditional
 * factor or clamp is a mask select), so the instructions executed do not depend on the input. */
#ifndef TINYFUSE_WCET_H
#define TINYFUSE_WCET_H

#include <stdint.h>
#include "tinyfuse_quant.h"


/* tf_sat_shl without branches. */
static inline int32_t tf_sat_shl_ct(int32_t x, int32_t e)
{
  const int32_t thr = (int32_t)((1u << (31 - e)) - 1u);
  const int32_t hi = -(int32_t)(x > thr), lo = -(int32_t)(x < -thr);
  const int32_t v = (int32_t)((uint32_t)x << e);
  return (int32_t)(((uint32_t)INT32_MAX & (uint32_t)hi) | ((uint32_t)INT32_MIN & (uint32_t)lo) |
                   ((uint32_t)v & ~(uint32_t)(hi | lo)));
}

/* y or tf_srdhm(y, c), chosen by bit (0 or 1) with a mask. */
static inline int32_t tf_srdhm_if(int32_t y, int32_t c, int32_t bit)
{
  const uint32_t m = (uint32_t)-bit;
  return (int32_t)(((uint32_t)tf_srdhm(y, c) & m) | ((uint32_t)y & ~m));
}

/* tf_exp_on_negative_values (a <= 0, Q5.26) with every factor computed and selected by mask. */
static inline int32_t tf_exp_on_negative_values_ct(int32_t a)
{
  const int32_t quarter = 1 << 24;
  const int32_t r = (a & (quarter - 1)) - quarter;
  const int32_t rest = r - a;
  int32_t y = tf_exp_quarter(r * 32);
  const uint32_t zero = (uint32_t)-(int32_t)(a == 0);
  y = tf_srdhm_if(y, 1672461947, (rest >> 24) & 1);
  y = tf_srdhm_if(y, 1302514674, (rest >> 25) & 1);
  y = tf_srdhm_if(y, 790015084, (rest >> 26) & 1);
  y = tf_srdhm_if(y, 290630308, (rest >> 27) & 1);
  y = tf_srdhm_if(y, 39332535, (rest >> 28) & 1);
  y = tf_srdhm_if(y, 720401, (rest >> 29) & 1);
  y = tf_srdhm_if(y, 242, (rest >> 30) & 1);
  return (int32_t)(((uint32_t)INT32_MAX & zero) | ((uint32_t)y & ~zero));
}

/* tf_one_over_one_plus_x and tf_softmax_reciprocal with the branch-free saturating shift. */
static inline int32_t tf_one_over_one_plus_x_ct(int32_t a)
{
  const int32_t d = (int32_t)(((int64_t)a + INT32_MAX + 1) >> 1);
  int32_t x = 1515870810 + tf_srdhm(d, -1010580540);
  for (int i = 0; i < 3; ++i)
    x += tf_sat_shl_ct(tf_srdhm(x, (1 << 29) - tf_srdhm(d, x)), 2);
  return tf_sat_shl_ct(x, 1);
}

static inline int32_t tf_softmax_reciprocal_ct(int32_t sum, int32_t *exponent)
{
  const int32_t lz = tf_clz32((uint32_t)sum);
  *exponent = 12 - lz + 23;
  return tf_one_over_one_plus_x_ct((int32_t)(((uint32_t)sum << lz) - 0x80000000u));
}

/* tf_avg_round (TFLM average: half away from zero) with the sign as a mask instead of a branch:
 * sum > 0 adds count / 2, sum <= 0 subtracts it (for sum = 0 both give 0). */
static inline int32_t tf_avg_round_ct(int32_t sum, int32_t count)
{
  const int32_t s = sum >> 31, half = count / 2;
  return (sum + ((half ^ s) - s)) / count;
}

/* rintf (round half to even, the default FPU rounding) without the library's branches: x clamped to
 * +-2^22 by compares (conditional moves, no branch), then x + 1.5 * 2^23 - 1.5 * 2^23 rounds it to an
 * integer in the FPU (every float of magnitude below 2^22 exactly as rintf; beyond, a value of at
 * least 2^22 in magnitude, which every int8/uint8 quantize saturates the same). */
static inline float tf_rintf_ct(float x)
{
  const float lim = 4194304.0f, magic = 12582912.0f;
  volatile float t;
  x = x > lim ? lim : x;
  x = x < -lim ? -lim : x;
  t = x + magic;
  return t - magic;
}

#endif /* TINYFUSE_WCET_H */
