"""In-place int8 depthwise for Helium (Cortex-M55): the ``dw_plane`` kernel of ``lower/inplace_conv``
(channel by channel through one padded plane in the scratch, outputs written over the input channel;
the order its isl proof covers, ``poly.inplace_models.dw_plane_model``) with the outputs of a plane
row computed four at a time and the requantization vectorised (codegen_templates/inplace_conv/arm_mve.c.j2).

Exact with TFLM (int32 lanes, no narrower accumulation; the input offset folded into the start value,
padded taps read the zero point). Taken when the group is the common int8 depthwise epilogue: a
constant int32 bias add (per channel or one value), then a double-rounding qnn.requantize to int8 with
constant multipliers and right shifts only (shift <= 0; per channel or one value), input zero point 0,
optionally a clip (fused ReLU / ReLU6). Vectors run along output rows, or, for a tall plane, along
output columns of the plane stored transposed (same bytes, the copy writes it transposed), whichever
takes fewer vectors; the lanes are contiguous plane bytes at stride 1 along the vector, gathered
(VLDRB.S32 gather) at a larger stride. Anything else: None (the portable dw_plane kernel).
"""
from __future__ import annotations

import math

import numpy as np

from ..codegen.templates import template
from ..ir import Constant, Function
from ..ops.conv_geom import conv_group
from ..poly import Statement, loops_to_c
from ..poly.isl_helpers import box
from .depthwise_common import tap_pointers, unrollable
from .inplace_conv import finish
from .kernel import Kernel, affine, flat_index
from .simd import HEADERS


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


