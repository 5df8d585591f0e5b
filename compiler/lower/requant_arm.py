"""The short exact int8 requantize of the DSP kernels (runtime_c/include/tinyfuse/requant_arm.h):
``tf_sat_i8(tf_rq2(2 acc, m, hz, e))`` = SMMLAR + one ADD + SSAT (with the shift folded in when e is a
compile-time constant), bit-identical to ``tf_mbqm(acc, m, -e) + zp`` then the int8 clamp (TFLM's
MultiplyByQuantizedMultiplier, double rounding) under the conditions :func:`short_requant` checks per
output channel from the accumulator's exact range. The derivation is in the header;
:func:`rq2` is its numpy twin (tests/unit/test_requant_arm.py compares it with ``quant.mbqm``).

Use from another DSP kernel (conv2d_arm / matmul_arm, pw18 and mve18): build the epilogue's
:class:`ShortRequant` with ``short_requant(epi, anchor, acc_lo, acc_hi)`` (per-channel int64 bounds of
the raw accumulator, before the bias), double the weights (int16 lanes hold 2 w) or shift the
accumulator left once, start it at ``sr.bias2[k]`` and store ``sr.c_store(a2, m, hz, e)``; keep m, hz,
e of the channel block in registers. None: the epilogue is not bias + requantize (+ clip), or a
channel fails the range conditions; then keep ``Epilogue.code``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Constant

I32 = 2 ** 31


def rq2(acc, m, e, zp):
    """numpy twin of ``tf_rq2(2 acc, m, 2^(e-1) + zp 2^e, e)`` (int64 arrays, before the int8 clamp);
    e >= 1. SMMLAR(a, b, c) = c + floor((a b + 2^31) / 2^32)."""
    acc, m, e = np.asarray(acc, np.int64), np.asarray(m, np.int64), np.asarray(e, np.int64)
    a2 = 2 * acc
    c = (np.int64(1) << (e - 1)) + np.asarray(zp, np.int64) * (np.int64(1) << e) + (a2 >> 63)
    return (c + ((a2 * m + I32) >> 32)) >> e


@dataclass
class ShortRequant:
    """Per output channel (length K int32 arrays): ``bias2`` = 2 (bias + fold), the accumulator's start
    value; ``m`` the Q31 multiplier; ``hz`` = 2^(e-1) + zp 2^e; ``e`` the right shift (>= 1). ``lo``,
    ``hi``: the clamp after the int8 saturation (None: none)."""

    bias2: np.ndarray
    m: np.ndarray
    hz: np.ndarray
    e: np.ndarray
    lo: int | None = None
    hi: int | None = None

    def c_store(self, a2: str, m: str, hz: str, e: str) -> str:
        """C expression of the int8 output from the doubled accumulator ``a2``."""
        v = f"tf_sat_i8(tf_rq2({a2}, {m}, {hz}, {e}))"
        if self.lo is None and self.hi is None:
            return v
        return f"tf_clamp_i8({v}, {-128 if self.lo is None else self.lo}, {127 if self.hi is None else self.hi})"


    def c_output(self, pool, key, acc: str, k: str) -> str:
        """C expression of the int8 output of channel ``k`` (a C index) from the plain accumulator ``acc``
        (without bias): tf_rq2 of 2 acc + bias2[k]; the per-channel constants as const arrays of
        ``pool`` (keys under ``key``), literals when uniform."""
        def arr(n, a):
            return str(int(a[0])) if np.all(a == a[0]) else f"{pool.ref(a, key=(key, n))}[{k}]"
        a2 = f"(2 * ({acc}) + {arr('bias2', self.bias2)})" if self.bias2.any() else f"2 * ({acc})"
        return self.c_store(a2, arr("m", self.m), arr("hz", self.hz), arr("e", self.e))


def _per_channel(v, K: int) -> np.ndarray | None:
    a = np.asarray(v).reshape(-1).astype(np.int64)
    return np.broadcast_to(a, (K,)).copy() if a.size in (1, K) else None


def _epilogue_parts(epi, anchor, K: int):
    """(bias [K] int64, requantize Call, clip bounds) of an epilogue add → qnn.requantize (→ clip), or None."""
    ops = list(epi.ops)
    bias = np.zeros(K, np.int64)
    if ops and ops[0].op == "add" and ops[0].args[0] is anchor and isinstance(ops[0].args[1], Constant):
        b = ops[0].args[1].value
        if b.dtype != np.int32 or any(d != 1 for d in b.shape[:-1]):
            return None
        bias = _per_channel(b, K)
        if bias is None:
            return None
        prev, ops = ops[0], ops[1:]
    else:
        prev = anchor
    if not ops or ops[0].op != "qnn.requantize" or ops[0].args[0] is not prev:
        return None
    rq = ops[0]
    a = rq.attrs
    if a["input_zero_point"] or a["rounding"] != "double" or a["out_dtype"] != "int8" or \
            not all(isinstance(x, Constant) for x in rq.args[1:]):
        return None
    bounds = (None, None)
    if len(ops) == 2 and ops[1].op == "clip" and ops[1].args[0] is rq:
        bounds = (ops[1].attrs["a_min"], ops[1].attrs["a_max"])
    elif len(ops) > 1:
        return None
    return bias, rq, bounds


def short_requant(epi, anchor, acc_lo: np.ndarray, acc_hi: np.ndarray, fold=None) -> ShortRequant | None:
    """The short requantize of a group whose epilogue is [add(anchor, int32 bias)] → qnn.requantize
    (per-tensor or per-channel, double rounding, int8 out) [→ clip], or None.

    ``acc_lo``/``acc_hi``: [K] int64 bounds of the anchor's accumulator without bias (exact or safe);
    ``fold``: [K] int64 added to the bias (the folded input offset; already inside the bounds' origin,
    i.e. the kernel's accumulator is fold + the bounded sum). Every channel must have e = -shift >= 1,
    m >= 0, 2 acc within int32 and the SMMLAR sum within int32, so the C equals tf_mbqm bit for bit."""
    K = len(acc_lo)
    parts = _epilogue_parts(epi, anchor, K)
    if parts is None:
        return None
    bias, rq, (lo, hi) = parts
    m = _per_channel(rq.args[1].value, K)
    shift = _per_channel(rq.args[2].value, K)
    if m is None or shift is None:
        return None
    b = bias + (np.zeros(K, np.int64) if fold is None else np.asarray(fold, np.int64))
    e = -shift
    zp = int(rq.attrs["output_zero_point"])
    if np.any(e < 1) or np.any(e > 30) or np.any(m < 0) or np.any(m >= I32):
        return None
    amax = np.maximum(np.abs(b + np.asarray(acc_lo, np.int64)), np.abs(b + np.asarray(acc_hi, np.int64)))
    hz = (np.int64(1) << (e - 1)) + zp * (np.int64(1) << e)
    araw = np.maximum(np.abs(np.asarray(acc_lo, np.int64)), np.abs(np.asarray(acc_hi, np.int64)))
    if np.any(2 * np.maximum(amax, araw) >= I32) or np.any(np.abs(hz) + amax + 2 >= I32):
        return None
    lo = None if lo is None or lo <= -128 else int(lo)
    hi = None if hi is None or hi >= 127 else int(hi)
    return ShortRequant((2 * b).astype(np.int32), m.astype(np.int32), hz.astype(np.int32), e.astype(np.int32),
                        lo, hi)


__all__ = ["ShortRequant", "rq2", "short_requant"]
