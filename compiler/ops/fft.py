"""The mixed-radix FFT of TFLM's signal library (signal/src/rfft_*.cc, irfft_*.cc), in numpy: KISS FFT
v1.3.0 (the version tflite-micro's kissfft_download.sh fetches, with its patch) as it is compiled three
times, for ``int16`` (FIXED_POINT 16: Q15 twiddles, every product rounded ``(x + 2^14) >> 15``),
``int32`` (FIXED_POINT 32: Q31, int64 products) and ``float32``.

This module is the specification the generated C follows operation for operation (bit-exact on
the host; the float kernels too where the C compiler does not contract a*b+c into an FMA):

- a complex FFT of n points is the factor list of ``factors(n)`` (4s first, then 2, then odd primes
  3, 5); the input is read in digit-reversed order (``input_order``) and every stage ``s`` runs its
  radix-p butterfly on each of ``fstride`` blocks of p·m points, innermost stage first (KISS FFT's
  recursion, flattened: the blocks of one stage touch disjoint points);
- fixed point: each butterfly first divides its p inputs by p (``x·(MAX / p)`` rounded, MAX = 2^15 − 1
  or 2^31 − 1), a sum is computed in int (int16: promoted, no overflow; int32: wrapping) and stored
  truncated to the scalar type; ``HALF_OF`` is an arithmetic shift right by 1; float: plain float32
  arithmetic in the C evaluation order, ``HALF_OF`` a multiplication by 0.5f;
- a real FFT of N points (``rfft``) is a complex FFT of N/2 points over the (even, odd) pairs, then
  the split with the "super twiddles" exp(∓iπ((k+1)/(N/2) + 1/2)); ``irfft`` the reverse.

Radices above 5 need KISS FFT's generic butterfly, whose scratch TFLM's patch allocates as a null
pointer: TFLM cannot run them, and ``check_length`` refuses them. Twiddles are computed as KISS FFT
does (double cos/sin of a double phase; fixed point ``floor(0.5 + MAX · cos)``).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import TinyfuseError

KINDS = ("int16", "int32", "float32")
RADICES = (2, 3, 4, 5)


def factors(n: int) -> list[tuple[int, int]]:
    """KISS FFT's kf_factor: [(p, m), ...] with p · m the previous m (m0 = n): 4s, then 2, 3, 5, 7..."""
    out, p, floor_sqrt = [], 4, math.floor(math.sqrt(n))
    while True:
        while n % p:
            p = {4: 2, 2: 3}.get(p, p + 2)
            if p > floor_sqrt:
                p = n
        n //= p
        out.append((p, n))
        if n <= 1:
            return out


