"""int8 depthwise conv2d (groups = input channels, any channel multiplier) for DSP cores.

isl builds the loop nest over output pixels and groups of four output channels (quads); per pixel a
table of tap pointers (a padded tap points at a constant row of the input zero point, which adds 0
once the input offset is applied: exact, QUANT.md), per quad the taps unrolled with SXTAB16 +
SMLABB/SMLATT against weights widened to int16 lane pairs at compile time
(codegen_templates/depthwise/arm_dsp.c.j2). Channels past the last quad go one at a time.
"""
from __future__ import annotations

import numpy as np

from ..codegen.templates import template
from ..poly import Statement, loops_to_c
from ..poly.isl_helpers import box
from .kernel import Kernel, affine, flat_index
from .simd import HEADERS, require


def quad_weights(w: np.ndarray) -> np.ndarray:
    """[O][T] int8 (T taps) -> int32 [O//4][T][2]: word 0 = (w[4q], w[4q+2]), word 1 = (w[4q+1], w[4q+3])
    as int16 halfwords (low, high), the lane order of SXTB16 on four consecutive channels."""
    q = w[: w.shape[0] // 4 * 4].astype(np.int64).reshape(-1, 4, w.shape[1])
    lo = lambda v: v & 0xFFFF  # noqa: E731
    words = np.stack([lo(q[:, 0]) | (lo(q[:, 2]) << 16), lo(q[:, 1]) | (lo(q[:, 3]) << 16)], axis=-1)
    return words.astype(np.uint32).view(np.int32)


def tap_pointers(g, x_shape, n: str, h: str, w: str) -> list[tuple[str, str]]:
    """Per tap: (C condition that it reads a real input element, '' when every output pixel's does;
    pointer to that input pixel's channel vector)."""
    taps = []
    for r in range(g.KH):
        for s in range(g.KW):
            conds = []
            for o, stride, lo, out_size, size in ((h, g.sh, r * g.dh - g.pt, g.OH, g.H),
                                                  (w, g.sw, s * g.dw - g.pl, g.OW, g.W)):
                e = affine((o, stride), (str(lo), 1))
                if lo < 0:                                  # the first output pixels read padding
                    conds.append(f"{e} >= 0")
                if stride * (out_size - 1) + lo >= size:    # the last ones do
                    conds.append(f"{e} < {size}")
            ih, iw = affine((h, g.sh), (str(r * g.dh - g.pt), 1)), affine((w, g.sw), (str(s * g.dw - g.pl), 1))
            taps.append((" && ".join(conds), f"p0 + {flat_index(x_shape, [n, ih, iw, '0'])}"))
    return taps


def depthwise_dsp(fn, anchor, epi, pool, name, g, order=None) -> Kernel:
    """``order``: in place through a one-pixel buffer (all channels of an output pixel, then one store),
    pixels in that order (lower_simd_inplace)."""
    require(g.C == g.groups, f"grouped conv with {g.C // g.groups} channels per group")
    if order:
        require(g.N == 1 and fn.body.ty.dtype == "int8", "in place: batch 1, int8 output only")
    x = anchor.args[0]
    out_shape = anchor.ty.shape
    M = g.O // g.groups
    Q = g.O // 4
    T = g.KH * g.KW
    wt = anchor.args[1].value.reshape(g.O, T)
    t = template("depthwise/arm_dsp.c.j2").module
    wq = pool.ref(quad_weights(wt), key=("dw_quads", id(anchor))) if Q else None
    wname = pool.ref(anchor.args[1]) if g.O % 4 else None
    padded = g.pt or g.pl or g.pb or g.pr
    zrow = pool.ref(np.full(g.C, -g.offset, np.int8), key=("zp_row", g.C, g.offset)) if padded else "p0"

    outer = ("n", "h", "w")
    ob = box(outer, (g.N, g.OH, g.OW))

    def taps(n, h, w):
        return t.S_taps(tap_pointers(g, x.ty.shape, n, h, w), zrow)

    def outs(n, h, w, ks, accs):
        res = []
        for k, acc in zip(ks, accs):
            idx = [n, h, w, k]
            lines, value = epi.code(idx, acc=acc)
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
    if g.O % 4:
        stmts.append(Statement("S_one", outer + ("k",), f"{ob} and {4 * Q} <= k < {g.O}", time + ("2", "k"), one))
    if order:
        stmts.append(Statement("S_store", outer, ob, time + ("3", "0"), lambda n, h, w:
                               f"memcpy(out + {flat_index(out_shape, [n, h, w, '0'])}, scratch, {g.O});"))
    macros, loops = loops_to_c(stmts)
    decls = [f"const int8_t *tp[{T}];"]
    if Q and M == 1:
        decls.append(f"const int32_t off2 = tf_pack_offset({g.offset});")
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, decls, macros,
                  macs=g.N * g.P * g.O * T, scratch_bytes=g.O if order else 0, headers=list(HEADERS))
