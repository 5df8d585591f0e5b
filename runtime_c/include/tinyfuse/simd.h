/* tinyfuse/simd.h: the SIMD primitives of the arm_dsp and arm_mve kernel variants
 * (codegen_templates/<op>/arm_dsp.c.j2, arm_mve.c.j2). Header-only C99 + ACLE; copied next to the
 * generated sources as tinyfuse_simd.h when a model uses such a kernel. The kernels keep the int8
 * arithmetic of quant.h (bit-exact with TFLM / CMSIS-NN); only the multiply-accumulate loops differ.
 *
 * arm_dsp needs the DSP extension (Cortex-M4, M7, M33, M55): SMLAD = two 16x16 MACs per instruction,
 * SXTB16 = two int8 lanes sign-extended to int16. arm_mve needs Helium (Cortex-M55). */
#ifndef TINYFUSE_SIMD_H
#define TINYFUSE_SIMD_H

#include <stdint.h>
#include <string.h>

#if !defined(__ARM_FEATURE_DSP)
#error "tinyfuse_simd.h: this model was compiled with arm_dsp/arm_mve kernels; build it with -mcpu=cortex-m4, m7, m33 or m55, or recompile with --kernels ref"
#endif
#include <arm_acle.h>
#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#endif

/* GCC's pre-register-allocation scheduler hoists the loads of an unrolled SMLAD loop ahead of the
 * MACs and then spills accumulators (TOOLCHAIN.md): the SIMD kernels turn that pass off. */
#if defined(__GNUC__) && !defined(__clang__)
#define TF_SIMD_KERNEL __attribute__((optimize("no-schedule-insns")))
#else
#define TF_SIMD_KERNEL
#endif

/* Hide a value from GCC's loop optimizer: keeps it from turning the table read tp[t] + 4*q into one
 * induction pointer per tap (nine pointers spilled to the stack and bumped every quad). */
#define TF_OPAQUE(v) __asm__("" : "+r"(v))

/* 4 bytes from or to any address (one LDR/STR: ARMv7E-M and v8-M Mainline allow unaligned words). */
static inline uint32_t tf_ld4(const void *p)
{
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static inline void tf_st4(void *p, uint32_t v)
{
  memcpy(p, &v, 4);
}

/* Two words from an 8-byte aligned address (one LDRD): the int16 pre-widened weights of the SMLAD
 * kernels (their rows and groups of 4 taps are 8-byte multiples; the weights are 16-byte aligned). */
static inline void tf_ld8a(const void *p, int32_t *lo, int32_t *hi)
{
#if defined(__GNUC__)
  const int32_t *q = (const int32_t *)__builtin_assume_aligned(p, 8);
#else
  const int32_t *q = (const int32_t *)p;
#endif
  int32_t v[2];
  memcpy(v, q, 8);
  *lo = v[0];
  *hi = v[1];
}

/* SXTB16: bytes 0 and 2 of x sign-extended into the two halfwords; _ror8: bytes 1 and 3. */
static inline int32_t tf_sxtb16(uint32_t x)
{
  return __sxtb16((int32_t)x);
}

/* GCC 12 does not fold __sxtb16(__ror(x, 8)) into one instruction (TOOLCHAIN.md) */
static inline int32_t tf_sxtb16_ror8(uint32_t x)
{
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}

/* SXTAB16: a + the sign-extended lanes, per halfword (the int8 input offset added while widening). */
static inline int32_t tf_sxtab16(int32_t a, uint32_t x)
{
  return __sxtab16(a, (int32_t)x);
}

static inline int32_t tf_sxtab16_ror8(int32_t a, uint32_t x)
{
  int32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(x));
  return r;
}

/* acc + lo(a)*lo(b) + hi(a)*hi(b) (SMLAD), without acc (SMUAD), and one lane: lo*lo (SMLABB), hi*hi (SMLATT). */
static inline int32_t tf_smlad(int32_t a, int32_t b, int32_t acc)
{
  return __smlad(a, b, acc);
}

static inline int32_t tf_smuad(int32_t a, int32_t b)
{
  return __smuad(a, b);
}

static inline int32_t tf_smlabb(int32_t a, int32_t b, int32_t acc)
{
  return __smlabb(a, b, acc);
}

static inline int32_t tf_smlatt(int32_t a, int32_t b, int32_t acc)
{
  return __smlatt(a, b, acc);
}

/* (x + offset) of one int8 lane, offset already packed into both halfwords: offset * 0x00010001. */
static inline int32_t tf_pack_offset(int32_t offset)
{
  return (int32_t)(((uint32_t)offset & 0xFFFFu) * 0x00010001u);
}

#endif /* TINYFUSE_SIMD_H */
