/* tinyfuse_signal.h: the integer routines of TFLM's audio front end (tflite-micro signal/src), for the
 * kernels of the signal ops (compiler/ops/signal.py). Each function computes what its TFLM namesake
 * computes, bit for bit, with gcc's integer rules (the numpy specification is
 * compiler/ops/signal_math.py):
 *   tf_sig_msb32/64   MostSignificantBit32/64: 32 - clz(x), and 32 (64) for x = 0 as gcc's build of TFLM
 *   tf_sig_max_abs16  MaxAbs16: running max of v and -v in int16 (-(-32768) wraps)
 *   tf_sig_sqrt32/64  Sqrt32/Sqrt64: bitwise integer square root, rounded up when the remainder exceeds it
 *   tf_sig_log32      Log32: scaled natural log through a 129-point log2 correction table
 *   tf_sig_wide_dynamic, tf_sig_pcan_shrink: PCAN's gain curve and shrink function
 *   tf_fx16_rnd/tf_fx32_rnd: KISS FFT's fixed-point rounding of a Q15 / Q31 product, (x + half) >> frac
 */
#ifndef TINYFUSE_SIGNAL_H
#define TINYFUSE_SIGNAL_H

#include <stdint.h>

static inline int16_t tf_fx16_rnd(int32_t x) { return (int16_t)((x + (1 << 14)) >> 15); }
static inline int32_t tf_fx32_rnd(int64_t x) { return (int32_t)((x + ((int64_t)1 << 30)) >> 31); }

static inline uint32_t tf_sig_msb32(uint32_t x) {
  uint32_t n = 0;
  if (x == 0) return 32;
  while (x) { x >>= 1; ++n; }
  return n;
}

static inline uint32_t tf_sig_msb64(uint64_t x) {
  uint32_t n = 0;
  if (x == 0) return 64;
  while (x) { x >>= 1; ++n; }
  return n;
}

static inline int16_t tf_sig_max_abs16(const int16_t *x, int n) {
  int16_t m = 0;
  for (int i = 0; i < n; ++i) {
    if (x[i] > m) m = x[i];
    else if (-x[i] > m) m = (int16_t)(-x[i]);
  }
  return m;
}

static inline uint16_t tf_sig_sqrt32(uint32_t num) {
  uint32_t res = 0, bit;
  int top, steps;
  if (num == 0) return 0;
  top = (int)(32 - tf_sig_msb32(num)) | 1;
  bit = 1u << (31 - top);
  for (steps = (31 - top) / 2 + 1; steps > 0; --steps) {
    if (num >= res + bit) { num -= res + bit; res = (res >> 1) + bit; }
    else res >>= 1;
    bit >>= 2;
  }
  if (num > res && res != 0xFFFFu) ++res;
  return (uint16_t)res;
}

static inline uint32_t tf_sig_sqrt64(uint64_t num) {
  uint64_t res = 0, bit;
  int top, steps;
  if ((num >> 32) == 0) return tf_sig_sqrt32((uint32_t)num);
  top = (int)(64 - tf_sig_msb64(num)) | 1;
  bit = (uint64_t)1 << (63 - top);
  for (steps = (63 - top) / 2 + 1; steps > 0; --steps) {
    if (num >= res + bit) { num -= res + bit; res = (res >> 1) + bit; }
    else res >>= 1;
    bit >>= 2;
  }
  if (num > res && res != 0xFFFFFFFFu) ++res;
  return (uint32_t)res;
}

/* round(65536 * (log2(1 + i/128) - i/128)), i = 0..128, and one padding entry */
static const uint16_t tf_sig_log_lut[130] = {
  0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797, 2944, 3087, 3224,
  3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714, 4791, 4864, 4934, 5001,
  5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631,
  5637, 5640, 5641, 5638, 5633, 5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332,
  5291, 5249, 5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264,
  4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659, 2549,
  2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094, 963, 830, 695, 559, 421, 282, 142,
  0, 0};

static inline uint32_t tf_sig_log32(uint32_t x, uint32_t out_scale) {
  const uint32_t integer = tf_sig_msb32(x) - 1;
  int32_t frac = (int32_t)((int64_t)x - ((int64_t)1 << integer));
  uint32_t seg, fraction, log2, loge;
  int32_t c0, c1, rel;
  if (integer < 16) frac = (int32_t)((uint32_t)frac << (16 - integer));
  else frac >>= integer - 16;
  seg = (uint32_t)(frac >> 9);
  c0 = tf_sig_log_lut[seg];
  c1 = tf_sig_log_lut[seg + 1];
  rel = ((c1 - c0) * (frac - (int32_t)(512u * seg))) >> 16;
  fraction = (uint32_t)(frac + c0 + rel);
  log2 = (integer << 16) + fraction;
  loge = (uint32_t)(((uint64_t)45426 * log2 + 32768u) >> 16);
  return (out_scale * loge + 32768u) >> 16;
}

static inline int16_t tf_sig_wide_dynamic(uint32_t x, const int16_t *lut) {
  int32_t interval, frac, result;
  if (x <= 2) return lut[x];
  interval = (int32_t)tf_sig_msb32(x);
  lut += 4 * interval - 6;
  frac = (int16_t)(((interval < 11) ? (x << (11 - interval)) : (x >> (interval - 11))) & 0x3FF);
  result = ((int32_t)lut[2] * frac) >> 5;
  result += (int32_t)((uint32_t)lut[1] << 5);
  result *= frac;
  result = (result + (1 << 14)) >> 15;
  result += lut[0];
  return (int16_t)result;
}

static inline uint32_t tf_sig_pcan_shrink(uint32_t x) {
  if (x < (2u << 12)) return (x * x) >> (2 + 2 * 12 - 6);
  return (x >> (12 - 6)) - (1u << 6);
}

#endif