def check_length(fft_length: int, what: str = "fft_length") -> None:
    """TinyfuseError unless ``fft_length`` is even, >= 4 and N/2 factors into 2, 3, 4, 5 only."""
    if fft_length < 4 or fft_length % 2:
        raise TinyfuseError(f"{what} {fft_length} must be even and >= 4 (KISS FFT's real transform)")
    bad = [p for p, _ in factors(fft_length // 2) if p not in RADICES]
    if bad:
        raise TinyfuseError(f"{what} {fft_length}: N/2 = {fft_length // 2} has the factor {bad[0]}; TFLM's KISS FFT "
                            "runs radices 2, 3, 4 and 5 only (its generic butterfly has no scratch)")


def input_order(n: int) -> np.ndarray:
    """The input index each output slot of the first stage reads (kf_work's decimation)."""
    fac = factors(n)

    def walk(offset: int, fstride: int, s: int) -> list[int]:
        p, m = fac[s]
        if m == 1:
            return [offset + j * fstride for j in range(p)]
        return [i for j in range(p) for i in walk(offset + j * fstride, fstride * p, s + 1)]
    return np.array(walk(0, 1, 0), np.int64)


def _cexp(phase: float, kind: str) -> tuple:
    if kind == "float32":
        return np.float32(math.cos(phase)), np.float32(math.sin(phase))
    big = 32767 if kind == "int16" else 2147483647
    return math.floor(0.5 + big * math.cos(phase)), math.floor(0.5 + big * math.sin(phase))


def twiddles(n: int, inverse: bool, kind: str) -> np.ndarray:
    """[n, 2] (re, im) of kiss_fft_alloc: exp(∓2πik/n), in the scalar type of ``kind``."""
    rows = []
    for i in range(n):
        phase = -2 * math.pi * i / n
        rows.append(_cexp(-phase if inverse else phase, kind))
    return np.array(rows, kind)


def super_twiddles(ncfft: int, inverse: bool, kind: str) -> np.ndarray:
    """[ncfft / 2, 2] of kiss_fftr_alloc: exp(∓iπ((k + 1) / ncfft + 1/2))."""
    rows = []
    for i in range(ncfft // 2):
        phase = -math.pi * ((i + 1) / ncfft + 0.5)
        rows.append(_cexp(-phase if inverse else phase, kind))
    return np.array(rows, kind).reshape(-1, 2)


class Arith:
    """KISS FFT's scalar macros for one ``kind``, on int64 arrays holding stored values (fixed) or
    float32 arrays. ``store`` is the conversion to the scalar type (wrapping)."""

    def __init__(self, kind: str):
        self.kind = kind
        self.fixed = kind != "float32"
        self.bits = {"int16": 16, "int32": 32}.get(kind, 0)
        self.big = (1 << (self.bits - 1)) - 1 if self.fixed else 0

    def store(self, x):
        if not self.fixed:
            return np.asarray(x, np.float32)
        half = 1 << (self.bits - 1)
        return (np.asarray(x, np.int64) + half) % (1 << self.bits) - half

    def sround(self, x):
        f = self.bits - 1
        return self.store((np.asarray(x, np.int64) + (1 << (f - 1))) >> f)

    def smul(self, a, b):   # S_MUL
        return self.sround(np.asarray(a, np.int64) * b) if self.fixed else np.float32(a) * np.float32(b)

    def cmul(self, a, b):
        (ar, ai), (br, bi) = a, b
        if not self.fixed:
            return ar * br - ai * bi, ar * bi + ai * br
        ar, ai = np.asarray(ar, np.int64), np.asarray(ai, np.int64)
        return self.sround(ar * br - ai * bi), self.sround(ar * bi + ai * br)

    def fixdiv(self, c, p: int):
        if not self.fixed:
            return c
        return tuple(self.sround(np.asarray(v, np.int64) * (self.big // p)) for v in c)

    def half(self, x):      # HALF_OF on an int (fixed) or float expression, stored
        if not self.fixed:
            return np.float32(x) * np.float32(0.5)
        return self.store(self.store(x) >> 1) if self.bits == 32 else self.store(np.asarray(x, np.int64) >> 1)

    def add(self, a, b):
        return tuple(self.store(x + y) for x, y in zip(a, b))

    def sub(self, a, b):
        return tuple(self.store(x - y) for x, y in zip(a, b))

    def zeros(self, n: int):
        return np.zeros(n, np.float32 if not self.fixed else np.int64)


# ----------------------------------------------------------------------------------------- butterflies

def _bfly2(A: Arith, F, at, tw, fstride):
    a, b = F(at[0]), F(at[1])
    a, b = A.fixdiv(a, 2), A.fixdiv(b, 2)
    t = A.cmul(b, tw(1))
    return [A.add(a, t), A.sub(a, t)]


def _bfly4(A: Arith, F, at, tw, fstride, inverse):
    f = [A.fixdiv(F(i), 4) for i in at]
    s0, s1, s2 = A.cmul(f[1], tw(1)), A.cmul(f[2], tw(2)), A.cmul(f[3], tw(3))
    s5 = A.sub(f[0], s1)
    f0 = A.add(f[0], s1)
    s3, s4 = A.add(s0, s2), A.sub(s0, s2)
    out2 = A.sub(f0, s3)
    out0 = A.add(f0, s3)
    sign = -1 if inverse else 1
    out1 = (A.store(s5[0] + sign * s4[1]), A.store(s5[1] - sign * s4[0]))
    out3 = (A.store(s5[0] - sign * s4[1]), A.store(s5[1] + sign * s4[0]))
    return [out0, out1, out2, out3]


def _bfly3(A: Arith, F, at, tw, fstride, epi3_i):
    f0, f1, f2 = (A.fixdiv(F(i), 3) for i in at)
    s1, s2 = A.cmul(f1, tw(1)), A.cmul(f2, tw(2))
    s3, s0 = A.add(s1, s2), A.sub(s1, s2)
    if A.fixed:
        m = (A.store(f0[0] - (s3[0] >> 1)), A.store(f0[1] - (s3[1] >> 1)))
        s0 = (A.sround(s0[0] * np.int64(epi3_i)), A.sround(s0[1] * np.int64(epi3_i)))
    else:
        m = (f0[0] - s3[0] * np.float32(0.5), f0[1] - s3[1] * np.float32(0.5))
        s0 = (s0[0] * epi3_i, s0[1] * epi3_i)
    out0 = A.add(f0, s3)
    out2 = (A.store(m[0] + s0[1]), A.store(m[1] - s0[0]))
    out1 = (A.store(m[0] - s0[1]), A.store(m[1] + s0[0]))
    return [out0, out1, out2]


def _bfly5(A: Arith, F, at, tw, fstride, ya, yb):
    f = [A.fixdiv(F(i), 5) for i in at]
    s0 = f[0]
    s1, s2, s3, s4 = (A.cmul(f[j], tw(j)) for j in range(1, 5))
    s7, s10, s8, s9 = A.add(s1, s4), A.sub(s1, s4), A.add(s2, s3), A.sub(s2, s3)
    S = A.smul
    out0 = (A.store(s0[0] + (s7[0] + s8[0])), A.store(s0[1] + (s7[1] + s8[1])))
    s5 = (A.store(s0[0] + S(s7[0], ya[0]) + S(s8[0], yb[0])), A.store(s0[1] + S(s7[1], ya[0]) + S(s8[1], yb[0])))
    s6 = (A.store(S(s10[1], ya[1]) + S(s9[1], yb[1])), A.store(-S(s10[0], ya[1]) - S(s9[0], yb[1])))
    out1, out4 = A.sub(s5, s6), A.add(s5, s6)
    s11 = (A.store(s0[0] + S(s7[0], yb[0]) + S(s8[0], ya[0])), A.store(s0[1] + S(s7[1], yb[0]) + S(s8[1], ya[0])))
    s12 = (A.store(-S(s10[1], yb[1]) + S(s9[1], ya[1])), A.store(S(s10[0], yb[1]) - S(s9[0], ya[1])))
    out2, out3 = A.add(s11, s12), A.sub(s11, s12)
    return [out0, out1, out2, out3, out4]


def cfft(re: np.ndarray, im: np.ndarray, inverse: bool, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """kiss_fft of n = len(re) points (out of place): (re, im) of the result, stored values."""
    A = Arith(kind)
    n = len(re)
    tws = twiddles(n, inverse, kind)
    order = input_order(n)
    re, im = A.store(np.asarray(re)[order]), A.store(np.asarray(im)[order])
    fac = factors(n)
    for s in reversed(range(len(fac))):
        p, m = fac[s]
        fstride = int(np.prod([q for q, _ in fac[:s]], dtype=np.int64))
        base = (np.arange(fstride)[:, None] * p * m + np.arange(m)[None, :]).ravel()
        k = np.tile(np.arange(m), fstride)
        at = [base + j * m for j in range(p)]

        def F(i):
            return re[i], im[i]

        def tw(j, k=k, fstride=fstride):
            t = tws[k * fstride * j]
            return t[:, 0], t[:, 1]
        if p == 2:
            outs = _bfly2(A, F, at, tw, fstride)
        elif p == 4:
            outs = _bfly4(A, F, at, tw, fstride, inverse)
        elif p == 3:
            outs = _bfly3(A, F, at, tw, fstride, tws[fstride * m][1])
        elif p == 5:
            outs = _bfly5(A, F, at, tw, fstride, tws[fstride * m], tws[fstride * 2 * m])
        else:
            raise TinyfuseError(f"FFT of {n} points: radix {p} is not supported (radices 2, 3, 4, 5)")
        re, im = re.copy(), im.copy()
        for idx, (r, i) in zip(at, outs):
            re[idx], im[idx] = r, i
    return re, im


def rfft(x: np.ndarray, fft_length: int, kind: str) -> np.ndarray:
    """kiss_fftr of one frame (``x`` zero-padded to fft_length): [fft_length / 2 + 1, 2] (re, im)."""
    A = Arith(kind)
    frame = np.zeros(fft_length, np.float32 if kind == "float32" else np.int64)
    frame[:len(x)] = x
    nc = fft_length // 2
    tr, ti = cfft(frame[0::2], frame[1::2], False, kind)
    sup = super_twiddles(nc, False, kind)
    out = np.zeros((nc + 1, 2), frame.dtype)
    dr, di = A.fixdiv((tr[0], ti[0]), 2)
    out[0, 0], out[nc, 0] = A.store(dr + di), A.store(dr - di)
    k = np.arange(1, nc // 2 + 1)
    fpk = A.fixdiv((tr[k], ti[k]), 2)
    fpnk = A.fixdiv((tr[nc - k], A.store(-ti[nc - k])), 2)
    f1k, f2k = A.add(fpk, fpnk), A.sub(fpk, fpnk)
    tw = A.cmul(f2k, (sup[k - 1, 0], sup[k - 1, 1]))
    out[k, 0], out[k, 1] = A.half(f1k[0] + tw[0]), A.half(f1k[1] + tw[1])
    out[nc - k, 0], out[nc - k, 1] = A.half(f1k[0] - tw[0]), A.half(tw[1] - f1k[1])
    return out


def irfft(spec: np.ndarray, fft_length: int, kind: str) -> np.ndarray:
    """kiss_fftri of one frame ``spec`` [fft_length / 2 + 1, 2] → fft_length samples (float32: divided
    by fft_length afterwards, as TFLM's IrfftFloatApply; fixed point: KISS FFT's own 1/N scaling)."""
    A = Arith(kind)
    nc = fft_length // 2
    fr, fi = A.store(spec[:, 0]), A.store(spec[:, 1])
    tr, ti = A.zeros(nc), A.zeros(nc)
    t0 = A.fixdiv((A.store(fr[0] + fr[nc]), A.store(fr[0] - fr[nc])), 2)
    tr[0], ti[0] = t0
    k = np.arange(1, nc // 2 + 1)
    fk = A.fixdiv((fr[k], fi[k]), 2)
    fnkc = A.fixdiv((fr[nc - k], A.store(-fi[nc - k])), 2)
    fek, tmp = A.add(fk, fnkc), A.sub(fk, fnkc)
    sup = super_twiddles(nc, True, kind)
    fok = A.cmul(tmp, (sup[k - 1, 0], sup[k - 1, 1]))
    tr[k], ti[k] = A.add(fek, fok)
    lo = A.sub(fek, fok)
    tr[nc - k], ti[nc - k] = lo[0], A.store(-lo[1])
    yr, yi = cfft(tr, ti, True, kind)
    out = np.stack([yr, yi], axis=1).reshape(-1)
    if kind == "float32":
        out = (out.astype(np.float32) / np.float32(fft_length)).astype(np.float32)
    return out
