"""The epilogue forms the SIMD kernels compute in their own way, read off a fused group's element-wise
ops at compile time (pure analyses of the IR: the strategies' ``accepts`` and the lowerings both ask
them, so a kernel is chosen exactly where it can be built).

- ``flat_operands_reason``: whether the epilogue may index the output with flattened rows (``[n, 0, p,
  k]``, ``lower.kernel.flat_index``): every operand full size or 1 along all the flattened axes.
- ``epilogue_constants``: a bias add + int8 double-rounding qnn.requantize with right shifts only (+ a
  clip): the per-channel constants of the Helium vector requantization (VQRDMULH + the
  RoundingDivideByPOT fixup, bit-exact with TFLM's MultiplyByQuantizedMultiplier, QUANT.md).
- ``quad_epilogue``: the same, then optionally a residual qnn.add (TFLite reference ADD: both inputs
  rescaled with 20 bits of headroom, summed, requantized once) whose other input is a full-size int8
  tensor, then optionally a clip: the Helium quad kernels' epilogue.
- ``short_requant``: the short exact requantize of the DSP kernels (runtime_c/include/tinyfuse/
  requant_arm.h: ``tf_sat_i8(tf_rq2(2 acc, m, hz, e))`` = SMMLAR + ADD + SSAT, bit-identical to
  ``tf_mbqm(acc, m, -e) + zp`` then the int8 clamp) under the range conditions it checks per channel;
  its C printers are ``lower.requant_arm``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ir import Constant, Var


def flat_operands_reason(epi_ops, out_shape: tuple[int, ...], row_axes: tuple[int, ...]) -> str | None:
    """None when the epilogue may index the output with ``row_axes`` flattened into the last of them
    (every tensor operand full size or 1 along all of those axes), else why not."""
    nd = len(out_shape)
    for op in epi_ops:
        for a in op.args:
            if not isinstance(a, (Var, Constant)) or int(np.prod(a.ty.shape)) == 1:
                continue
            shape = (1,) * (nd - a.ty.ndim) + tuple(a.ty.shape)
            dims = [shape[i] for i in row_axes]
            full = [out_shape[i] for i in row_axes]
            if not (dims == full or all(d == 1 for d in dims)):
                return f"epilogue operand of shape {a.ty.shape} broadcasts along only some of the flattened axes"
    return None


def _per_channel(c, K: int) -> np.ndarray | None:
    """The values of constant ``c`` as K int64 channel values (one value broadcast), or None."""
    if not isinstance(c, Constant):
        return None
    v = np.asarray(c.value).astype(np.int64).reshape(-1)
    return np.broadcast_to(v, (K,)).copy() if v.size in (1, K) else None


def _clamp(epi_ops, rq) -> tuple[int, int] | None:
    """The int8 output range after the requantize: [-128, 127], or a trailing clip's (fused ReLU/ReLU6)."""
    if len(epi_ops) == 2:
        return -128, 127
    clip = epi_ops[2]
    if len(epi_ops) != 3 or clip.op != "clip" or clip.args[0] is not rq:
        return None
    lo, hi = clip.attrs["a_min"], clip.attrs["a_max"]
    lo = -128 if lo is None else max(-128, math.ceil(lo))
    hi = 127 if hi is None else min(127, math.floor(hi))
    return (lo, hi) if lo <= hi else None


def epilogue_constants(anchor, epi_ops, K: int) -> tuple | None:
    """(bias[K], multiplier[K], shift[K], output zero point, (lo, hi)) of a bias add + int8
    double-rounding requantize with right shifts only (+ an optional clip to [lo, hi]), the epilogue
    the vector requantization computes; else None."""
    if len(epi_ops) not in (2, 3) or epi_ops[0].op != "add" or epi_ops[1].op != "qnn.requantize":
        return None
    add, rq = epi_ops[:2]
    if add.args[0] is not anchor or rq.args[0] is not add or add.ty.dtype != "int32":
        return None
    a = rq.attrs
    if a["rounding"] != "double" or a["out_dtype"] != "int8" or a["input_zero_point"] != 0:
        return None
    bias, mult, shift = (_per_channel(c, K) for c in (add.args[1], rq.args[1], rq.args[2]))
    clamp = _clamp(epi_ops, rq)
    if clamp is None or bias is None or mult is None or shift is None or np.any(shift > 0) or np.any(shift < -31):
        return None
    if np.any(mult < 0) or np.any(mult >= 2 ** 31):
        return None
    return bias, mult, shift, int(a["output_zero_point"]), clamp



@dataclass
class QAddLanes:
    """The residual qnn.add after the requantize: ``other`` the Var of its other input; own/other:
    (zero point, multiplier, shift) of the requantized value's side and of the other input's; out:
    (multiplier, shift, zero point) of the output requantize."""

    other: Var
    own: tuple[int, int, int]
    oth: tuple[int, int, int]
    out: tuple[int, int, int]
    pre: tuple[int, int] = (-128, 127)      # the requantized value's range (a clip before the add)


