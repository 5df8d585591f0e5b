/* tinyfuse_half_io.h: float32 ↔ the 16-bit storage types of model inputs and outputs (ONNX float16 =
 * IEEE 754 binary16, ONNX bfloat16 = the upper half of a binary32), held in C as uint16_t bit patterns.
 * The model computes in float32: an input converts exactly (tf_h2f of tinyfuse_half.h, tf_bf2f), an
 * output rounds to nearest, ties to even (tf_f2h, tf_f2bf; as numpy astype(float16) and ONNX Cast-19).
 * tf_f2h: values >= 65520 in magnitude become infinity, below 2^-14 a subnormal half (one float32
 * addition of 0.5f aligns the mantissa: needs round-to-nearest and no flush-to-zero, the reset state of
 * every FPU), NaN becomes the quiet NaN 0x7e00. tf_f2bf: NaN keeps its upper bits, quietened. */
#ifndef TINYFUSE_HALF_IO_H
#define TINYFUSE_HALF_IO_H

#include <stdint.h>
#include <string.h>
#include "tinyfuse_half.h"

static inline uint16_t tf_f2h(float f) {
  uint32_t x, sign, o;
  float a;
  memcpy(&x, &f, sizeof x);
  sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x47800000u) {                 /* >= 65536, inf, NaN */
    o = x > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (x < 0x38800000u) {           /* < 2^-14: subnormal half or zero */
    memcpy(&a, &x, sizeof a);
    a += 0.5f;                            /* 0.5 = 2^-1: the mantissa's last bit weighs 2^-24 */
    memcpy(&o, &a, sizeof o);
    o -= 0x3f000000u;
  } else {                                /* normal: rebias 127 → 15, round to nearest even */
    x += 0xc8000fffu + ((x >> 13) & 1u);
    o = x >> 13;
  }
  return (uint16_t)(o | sign);
}

static inline float tf_bf2f(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint16_t tf_f2bf(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

#endif
