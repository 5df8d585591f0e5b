/* tinyfuse/simd_host.h: the primitives of tinyfuse/simd.h (and the few ACLE / Helium intrinsics the
 * arm_dsp and arm_mve kernel templates call directly) in portable C99, so a model compiled for
 * cortex-m4 / cortex-m55 builds and runs on the host, e.g. under AddressSanitizer and
 * UndefinedBehaviorSanitizer (tests/c/test_sanitize_families.py). NOT part of the generated sources:
 * the host harness force-includes it (gcc/clang -include) before the model, and it defines
 * TINYFUSE_SIMD_H, so the shipped simd.h (which needs __ARM_FEATURE_DSP, <arm_acle.h> and inline
 * sxtb16/sxtab16 asm) is skipped. tests/unit/test_simd_host.py checks that every static inline function
 * of simd.h is defined here too.
 *
 * Semantics follow the Arm ARM (DDI 0403E, ARMv7-M: SMLAD, SMLABB, SMLATT, SXTB16, SXTAB16) and the
 * MVE intrinsics reference (vldrbq_s8, vldrbq_z_s8: a zeroing predicated load touches only the active
 * lanes' bytes; vctp8q; vmladavaq_s8). SMLAD/SMLABB/SMLATT set the Q flag on signed overflow and wrap:
 * here the sum is computed in uint32 (wrapping, as the hardware), so UBSan reports no overflow the
 * hardware would not have. */
#ifndef TINYFUSE_SIMD_H
#define TINYFUSE_SIMD_H

#include <assert.h>
#include <stdint.h>
#include <string.h>

#define TF_SIMD_KERNEL
#define TF_OPAQUE(v) ((void)0)

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

/* Two words from an 8-byte aligned address (simd.h: the int16 pre-widened weights' LDRD); the
 * alignment is checked here, where the sanitizer builds run. */
static inline void tf_ld8a(const void *p, int32_t *lo, int32_t *hi)
{
  int32_t v[2];
  assert(((uintptr_t)p & 7u) == 0);
  memcpy(v, p, 8);
  *lo = v[0];
  *hi = v[1];
}

/* halfword i (0: bits 15..0, 1: bits 31..16) of x as a signed value */
static inline int32_t tf_h_(uint32_t x, int i)
{
  return (int32_t)(int16_t)(uint16_t)(x >> (16 * i));
}

/* byte i of x as a signed value */
static inline int32_t tf_b_(uint32_t x, int i)
{
  return (int32_t)(int8_t)(uint8_t)(x >> (8 * i));
}

static inline int32_t tf_pack_(int32_t lo, int32_t hi)
{
  return (int32_t)(((uint32_t)lo & 0xFFFFu) | (((uint32_t)hi & 0xFFFFu) << 16));
}

static inline int32_t tf_sxtb16(uint32_t x)
{
  return tf_pack_(tf_b_(x, 0), tf_b_(x, 2));
}

static inline int32_t tf_sxtb16_ror8(uint32_t x)
{
  return tf_pack_(tf_b_(x, 1), tf_b_(x, 3));
}

static inline int32_t tf_sxtab16(int32_t a, uint32_t x)
{
  return tf_pack_(tf_h_((uint32_t)a, 0) + tf_b_(x, 0), tf_h_((uint32_t)a, 1) + tf_b_(x, 2));
}

static inline int32_t tf_sxtab16_ror8(int32_t a, uint32_t x)
{
  return tf_pack_(tf_h_((uint32_t)a, 0) + tf_b_(x, 1), tf_h_((uint32_t)a, 1) + tf_b_(x, 3));
}

static inline int32_t tf_smlad(int32_t a, int32_t b, int32_t acc)
{
  uint32_t p0 = (uint32_t)(tf_h_((uint32_t)a, 0) * tf_h_((uint32_t)b, 0));
  uint32_t p1 = (uint32_t)(tf_h_((uint32_t)a, 1) * tf_h_((uint32_t)b, 1));
  return (int32_t)((uint32_t)acc + p0 + p1);
}

