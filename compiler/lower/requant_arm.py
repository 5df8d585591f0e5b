"""The short exact int8 requantize of the DSP kernels (runtime_c/include/tinyfuse/requant_arm.h):
``tf_sat_i8(tf_rq2(2 acc, m, hz, e))`` = SMMLAR + one ADD + SSAT (with the shift folded in when e is a
compile-time constant), bit-identical to ``tf_mbqm(acc, m, -e) + zp`` then the int8 clamp (TFLM's
MultiplyByQuantizedMultiplier, double rounding) under the conditions :func:`short_requant` checks per
output channel from the accumulator's exact range. The derivation is in the header;
:func:`rq2` is its numpy twin (tests/unit/test_requant_arm.py compares it with ``quant.mbqm``).

Use from another DSP kernel (conv/dsp / matmul_arm, pw18 and mve18): build the epilogue's
:class:`ShortRequant` with ``short_requant(epi.ops, anchor, acc_lo, acc_hi)`` (``strategy.epilogue``) (per-channel int64 bounds of
the raw accumulator, before the bias), double the weights (int16 lanes hold 2 w) or shift the
accumulator left once, start it at ``sr.bias2[k]`` and store ``c_store(sr, a2, m, hz, e)``; keep m, hz,
e of the channel block in registers. None: the epilogue is not bias + requantize (+ clip), or a
channel fails the range conditions; then keep ``Epilogue.code``.
"""
from __future__ import annotations

import numpy as np

from ..strategy.epilogue import I32, ShortRequant, short_requant


def rq2(acc, m, e, zp):
    """numpy twin of ``tf_rq2(2 acc, m, 2^(e-1) + zp 2^e, e)`` (int64 arrays, before the int8 clamp);
    e >= 1. SMMLAR(a, b, c) = c + floor((a b + 2^31) / 2^32)."""
    acc, m, e = np.asarray(acc, np.int64), np.asarray(m, np.int64), np.asarray(e, np.int64)
    a2 = 2 * acc
    c = (np.int64(1) << (e - 1)) + np.asarray(zp, np.int64) * (np.int64(1) << e) + (a2 >> 63)
    return (c + ((a2 * m + I32) >> 32)) >> e


def c_store(sr: ShortRequant, a2: str, m: str, hz: str, e: str) -> str:
    """C expression of the int8 output of the short requantize ``sr`` from the doubled accumulator ``a2``."""
    v = f"tf_sat_i8(tf_rq2({a2}, {m}, {hz}, {e}))"
    if sr.lo is None and sr.hi is None:
        return v
    return f"tf_clamp_i8({v}, {-128 if sr.lo is None else sr.lo}, {127 if sr.hi is None else sr.hi})"


def c_output(sr: ShortRequant, pool, key, acc: str, k: str) -> str:
    """C expression of the int8 output of channel ``k`` (a C index) from the plain accumulator ``acc``
    (without bias): tf_rq2 of 2 acc + bias2[k]; the per-channel constants as const arrays of
    ``pool`` (keys under ``key``), literals when uniform."""
    def arr(n, a):
        return str(int(a[0])) if np.all(a == a[0]) else f"{pool.ref(a, key=(key, n))}[{k}]"
    a2 = f"(2 * ({acc}) + {arr('bias2', sr.bias2)})" if sr.bias2.any() else f"2 * ({acc})"
    return c_store(sr, a2, arr("m", sr.m), arr("hz", sr.hz), arr("e", sr.e))


__all__ = ["ShortRequant", "c_output", "c_store", "rq2", "short_requant"]
