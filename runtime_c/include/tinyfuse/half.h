/* tinyfuse_half.h: IEEE 754 binary16 → binary32, exactly (every half value is a float value).
 * Used by models compiled with --weights-dtype float16: the float weights live in flash as uint16_t
 * bit patterns and each read converts. On Arm cores whose FPU converts half precision (every
 * M-profile FPU: FPv4-SP of Cortex-M4F, FPv5 of M7/M33, M55; ACLE __ARM_FP bit 1, which GCC sets
 * for FPv5-D16 only, or an Armv7E-M / Armv8-M Mainline core with an FPU) one VMOV + VCVTB (IEEE format: FPSCR.AHP = 0,
 * the reset value; with FPSCR.FZ = 0, also the reset value, subnormal halves convert exactly); elsewhere
 * (or with TINYFUSE_PORTABLE_HALF defined) portable C bit arithmetic.
 * Layout (IEEE 754-2008 binary16): sign 1 bit, exponent 5 bits (bias 15), mantissa 10 bits. */
#ifndef TINYFUSE_HALF_H
#define TINYFUSE_HALF_H

#include <stdint.h>
#include <string.h>

#if defined(__ARM_FP) && ((__ARM_FP & 2) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__)) \
    && !defined(TINYFUSE_PORTABLE_HALF)
static inline float tf_h2f(uint16_t h) {
  float f;
  __asm__("vmov %0, %1\n\tvcvtb.f32.f16 %0, %0" : "=t"(f) : "r"((uint32_t)h));
  return f;
}
#else
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

#endif
