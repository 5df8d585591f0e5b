"""check_overflow: prove, per int8 kernel, that its int32 accumulator cannot overflow.

For ``qnn.conv2d`` and ``qnn.matmul`` the accumulator of output channel c is

    acc[c] = bias[c] + Σ_taps (x − zp_in) · w[c, tap]       |x − zp_in| ≤ R = max(hi − zp_in, zp_in − lo)

(a padded tap reads zp_in and adds 0), so every partial sum, in any order, is bounded by
``B[c] = |bias[c]| + R · Σ_taps |w[c, tap]|``; with R = 255 at most for int8 inputs. The following
``qnn.requantize`` shifts the accumulator left by max(shift[c], 0) before the Q31 multiply (TFLM's
arithmetic), so the bound that must stay below 2^31 is ``B[c] · 2^max(shift[c], 0)``.

A 16x8 kernel with an int64 accumulator (``acc_dtype`` int64: TFLM's int16 kernels sum in int64 and
requantize with the 64-bit MultiplyByQuantizedMultiplier) has no int32 bound to prove and is skipped.

The pass changes nothing; for a kernel it cannot prove safe it warns (``OverflowWarning``, naming the
node, the bound and the channel): the C would wrap where the TFLite reference is undefined.
``accumulator_bounds`` returns the proof per kernel for reports and tests.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..ir import Call, Constant, Function, IRModule, post_order, users
from ..ops import ops_where

INT32_LIMIT = 2**31
ACCUMULATING = ops_where(lambda d: d.accumulates)    # qnn.conv2d, qnn.matmul
DTYPE_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}


class OverflowWarning(UserWarning):
    """An int8 kernel whose int32 accumulator is not proven to stay in range."""


@dataclass
class AccumulatorBound:
    node: str            # the anchor's span (ONNX node name)
    op: str
    bound: int           # max over channels of |bias| + R·Σ|w|, times 2^left-shift of the requantize
    channel: int         # the channel reaching it

    @property
    def safe(self) -> bool:
        return self.bound < INT32_LIMIT


def _functions(mod: IRModule):
    """main and every Primitive Function called from it."""
    yield mod.main
    for node in post_order(mod.main.body):
        if isinstance(node, Call) and isinstance(node.op, Function):
            yield node.op


def _bound(call: Call, uses: dict) -> AccumulatorBound | None:
    x, w = call.args[0], call.args[1]
    if not isinstance(w, Constant) or x.ty.dtype not in DTYPE_RANGE or call.ty.dtype == "int64":
        return None
    lo, hi = DTYPE_RANGE[x.ty.dtype]
    zp = int(call.attrs.get("input_zero_point", 0))
    r = max(hi - zp, zp - lo)
    wv = np.abs(w.value.astype(np.int64))
    per_channel = wv.reshape(wv.shape[0], -1).sum(axis=1) if call.op in ("qnn.conv2d", "qnn.conv2d_transpose") else wv.sum(axis=0)
    bound = per_channel * r
    nxt = uses.get(id(call), [])
    if len(nxt) == 1 and isinstance(nxt[0], Call) and nxt[0].op == "add":
        bias = [a for a in nxt[0].args if isinstance(a, Constant)]
        if bias:
            b = np.abs(bias[0].value.astype(np.int64)).reshape(-1)
            bound = bound + (b if b.size == bound.size else b.max())
            nxt = uses.get(id(nxt[0]), [])
    if len(nxt) == 1 and isinstance(nxt[0], Call) and nxt[0].op == "qnn.requantize" \
            and isinstance(nxt[0].args[2], Constant):
        shift = np.maximum(nxt[0].args[2].value.astype(np.int64).reshape(-1), 0)
        bound = bound * (2 ** (shift if shift.size == bound.size else shift.max()))
    c = int(np.argmax(bound))
    return AccumulatorBound(call.span or call.op, call.op, int(bound[c]), c)


def accumulator_bounds(mod: IRModule) -> list[AccumulatorBound]:
    """The accumulator bound of every qnn.conv2d / qnn.matmul in ``mod`` (before or after fusion)."""
    out = []
    for fn in _functions(mod):
        uses = users(fn.body)
        for node in post_order(fn.body):
            if isinstance(node, Call) and node.op in ACCUMULATING:
                b = _bound(node, uses)
                if b is not None:
                    out.append(b)
    return out


def check_overflow(mod: IRModule) -> IRModule:
    for b in accumulator_bounds(mod):
        if not b.safe:
            warnings.warn(f"check_overflow: node '{b.node}' ({b.op}): the int32 accumulator is not proven safe: "
                          f"|acc| <= {b.bound} >= 2^31 at output channel {b.channel} (|bias| + sum |w| x max|x - zp|, "
                          "times the requantize left shift); the C result may wrap", OverflowWarning, stacklevel=2)
    return mod
