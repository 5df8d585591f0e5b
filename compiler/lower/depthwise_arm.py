"""int8 depthwise conv2d (groups = input channels, any channel multiplier) for DSP cores.

isl builds the loop nest over output pixels and groups of four output channels (quads); per pixel a
table of tap pointers (a padded tap points at a constant row of the input zero point, which adds 0
once the input offset is applied: exact, QUANT.md), per quad the taps unrolled with SXTAB16 +
SMLABB/SMLATT against weights widened to int16 lane pairs at compile time
(codegen_templates/depthwise/arm_dsp.c.j2). Channels past the last quad go one at a time. The
outputs go through the short exact requantize (``requant_arm``) where its range conditions hold.
"""
from __future__ import annotations

import numpy as np

from ..codegen.emit import REQUANT_ARM_HEADER
from ..codegen.templates import template
from ..poly import Statement, loops_to_c
from ..poly.isl_helpers import box
from .depthwise_common import MAX_UNROLLED_TAPS, quad_weights, tap_pointers, unrollable
from .kernel import Kernel, affine, flat_index
from .requant_arm import short_requant
from .simd import HEADERS, require


def depthwise_dsp(fn, anchor, epi, pool, name, g, order=None) -> Kernel:
    """``order``: in place through a one-pixel buffer (all channels of an output pixel, then one store),
    pixels in that order (lower_simd_inplace)."""
    require(g.C == g.G, f"grouped conv with {g.Cg} channels per group")
    require(unrollable(g), f"a {g.KH}x{g.KW} window: more than {MAX_UNROLLED_TAPS} taps to unroll")
    require(not order or (g.N == 1 and fn.body.ty.dtype == "int8"), "in place: batch 1, int8 output only")
    x = anchor.args[0]
    out_shape = anchor.ty.shape
    M, Q, T = g.M, g.K // 4, g.KH * g.KW
    wt = anchor.args[1].value.reshape(g.K, T)
    t = template("depthwise/arm_dsp.c.j2").module
    wq = pool.ref(quad_weights(wt), key=("dw_quads", id(anchor))) if Q else None
    wname = pool.ref(anchor.args[1]) if g.K % 4 else None
    padded = g.pt or g.pl or g.pb or g.pr
    zrow = pool.ref(np.full(g.C, -g.offset, np.int8), key=("zp_row", g.C, g.offset)) if padded else "p0"

    outer = ("n", "h", "w")
    ob = box(outer, (g.N, g.OH, g.OW))

    def taps(n, h, w):
        return t.S_taps(tap_pointers(g, h, w, lambda ih, iw: f"p0 + {flat_index(x.ty.shape, [n, ih, iw, '0'])}"),
                        zrow)

    sr = _short_requant(epi, anchor, wt, g.offset)

    def outs(n, h, w, ks, accs):
        res = []
        for k, acc in zip(ks, accs):
            idx = [n, h, w, k]
            lines, value = ([], sr.c_output(pool, ("dw_sr", id(anchor)), acc, k)) if sr else epi.code(idx, acc=acc)
            res.append((lines, value, f"((int8_t *)scratch)[{k}]" if order else f"out[{flat_index(out_shape, idx)}]"))
        return res

    def quad(n, h, w, q):
        ks = [affine((q, 4), (str(i), 1)) for i in range(4)]
        lanes = [[f"tp[{tt}][({k}) / {M}]" for k in ks] for tt in range(T)]
        return t.S_quad(affine((q, 4)), T, f"{wq} + {affine((q, 2 * T))}", g.offset, M, lanes,
                        outs(n, h, w, ks, [f"a{i}" for i in range(4)]))

    def one(n, h, w, k):
        ci = k if M == 1 else f"({k}) / {M}"
        return t.S_one(ci, f"({wname} + {affine((k, T))})", T, g.offset, outs(n, h, w, [k], ["a0"]))

    time = ("n", "-h", "-w") if order == "descending" else outer
    stmts = [Statement("S_taps", outer, ob, time + ("0", "0"), taps)]
    if Q:
        stmts.append(Statement("S_quad", outer + ("q",), f"{ob} and 0 <= q < {Q}", time + ("1", "q"), quad))
    if g.K % 4:
        stmts.append(Statement("S_one", outer + ("k",), f"{ob} and {4 * Q} <= k < {g.K}", time + ("2", "k"), one))
    if order:
        stmts.append(Statement("S_store", outer, ob, time + ("3", "0"), lambda n, h, w:
                               f"memcpy(out + {flat_index(out_shape, [n, h, w, '0'])}, scratch, {g.K});"))
    macros, loops = loops_to_c(stmts)
    decls = [f"const int8_t *tp[{T}];"]
    if Q and M == 1:
        decls.append(f"const int32_t off2 = tf_pack_offset({g.offset});")
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, decls, macros,
                  macs=g.N * g.P * g.K * T, scratch_bytes=g.K if order else 0,
                  headers=[*HEADERS, REQUANT_ARM_HEADER] if sr else list(HEADERS))


def _short_requant(epi, anchor, wt: np.ndarray, offset: int):
    """The short requantize (``requant_arm``) of the epilogue, or None: the accumulator is
    sum_t (x_t + offset) w_t with x_t in [-128, 127] (a padded tap adds 0)."""
    w = wt.astype(np.int64)
    lo_x, hi_x = -128 + offset, 127 + offset
    lo = np.minimum(w * lo_x, w * hi_x).sum(axis=1)
    hi = np.maximum(w * lo_x, w * hi_x).sum(axis=1)
    return short_requant(epi, anchor, lo, hi)