static inline int32_t tf_smuad(int32_t a, int32_t b)
{
  return tf_smlad(a, b, 0);
}

static inline int32_t tf_smlabb(int32_t a, int32_t b, int32_t acc)
{
  return (int32_t)((uint32_t)acc + (uint32_t)(tf_h_((uint32_t)a, 0) * tf_h_((uint32_t)b, 0)));
}

static inline int32_t tf_smlatt(int32_t a, int32_t b, int32_t acc)
{
  return (int32_t)((uint32_t)acc + (uint32_t)(tf_h_((uint32_t)a, 1) * tf_h_((uint32_t)b, 1)));
}

static inline int32_t tf_pack_offset(int32_t offset)
{
  return (int32_t)(((uint32_t)offset & 0xFFFFu) * 0x00010001u);
}

/* ---- Helium (arm_mve.h) subset: 16 int8 lanes, a per-byte predicate ---- */
typedef struct { int8_t v[16]; } int8x16_t;
typedef uint16_t mve_pred16_t;

static inline int8x16_t vldrbq_s8(const int8_t *p)
{
  int8x16_t r;
  memcpy(r.v, p, 16);
  return r;
}

/* VCTP8: lanes 0 .. min(n, 16) - 1 active */
static inline mve_pred16_t vctp8q(uint32_t n)
{
  return (mve_pred16_t)(n >= 16u ? 0xFFFFu : (1u << n) - 1u);
}

static inline int8x16_t vldrbq_z_s8(const int8_t *p, mve_pred16_t pred)
{
  int8x16_t r;
  int i;
  for (i = 0; i < 16; ++i)
    r.v[i] = (((unsigned)pred >> i) & 1u) ? p[i] : (int8_t)0;
  return r;
}

/* VMLADAVA.S8: acc + sum of the 16 lane products (wrapping 32-bit, as the hardware) */
static inline int32_t vmladavaq_s8(int32_t acc, int8x16_t a, int8x16_t b)
{
  uint32_t s = (uint32_t)acc;
  int i;
  for (i = 0; i < 16; ++i)
    s += (uint32_t)((int32_t)a.v[i] * (int32_t)b.v[i]);
  return (int32_t)s;
}

/* ---- requant_arm.h (its functions, portable; defining its guard skips the shipped header) ---- */
#define TINYFUSE_REQUANT_ARM_H

/* SMMLAR: c + (a * b + 2^31) / 2^32, high word (wrapping to 32 bits, as the hardware) */
static inline int32_t tf_smmlar(int32_t a, int32_t b, int32_t c)
{
  const int64_t s = (int64_t)a * (int64_t)b + (int64_t)0x80000000LL;
  return (int32_t)((uint32_t)c + (uint32_t)(uint64_t)(s >> 32));
}

static inline int32_t tf_rq2(int32_t a2, int32_t m, int32_t hz, int32_t e)
{
  return tf_smmlar(a2, m, hz + (a2 >> 31)) >> e;
}

