/* tinyfuse_half.h: IEEE 754 binary16 → binary32, exactly (every half value is a float value).
 * Used by models compiled with --weights-dtype float16: the float weights live in flash as uint16_t
 * bit patterns and each read converts. Portable C (no __fp16, no F16C); on cores with FP16
 * conversion instructions the bit arithmetic below is a handful of integer ops.
 * Layout (IEEE 754-2008 binary16): sign 1 bit, exponent 5 bits (bias 15), mantissa 10 bits. */
#ifndef TINYFUSE_HALF_H
#define TINYFUSE_HALF_H

#include <stdint.h>
#include <string.h>

static inline float tf_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
  float f;
  if (exp == 0x1fu) {
    bits = sign | 0x7f800000u | (man << 13);           /* inf, NaN (payload kept) */
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (man << 13);  /* normal: rebias 15 → 127 */
  } else {
    f = (float)man * 5.9604644775390625e-8f;           /* zero, subnormal: man · 2^-24, exact */
    return sign ? -f : f;
  }
  memcpy(&f, &bits, sizeof f);
  return f;
}

#endif
