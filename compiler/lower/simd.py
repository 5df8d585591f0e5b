"""What the SIMD kernel variants (arm_dsp, arm_mve) share: their preconditions, the compile-time
weight packing, and the output blocking over flattened pixels.

Output blocking: a micro-kernel computes a block of (2 output pixels x 2 output channels) and hands
each of its accumulators to the group's Epilogue (bias, requantize, clamp, residual qnn.add) at that
output index. Pixels are flattened (p = h*OW + w, so a pair may straddle two rows); the epilogue
then indexes the output as [n, 0, p, k], which is exact when every epilogue operand is either full
size or broadcast in both H and W (checked by ``check_flat_operands``).
"""
from __future__ import annotations

import numpy as np

from ..codegen.emit import SIMD_HEADER
from ..ir import Call, Constant
from ..strategy.epilogue import flat_operands_reason
from .registry import Unsupported

HEADERS = [SIMD_HEADER]


def require(ok: bool, reason: str) -> None:
    if not ok:
        raise Unsupported(reason)


def check_int8_anchor(anchor) -> None:
    x, w = anchor.args
    require(x.ty.dtype == "int8", f"input dtype {x.ty.dtype}, not int8")
    require(isinstance(w, Constant) and w.ty.dtype == "int8", "weights are not a constant int8 tensor")


def check_flat_operands(epi, out_shape: tuple[int, ...], row_axes: tuple[int, ...]) -> None:
    """Unsupported unless the epilogue may index the output with ``row_axes`` flattened into the last
    of them (``strategy.epilogue.flat_operands_reason``)."""
    reason = flat_operands_reason(epi.ops, out_shape, row_axes)
    require(reason is None, reason or "")


def offset_fold(w2d: np.ndarray, offset: int) -> np.ndarray:
    """offset * sum_k w[o, k] per output channel (int32): the input offset folded into the
    accumulator's start value, exact where every tap reads a real input (QUANT.md)."""
    return (np.int64(offset) * w2d.astype(np.int64).sum(axis=1)).astype(np.int32)


def pad_k(w2d: np.ndarray, multiple: int) -> np.ndarray:
    """Zero-pad the reduction axis (last) of [O][K] weights to a multiple of ``multiple``."""
    k = w2d.shape[1]
    k_pad = -(-k // multiple) * multiple
    return np.pad(w2d, ((0, 0), (0, k_pad - k))) if k_pad != k else w2d


def swap_middle_pairs(w2d: np.ndarray) -> np.ndarray:
    """Bytes [k0, k2, k1, k3] in every group of four (K a multiple of 4): SXTB16 of such a word gives
    (k0, k1) and SXTB16 ROR #8 gives (k2, k3), the order of an int16 column written naturally."""
    o, k = w2d.shape
    return np.ascontiguousarray(w2d.reshape(o, k // 4, 4)[:, :, [0, 2, 1, 3]].reshape(o, k))


def widen_weights(w2d: np.ndarray) -> np.ndarray:
    """int8 [O][K] weights (K a multiple of 4) as the int16 pairs SXTB16 and SXTB16 ROR #8 would make of
    each word: per group of 4 bytes [b0 b1 b2 b3] the halfwords [b0 b2 b1 b3], so one 32-bit load
    gives (b0, b2) and the next (b1, b3) with no widening instruction (the ``weights: int16`` tuning
    knob, ``lower.group_knobs``: twice the flash of the int8 weights). Shape [O][K], dtype int16."""
    o, k = w2d.shape
    assert k % 4 == 0, k
    return np.ascontiguousarray(w2d.reshape(o, k // 4, 4)[:, :, [0, 2, 1, 3]].reshape(o, k).astype(np.int16))


def fold_offset(epi, anchor, fold: np.ndarray, pool) -> callable:
    """Apply the folded input offset (``offset_fold``) and return ``init(o)``: the C start value of the
    accumulator of output channel ``o``. When the group's first epilogue op is its bias add (int32,
    per output channel, last axis), the fold goes into that bias at compile time and the accumulators
    start at 0; otherwise they start at a const array of the folds."""
    if not fold.any():
        return lambda o: "0"
    op = epi.ops[0] if epi.ops else None
    if op is not None and op.op == "add" and op.args[0] is anchor and isinstance(op.args[1], Constant):
        bias = op.args[1].value
        nd = len(anchor.ty.shape)
        per_channel = bias.dtype == np.int32 and bias.ndim <= nd and all(d == 1 for d in bias.shape[:-1])
        if per_channel and bias.size in (1, fold.size):
            merged = bias.reshape(-1).astype(np.int64) + fold
            if np.all(np.abs(merged) < 2 ** 31):
                bias_add = Call("add", (anchor, Constant(merged.astype(np.int32))), op.attrs, op.ty, op.span)
                _replace_first_op(epi, bias_add)
                return lambda o: "0"
    name = pool.ref(fold, key=("fold", id(anchor)))
    return lambda o: f"{name}[{o}]"


def _replace_first_op(epi, first: Call) -> None:
    """epi.ops with its first op replaced and the later ops rebuilt to use it (Calls are immutable)."""
    new = {id(epi.ops[0]): first}
    ops = [first]
    for op in epi.ops[1:]:
        args = tuple(new.get(id(a), a) for a in op.args)
        ops.append(Call(op.op, args, op.attrs, op.ty, op.span))
        new[id(op)] = ops[-1]
    epi.ops = ops