def _layout(g) -> tuple[dict, list]:
    """The plane layout (template ``body``'s L) and the taps [(plane offset, weight local)]: vectors
    along output rows over the plane as is, or along output columns over the plane stored transposed,
    whichever takes fewer vectors (a tie: the one with stride 1 along the vector, contiguous loads;
    a stride > 1 there gathers the lanes)."""
    ph, pw = g.plane
    copy_h, copy_w = min(g.H, ph - g.pt), min(g.W, pw - g.pl)
    rows = (g.OH * -(-g.OW // 4), g.sw)
    cols = (g.OW * -(-g.OH // 4), g.sh)
    if rows <= cols:
        L = dict(copy_h=copy_h, copy_w=copy_w, dst_h=pw, dst_w=1, base=g.pt * pw + g.pl, outer=g.OH, inner=g.OW,
                 step=g.sh * pw, vstep=g.sw, out_outer=g.OW * g.K, lane=g.K)
        return L, [(r * g.dh * pw + s * g.dw, f"w{r * g.KW + s}") for r in range(g.KH) for s in range(g.KW)]
    L = dict(copy_h=copy_h, copy_w=copy_w, dst_h=1, dst_w=ph, base=g.pl * ph + g.pt, outer=g.OW, inner=g.OH,
             step=g.sw * ph, vstep=g.sh, out_outer=g.K, lane=g.OW * g.K)
    return L, [(s * g.dw * ph + r * g.dh, f"w{r * g.KW + s}") for r in range(g.KH) for s in range(g.KW)]


def lower_dw_plane_mve(fn: Function, name: str, pool, options) -> Kernel | None:
    """The Helium dw_plane kernel of group ``fn`` (module doc), or None where it does not apply or
    ``options`` (a CompileOptions) do not allow arm_mve."""
    if not options.allows("arm_mve"):
        return None
    anchor, epi_ops, g = conv_group(fn)
    if not g.depthwise or g.M != 1 or fn.body.ty.dtype != "int8" or not unrollable(g):
        return None
    consts = epilogue_constants(anchor, epi_ops, g.K)
    if consts is None:
        return None
    bias, mult, shift, ozp, clamp = consts
    T = g.KH * g.KW
    wt = anchor.args[1].value.reshape(g.K, T).astype(np.int64)
    start = bias + (-g.zp) * wt.sum(axis=1)
    if np.any(np.abs(start) >= 2 ** 31):
        return None
    L, taps = _layout(g)
    init = pool.ref(start.astype(np.int32), key=("mve_dw_start", id(anchor)))
    mname = pool.ref(mult.astype(np.int32), key=("mve_dw_mult", id(anchor)))
    sname = pool.ref(shift.astype(np.int32), key=("mve_dw_shift", id(anchor)))
    ph, pw = g.plane
    body = template("inplace_conv/arm_mve.c.j2").module.body(
        g, L, ph * pw, g.zp, taps, pool.ref(anchor.args[1]), f"{init}[k]", f"{mname}[k]", f"{sname}[k]", ozp, clamp)
    # a line's last vector loads whole (its store is predicated): up to 3 bytes past the plane
    last = (L["outer"] - 1) * L["step"] + max(off for off, _ in taps) + (-(-L["inner"] // 4) * 4 - 1) * L["vstep"]
    kernel = Kernel(name, [p.ty for p in fn.params], fn.body.ty, body, ["int8_t *plane = (int8_t *)scratch;"], "",
                    macs=g.macs, scratch_bytes=max(ph * pw, last + 1), headers=list(HEADERS))
    return finish(kernel, fn, anchor, epi_ops, "inplace_dw_plane")


def depthwise_mve(fn, anchor, epi, pool, name, g, order=None) -> Kernel | None:
    """The Helium depthwise kernel (multiplier 1, int8 output, the epilogue ``epilogue_constants``
    takes; codegen_templates/depthwise/arm_mve.c.j2) over output pixels x channel quads, or None.
    ``order``: in place through a one-pixel buffer (all channels of a pixel, then one store), pixels
    in that order (lower_simd_inplace), as ``depthwise_arm.depthwise_dsp``."""
    if g.M != 1 or g.C != g.G or fn.body.ty.dtype != "int8" or (order and g.N != 1) or not unrollable(g):
        return None
    consts = epilogue_constants(anchor, epi.ops, g.K)
    if consts is None:
        return None
    bias, mult, shift, ozp, clamp = consts
    T = g.KH * g.KW
    wt = anchor.args[1].value.reshape(g.K, T)
    start = (bias + g.offset * wt.astype(np.int64).sum(axis=1) + 2 ** 31) % 2 ** 32 - 2 ** 31
    arrs = [pool.ref(a.astype(np.int32), key=(k, id(anchor))) for k, a in
            (("mve_dwq_bias", start), ("mve_dwq_mult", mult), ("mve_dwq_shift", shift))]
    wT = pool.ref(np.ascontiguousarray(wt.T), key=("mve_dwq_wT", id(anchor)))
    padded = g.pt or g.pl or g.pb or g.pr
    zrow = pool.ref(np.full(g.C, g.zp, np.int8), key=("mve_zp_row", g.C, g.zp)) if padded else "p0"
    t = template("depthwise/arm_mve.c.j2").module
    x, out_shape = anchor.args[0], anchor.ty.shape
    outer = ("n", "h", "w")
    ob = box(outer, (g.N, g.OH, g.OW))

    def taps(n, h, w):
        return t.S_taps(tap_pointers(g, h, w, lambda ih, iw: f"p0 + {flat_index(x.ty.shape, [n, ih, iw, '0'])}"),
                        zrow)

    def dst(n, h, w, c):
        return f"(int8_t *)scratch + {c}" if order else f"out + {flat_index(out_shape, [n, h, w, c])}"

    def quad(n, h, w, q, k=4):
        c = affine((q, 4))
        return t.S_quad(c, T, g.K, wT, arrs, ozp, clamp, dst(n, h, w, c), k)

    time = ("n", "-h", "-w") if order == "descending" else outer
    stmts = [Statement("S_taps", outer, ob, time + ("0", "0"), taps)]
    if g.K // 4:
        stmts.append(Statement("S_quad", outer + ("q",), f"{ob} and 0 <= q < {g.K // 4}", time + ("1", "q"), quad))
    if g.K % 4:
        stmts.append(Statement("S_tail", outer, ob, time + ("2", "0"),
                               lambda n, h, w: quad(n, h, w, str(g.K // 4), g.K % 4)))
    if order:
        stmts.append(Statement("S_store", outer, ob, time + ("3", "0"), lambda n, h, w:
                               f"memcpy(out + {flat_index(out_shape, [n, h, w, '0'])}, scratch, {g.K});"))
    macros, loops = loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [f"const int8_t *tp[{T}];"], macros,
                  macs=g.N * g.P * g.K * T, scratch_bytes=g.K if order else 0, headers=list(HEADERS))


__all__ = ["depthwise_mve", "epilogue_constants", "lower_dw_plane_mve"]