def _qadd(rq, op, out_shape) -> QAddLanes | None:
    a = op.attrs
    side = [i for i, x in enumerate(op.args) if x is rq]
    if op.op != "qnn.add" or len(side) != 1:
        return None
    other = op.args[1 - side[0]]
    if not isinstance(other, Var) or tuple(other.ty.shape) != tuple(out_shape) or other.ty.dtype != "int8":
        return None
    if any(a[k] > 0 for k in ("sh1", "sh2", "sho")) or any(a[k] < -31 for k in ("sh1", "sh2", "sho")):
        return None
    sides = [(a["a_zero_point"], a["m1"], a["sh1"]), (a["b_zero_point"], a["m2"], a["sh2"])]
    return QAddLanes(other, sides[side[0]], sides[1 - side[0]], (a["mo"], a["sho"], a["out_zero_point"]))


def _clip_range(clip, src, lo=-128, hi=127) -> tuple[int, int] | None:
    """[lo, hi] narrowed by ``clip`` (a clip op reading ``src``), or None."""
    if clip.op != "clip" or clip.args[0] is not src:
        return None
    a_min, a_max = clip.attrs["a_min"], clip.attrs["a_max"]
    lo = lo if a_min is None else max(lo, math.ceil(a_min))
    hi = hi if a_max is None else min(hi, math.floor(a_max))
    return (lo, hi) if lo <= hi else None


def quad_epilogue(anchor, epi_ops, K: int, out_shape) -> tuple | None:
    """(bias[K], multiplier[K], shift[K], output zero point, (lo, hi), QAddLanes or None) of the
    epilogue (module doc), or None. (lo, hi): the final int8 range (a clip after the requantize, or
    after the add; QAddLanes.pre: a clip between the requantize and the add)."""
    k = next((i for i, op in enumerate(epi_ops) if op.op == "qnn.add"), None)
    if k is None:
        consts = epilogue_constants(anchor, epi_ops, K)
        return None if consts is None else (*consts, None)
    if k not in (2, 3) or len(epi_ops) > k + 2:
        return None
    head = epilogue_constants(anchor, epi_ops[:2], K)
    pre = (-128, 127) if k == 2 else _clip_range(epi_ops[2], epi_ops[1])
    add = _qadd(epi_ops[k - 1], epi_ops[k], out_shape)
    if head is None or add is None or pre is None:
        return None
    add.pre = pre
    final = (-128, 127) if len(epi_ops) == k + 1 else _clip_range(epi_ops[k + 1], epi_ops[k])
    return None if final is None else (*head[:4], final, add)



I32 = 2 ** 31


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


def _channel_values(v, K: int) -> np.ndarray | None:
    a = np.asarray(v).reshape(-1).astype(np.int64)
    return np.broadcast_to(a, (K,)).copy() if a.size in (1, K) else None


def _epilogue_parts(epi_ops, anchor, K: int):
    """(bias [K] int64, requantize Call, clip bounds) of an epilogue add → qnn.requantize (→ clip), or None."""
    ops = list(epi_ops)
    bias = np.zeros(K, np.int64)
    if ops and ops[0].op == "add" and ops[0].args[0] is anchor and isinstance(ops[0].args[1], Constant):
        b = ops[0].args[1].value
        if b.dtype != np.int32 or any(d != 1 for d in b.shape[:-1]):
            return None
        bias = _channel_values(b, K)
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


def short_requant(epi_ops, anchor, acc_lo: np.ndarray, acc_hi: np.ndarray, fold=None) -> ShortRequant | None:
    """The short requantize of a group whose epilogue is [add(anchor, int32 bias)] → qnn.requantize
    (per-tensor or per-channel, double rounding, int8 out) [→ clip], or None.

    ``acc_lo``/``acc_hi``: [K] int64 bounds of the anchor's accumulator without bias (exact or safe);
    ``fold``: [K] int64 added to the bias (the folded input offset; already inside the bounds' origin,
    i.e. the kernel's accumulator is fold + the bounded sum). Every channel must have e = -shift >= 1,
    m >= 0, 2 acc within int32 and the SMMLAR sum within int32, so the C equals tf_mbqm bit for bit."""
    K = len(acc_lo)
    parts = _epilogue_parts(epi_ops, anchor, K)
    if parts is None:
        return None
    bias, rq, (lo, hi) = parts
    m = _channel_values(rq.args[1].value, K)
    shift = _channel_values(rq.args[2].value, K)
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




__all__ = ["I32", "QAddLanes", "ShortRequant", "epilogue_constants", "flat_operands_reason", "quad_epilogue",
           "short_requant"]