static inline int8_t tf_clamp_i8(int8_t v, int32_t lo, int32_t hi)
{
  return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

static inline int32_t tf_smlabt(int32_t a, int32_t b, int32_t acc)
{
  return (int32_t)((uint32_t)acc + (uint32_t)(tf_h_((uint32_t)a, 0) * tf_h_((uint32_t)b, 1)));
}

static inline int32_t tf_smlatb(int32_t a, int32_t b, int32_t acc)
{
  return (int32_t)((uint32_t)acc + (uint32_t)(tf_h_((uint32_t)a, 1) * tf_h_((uint32_t)b, 0)));
}

/* ---- Helium int32x4 subset (the vector requantization of the in-place depthwise,
 * codegen_templates/inplace_conv/arm_mve.c.j2): 4 int32 lanes, lane i active when predicate bit 4i is
 * set (VCTP32 sets 4 bits per lane). VQRDMULH, VQADD saturate; VRSHL by a negative count rounds the
 * right shift half up, computed without overflow (as the hardware). ---- */
typedef struct { int32_t v[4]; } int32x4_t;
typedef struct { uint32_t v[4]; } uint32x4_t;

static inline mve_pred16_t vctp32q(uint32_t n)
{
  return (mve_pred16_t)(n >= 4u ? 0xFFFFu : (1u << (4u * n)) - 1u);
}

static inline int32x4_t vldrbq_s32(const int8_t *p)
{
  int32x4_t r;
  int i;
  for (i = 0; i < 4; ++i)
    r.v[i] = p[i];
  return r;
}

static inline int32x4_t vldrbq_z_s32(const int8_t *p, mve_pred16_t pred)
{
  int32x4_t r;
  int i;
  for (i = 0; i < 4; ++i)
    r.v[i] = (((unsigned)pred >> (4 * i)) & 1u) ? p[i] : 0;
  return r;
}

static inline int32x4_t vdupq_n_s32(int32_t a)
{
  int32x4_t r;
  int i;
  for (i = 0; i < 4; ++i)
    r.v[i] = a;
  return r;
}

/* VMLA.S32: add + m1 * m2 per lane, wrapping */
static inline int32x4_t vmlaq_n_s32(int32x4_t add, int32x4_t m1, int32_t m2)
{
  int i;
  for (i = 0; i < 4; ++i)
    add.v[i] = (int32_t)((uint32_t)add.v[i] + (uint32_t)m1.v[i] * (uint32_t)m2);
  return add;
}

static inline int32x4_t vqrdmulhq_n_s32(int32x4_t a, int32_t b)
{
  int i;
  for (i = 0; i < 4; ++i)
    a.v[i] = (a.v[i] == INT32_MIN && b == INT32_MIN) ? INT32_MAX
             : (int32_t)(((int64_t)a.v[i] * (int64_t)b + (1LL << 30)) >> 31);
  return a;
}

static inline int32x4_t vrshlq_n_s32(int32x4_t a, int32_t b)
{
  int i;
  for (i = 0; i < 4; ++i) {
    if (b >= 0)
      a.v[i] = (int32_t)((uint32_t)a.v[i] << (b > 31 ? 31 : b));
    else
      a.v[i] = (int32_t)(((int64_t)a.v[i] + (1LL << (-b - 1))) >> -b);
  }
  return a;
}

static inline int32x4_t vqaddq_s32(int32x4_t a, int32x4_t b)
{
  int i;
  for (i = 0; i < 4; ++i) {
    const int64_t s = (int64_t)a.v[i] + b.v[i];
    a.v[i] = s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : (int32_t)s;
  }
  return a;
}

/* VSHR.S32 (arithmetic, 1 <= n <= 32) */
static inline int32x4_t vshrq_n_s32(int32x4_t a, int n)
{
  int i;
  for (i = 0; i < 4; ++i)
    a.v[i] = n >= 32 ? (a.v[i] < 0 ? -1 : 0) : (a.v[i] < 0 ? ~(~a.v[i] >> n) : a.v[i] >> n);
  return a;
}

static inline int32x4_t vaddq_n_s32(int32x4_t a, int32_t b)
{
  int i;
  for (i = 0; i < 4; ++i)
    a.v[i] = (int32_t)((uint32_t)a.v[i] + (uint32_t)b);
  return a;
}

static inline int32x4_t vmaxq_s32(int32x4_t a, int32x4_t b)
{
  int i;
  for (i = 0; i < 4; ++i)
    a.v[i] = a.v[i] > b.v[i] ? a.v[i] : b.v[i];
  return a;
}

static inline int32x4_t vminq_s32(int32x4_t a, int32x4_t b)
{
  int i;
  for (i = 0; i < 4; ++i)
    a.v[i] = a.v[i] < b.v[i] ? a.v[i] : b.v[i];
  return a;
}

/* VIDUP: a, a + imm, a + 2 imm, a + 3 imm */
static inline uint32x4_t vidupq_n_u32(uint32_t a, int imm)
{
  uint32x4_t r;
  int i;
  for (i = 0; i < 4; ++i)
    r.v[i] = a + (uint32_t)(i * imm);
  return r;
}

static inline uint32x4_t vmulq_n_u32(uint32x4_t a, uint32_t b)
{
  int i;
  for (i = 0; i < 4; ++i)
    a.v[i] *= b;
  return a;
}

/* VSTRB.32 scatter: the low byte of lane i to base[offset[i]] (active lanes only) */
static inline void vstrbq_scatter_offset_p_s32(int8_t *base, uint32x4_t offset, int32x4_t value, mve_pred16_t pred)
{
  int i;
  for (i = 0; i < 4; ++i)
    if (((unsigned)pred >> (4 * i)) & 1u)
      base[offset.v[i]] = (int8_t)(uint8_t)((uint32_t)value.v[i] & 0xFFu);
}

/* VSTRB.32 scatter: base[offset[i]] = the low byte of lane i */
static inline void vstrbq_scatter_offset_s32(int8_t *base, uint32x4_t offset, int32x4_t value)
{
  int i;
  for (i = 0; i < 4; ++i)
    base[offset.v[i]] = (int8_t)(uint8_t)((uint32_t)value.v[i] & 0xFFu);
}

static inline int32x4_t vldrwq_s32(const int32_t *p)
{
  int32x4_t r;
  memcpy(r.v, p, 16);
  return r;
}

static inline int32x4_t vsetq_lane_s32(int32_t a, int32x4_t v, int lane)
{
  v.v[lane] = a;
  return v;
}

static inline int32x4_t vaddq_s32(int32x4_t a, int32x4_t b)
{
  int i;
  for (i = 0; i < 4; ++i)
    a.v[i] = (int32_t)((uint32_t)a.v[i] + (uint32_t)b.v[i]);
  return a;
}

static inline int32x4_t vandq_s32(int32x4_t a, int32x4_t b)
{
  int i;
  for (i = 0; i < 4; ++i)
    a.v[i] &= b.v[i];
  return a;
}

static inline int32x4_t vqrdmulhq_s32(int32x4_t a, int32x4_t b)
{
  int i;
  for (i = 0; i < 4; ++i)
    a.v[i] = vqrdmulhq_n_s32(vdupq_n_s32(a.v[i]), b.v[i]).v[0];
  return a;
}

/* VRSHL by a per-lane signed count (the low byte of b's lane) */
static inline int32x4_t vrshlq_s32(int32x4_t a, int32x4_t b)
{
  int i;
  for (i = 0; i < 4; ++i)
    a.v[i] = vrshlq_n_s32(vdupq_n_s32(a.v[i]), b.v[i]).v[0];
  return a;
}

/* VSTRB.32: the low bytes of the 4 lanes to p[0..3] */
static inline void vstrbq_s32(int8_t *p, int32x4_t value)
{
  int i;
  for (i = 0; i < 4; ++i)
    p[i] = (int8_t)(uint8_t)((uint32_t)value.v[i] & 0xFFu);
}

static inline int32x4_t vldrwq_z_s32(const int32_t *p, mve_pred16_t pred)
{
  int32x4_t r;
  int i;
  for (i = 0; i < 4; ++i)
    r.v[i] = (((unsigned)pred >> (4 * i)) & 1u) ? p[i] : 0;
  return r;
}

/* VMUL.I32: a * b per lane, wrapping */
static inline int32x4_t vmulq_s32(int32x4_t a, int32x4_t b)
{
  int i;
  for (i = 0; i < 4; ++i)
    a.v[i] = (int32_t)((uint32_t)a.v[i] * (uint32_t)b.v[i]);
  return a;
}

/* VSTRB.32, predicated: the low bytes of the active lanes to p[i] */
static inline void vstrbq_p_s32(int8_t *p, int32x4_t value, mve_pred16_t pred)
{
  int i;
  for (i = 0; i < 4; ++i)
    if (((unsigned)pred >> (4 * i)) & 1u)
      p[i] = (int8_t)(uint8_t)((uint32_t)value.v[i] & 0xFFu);
}

static inline int32x4_t vsubq_n_s32(int32x4_t a, int32_t b)
{
  int i;
  for (i = 0; i < 4; ++i)
    a.v[i] = (int32_t)((uint32_t)a.v[i] - (uint32_t)b);
  return a;
}

/* VSHL.I32 #n (0 <= n <= 31), wrapping */
static inline int32x4_t vshlq_n_s32(int32x4_t a, int n)
{
  int i;
  for (i = 0; i < 4; ++i)
    a.v[i] = (int32_t)((uint32_t)a.v[i] << n);
  return a;
}

/* VLDRB.S32 gather: lane i = base[offset[i]] sign-extended */
static inline int32x4_t vldrbq_gather_offset_s32(const int8_t *base, uint32x4_t offset)
{
  int32x4_t r;
  int i;
  for (i = 0; i < 4; ++i)
    r.v[i] = base[offset.v[i]];
  return r;
}

/* VLDRB.S32 gather, predicated (zeroing): active lane i = base[offset[i]] sign-extended, others 0
   and not read */
static inline int32x4_t vldrbq_gather_offset_z_s32(const int8_t *base, uint32x4_t offset, mve_pred16_t pred)
{
  int32x4_t r;
  int i;
  for (i = 0; i < 4; ++i)
    r.v[i] = (((unsigned)pred >> (4 * i)) & 1u) ? base[offset.v[i]] : 0;
  return r;
}

static inline int32_t vgetq_lane_s32(int32x4_t v, int lane)
{
  return v.v[lane];
}


/* ---- Helium 16x8 subset (the _s16 kernels, codegen_templates/conv2d/arm_mve_s16.c.j2,
 * depthwise/arm_mve_s16.c.j2): 8 int16 lanes, lane i active when predicate bit 2i is set (VCTP16 sets
 * 2 bits per lane); VLDRB.S16 / VLDRH.S32 widen with sign; the zeroing predicated loads touch only
 * the active lanes' bytes; VMLADAVA.S16 wraps as the hardware. ---- */
typedef struct { int16_t v[8]; } int16x8_t;

static inline mve_pred16_t vctp16q(uint32_t n)
{
  return (mve_pred16_t)(n >= 8u ? 0xFFFFu : (1u << (2u * n)) - 1u);
}

static inline int16x8_t vldrhq_s16(const int16_t *p)
{
  int16x8_t r;
  memcpy(r.v, p, 16);
  return r;
}

static inline int16x8_t vldrhq_z_s16(const int16_t *p, mve_pred16_t pred)
{
  int16x8_t r;
  int i;
  for (i = 0; i < 8; ++i)
    r.v[i] = (((unsigned)pred >> (2 * i)) & 1u) ? p[i] : (int16_t)0;
  return r;
}

static inline int16x8_t vldrbq_s16(const int8_t *p)
{
  int16x8_t r;
  int i;
  for (i = 0; i < 8; ++i)
    r.v[i] = p[i];
  return r;
}

static inline int16x8_t vldrbq_z_s16(const int8_t *p, mve_pred16_t pred)
{
  int16x8_t r;
  int i;
  for (i = 0; i < 8; ++i)
    r.v[i] = (((unsigned)pred >> (2 * i)) & 1u) ? (int16_t)p[i] : (int16_t)0;
  return r;
}

/* VMLADAVA.S16: acc + sum of the 8 lane products (wrapping 32-bit, as the hardware) */
static inline int32_t vmladavaq_s16(int32_t acc, int16x8_t a, int16x8_t b)
{
  uint32_t s = (uint32_t)acc;
  int i;
  for (i = 0; i < 8; ++i)
    s += (uint32_t)((int32_t)a.v[i] * (int32_t)b.v[i]);
  return (int32_t)s;
}

static inline int32x4_t vldrhq_s32(const int16_t *p)
{
  int32x4_t r;
  int i;
  for (i = 0; i < 4; ++i)
    r.v[i] = p[i];
  return r;
}

static inline int32x4_t vldrhq_z_s32(const int16_t *p, mve_pred16_t pred)
{
  int32x4_t r;
  int i;
  for (i = 0; i < 4; ++i)
    r.v[i] = (((unsigned)pred >> (4 * i)) & 1u) ? p[i] : 0;
  return r;
}

#endif /* TINYFUSE_SIMD_H */
