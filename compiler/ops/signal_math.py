"""The integer arithmetic of TFLM's signal library (tflite-micro signal/src) in numpy, one function per
routine, element by element as the C computes it with gcc's integer rules (a conversion to a narrower
type wraps, ``>>`` of a negative int is arithmetic). The generated C does the same operations
(``runtime_c/include/tinyfuse/signal.h``); these are the specification and the interpreter's oracle.
"""
from __future__ import annotations

import math

import numpy as np

U32, U64 = (1 << 32) - 1, (1 << 64) - 1

#: log.cc's kLogLut: round(65536 · (log2(1 + i/128) − i/128)), i = 0..128, plus one padding 0
LOG_LUT = np.array([round((math.log2(1 + i / 128) - i / 128) * 65536) for i in range(129)] + [0], np.uint16)
PCAN_SNR_BITS, PCAN_OUTPUT_BITS = 12, 6


def wrap(x: int, bits: int) -> int:
    """x converted to a signed ``bits``-bit integer (two's complement wrap)."""
    half = 1 << (bits - 1)
    return (int(x) + half) % (1 << bits) - half


def msb32(x: int) -> int:
    """MostSignificantBit32 as gcc builds it: 32 − clz(x), and 32 for x = 0 (``__builtin_clz`` branch)."""
    x &= U32
    return x.bit_length() if x else 32


def max_abs16(x: np.ndarray) -> int:
    """MaxAbs16: the running int16 maximum of v and −v (−(−32768) wraps to −32768 in int16)."""
    m = 0
    for v in x.reshape(-1).tolist():
        if v > m:
            m = v
        elif -v > m:
            m = wrap(-v, 16)
    return m


def fft_auto_scale_bits(x: np.ndarray) -> int:
    """FftAutoScale's shift: 16 − msb32(max_abs) − 1 (max_abs as uint32), at least 0."""
    return max(0, 15 - msb32(max_abs16(x) & U32))


def _bitwise_sqrt(num: int, bits: int) -> int:
    """The digit-by-digit integer square root of TFLM's signal Sqrt32 / Sqrt64 over a ``bits``-wide
    unsigned ``num``: the first tested bit is the even position at or below the top set bit, and the
    result rounds up when the remainder exceeds it (saturating at the ``bits // 2``-bit maximum)."""
    res, top = 0, (bits - (num.bit_length() if num else bits)) | 1
    bit = 1 << (bits - 1 - top)
    for _ in range((bits - 1 - top) // 2 + 1):
        if num >= res + bit:
            num -= res + bit
            res = (res >> 1) + bit
        else:
            res >>= 1
        bit >>= 2
    half_max = (1 << (bits // 2)) - 1
    if num > res and res != half_max:
        res += 1
    return res & half_max


def sqrt32(num: int) -> int:
    """Sqrt32: bitwise integer square root with the final round-up (uint16 result)."""
    num &= U32
    return _bitwise_sqrt(num, 32) if num else 0


def sqrt64(num: int) -> int:
    """Sqrt64 (uint32 result); the 32-bit routine when the upper word is 0, as TFLM shortcuts."""
    num &= U64
    return sqrt32(num) if num >> 32 == 0 else _bitwise_sqrt(num, 64)


def log32(x: int, out_scale: int) -> int:
    """Log32: 65536 · ln(x) by the log2 LUT, scaled by out_scale / 65536, rounded (uint32)."""
    integer = (msb32(x) - 1) & U32
    frac = wrap(x - (1 << integer), 32)
    frac = wrap(frac << (16 - integer), 32) if integer < 16 else frac >> (integer - 16)
    seg = (frac & U32) >> 9
    c0, c1 = int(LOG_LUT[seg]), int(LOG_LUT[seg + 1])
    rel = wrap((c1 - c0) * (frac - 512 * seg), 32) >> 16
    fraction = (frac + c0 + rel) & U32
    log2 = ((integer << 16) + fraction) & U32
    loge = ((45426 * log2 + 32768) >> 16) & U32
    return ((((out_scale & U32) * loge) & U32) + 32768 & U32) >> 16


def filter_bank_log(x: int, output_scale: int, correction_bits: int) -> int:
    scaled = (x << correction_bits) & U32
    return min(log32(scaled, output_scale), 32767) if scaled > 1 else 0


def wide_dynamic(x: int, lut: np.ndarray) -> int:
    """PCAN's WideDynamicFunction: the gain for noise estimate x from the piecewise quadratic LUT (int16)."""
    if x <= 2:
        return int(lut[x])
    interval = msb32(x)
    base = 4 * interval - 6
    frac = (((x << (11 - interval)) & U32) if interval < 11 else x >> (interval - 11)) & 0x3FF
    result = wrap(int(lut[base + 2]) * frac, 32) >> 5
    result = wrap(result + wrap((int(lut[base + 1]) & U32) << 5, 32), 32)
    result = wrap(result * frac, 32)
    result = wrap(result + (1 << 14), 32) >> 15
    return wrap(result + int(lut[base]), 16)


def pcan_shrink(x: int) -> int:
    if x < (2 << PCAN_SNR_BITS):
        return ((x * x) & U32) >> (2 + 2 * PCAN_SNR_BITS - PCAN_OUTPUT_BITS)
    return ((x >> (PCAN_SNR_BITS - PCAN_OUTPUT_BITS)) - (1 << PCAN_OUTPUT_BITS)) & U32


def pcan(x: int, noise: int, lut: np.ndarray, snr_shift: int) -> int:
    gain = wide_dynamic(noise, lut) & U32
    snr = ((x * gain) >> snr_shift) & U32
    return pcan_shrink(snr)


def spectral_subtraction(x: np.ndarray, noise: np.ndarray, a: dict) -> tuple[np.ndarray, np.ndarray]:
    """FilterbankSpectralSubtraction over the channels: (output, new noise estimate), uint32.
    Odd channels use the alternate coefficients (as TFLM's code does, whatever their value)."""
    out, est = np.zeros_like(x), noise.copy()
    bits, sb = a["spectral_subtraction_bits"], a["smoothing_bits"]
    for i in range(x.size):
        s, oms = (a["smoothing"], a["one_minus_smoothing"]) if i % 2 == 0 else \
            (a["alternate_smoothing"], a["alternate_one_minus_smoothing"])
        up = (int(x[i]) << sb) & U32
        n = (((up * (s & U32) + int(est[i]) * (oms & U32)) & U64) >> bits) & U32
        e = n
        if e > up:
            e = up
            if a["clamping"]:
                n = e
        est[i] = n
        floor = ((int(x[i]) * (a["min_signal_remaining"] & U32)) >> bits) & U32
        out[i] = max((up - e) >> sb, floor)
    return out, est


def filter_bank(x: np.ndarray, w: np.ndarray, uw: np.ndarray, freq: np.ndarray, wstart: np.ndarray,
                width: np.ndarray, channels: int) -> np.ndarray:
    """FilterbankAccumulateChannels: channels + 1 weighted sums (uint64, wrapping), channel 0 dropped."""
    out, acc, un = [], 0, 0
    for i in range(channels + 1):
        f0, w0 = int(freq[i]), int(wstart[i])
        for j in range(int(width[i])):
            v = int(x[f0 + j])
            acc = (acc + (int(w[w0 + j]) & U64) * v) & U64
            un = (un + (int(uw[w0 + j]) & U64) * v) & U64
        out.append(acc)
        acc, un = un, 0
    return np.array(out[1:], np.uint64)
