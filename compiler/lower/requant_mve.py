"""The int8 epilogues the Helium kernels requantize in vector form (int32x4 lanes), read off a group's
epilogue ops at compile time: a bias add + double-rounding qnn.requantize to int8 with right shifts
only, then optionally a residual qnn.add (TFLite reference ADD, QUANT.md: both inputs rescaled with 20
bits of headroom, summed, requantized once; its other input a full-size int8 tensor read 4 lanes at a
time), then optionally a clip (fused ReLU / ReLU6). Anything else: None (the scalar epilogue).

Bit-exact with quant.h: every MultiplyByQuantizedMultiplier is VQRDMULH (SaturatingRoundingDoublingHighMul)
then, for a right shift, the RoundingDivideByPOT fixup (a negative lane lowered by one) and VRSHL
(codegen_templates/conv2d/arm_mve_quad.c.j2)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..ir import Var
from .depthwise_mve import epilogue_constants


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


__all__ = ["QAddLanes", "quad_epilogue"]
