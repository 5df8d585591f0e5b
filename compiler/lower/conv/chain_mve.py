"""Helium (arm_mve) stages of a poly-fused conv chain (``tinyfuse.lower.fused_chain``) on Cortex-M55.

A groups = 1 stage (any C, any window) computes its outputs as the unfused Helium conv does
(``lower/conv/mve.conv2d_mve``): per pixel pair the window is gathered as int8 into a column of the
kernel scratch (``KH*KW*C`` bytes per pixel; a padded tap is the stage's input zero point), the input
offset is folded into the accumulators' start values (exact: every column element is a real input or
the zero point, and ``(zp + offset) * w = 0``), and VMLADAVA sums 16 int8 products per instruction
over the column against the OHWI weight row, the last partial vector tail-predicated
(``codegen_templates/conv2d/arm_mve.c.j2``'s block). Output blocks of 2 pixels x 2 channels; every
accumulator goes through the stage's epilogue to its ring row or to the output, as in the DSP stages.

Depthwise stages keep their DSP form (SXTAB16 / SMLABB, which the M55 has); the column is half the
DSP one's bytes (int8, not int16), so the kernel scratch never grows.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from ...codegen.templates import template
from ...strategy.epilogue import quad_epilogue
from ..kernel import affine
from ..simd import offset_fold


def mve_conv(stage, pool, col_off: int) -> tuple[list, int]:
    """The statements of a groups = 1 chain stage (``fused_chain._DspStage``) in Helium, and the
    column bytes (two pixels) it needs in the scratch at byte ``col_off`` (a multiple of 4).
    Statements are (name, dims, constraints, tail, body, pixel set) as ``fused_chain._dsp_schedules``
    reads them."""
    g, i = stage.geo, stage.i
    t = template("fused_chain/arm_mve.c.j2").module
    n = g.KH * g.KW * g.C
    col = f"((int8_t *)scratch + {col_off})"
    wname = pool.ref(stage.anchor.args[1])
    fold = offset_fold(stage.anchor.args[1].value.reshape(g.K, n), -g.zp)
    fname = pool.ref(fold, key=("chain_mve_fold", id(stage.anchor))) if fold.any() else None
    fold = fold.astype(np.int64)

    def init(k):
        return f"{fname}[{k}]" if fname else "0"

    def b1(c):
        return affine((c["b"], 1), ("1", 1))

    def outs(c, accs):
        res = []
        stage.epi.j = c["j"]
        for acc, b, k in accs:
            lines, value = stage.epi.code(["0", c["a"], b, k], acc=acc)
            res.append((acc, lines, value, stage.dst(dict(c, b=b), k)))
        return res

    def S_col(npix, **c):
        cols = [stage.taps(c, c["b"])] + ([stage.taps(c, b1(c))] if npix == 2 else [])
        return t.S_col(col, n, cols, g.C, g.zp)

    def S_blk(npix, **c):
        k = affine((c["kp"], 2))
        k1 = affine((k, 1), ("1", 1))
        accs = [("a00", c["b"], k), ("a01", c["b"], k1)] + \
            ([("a10", b1(c), k), ("a11", b1(c), k1)] if npix == 2 else [])
        return t.S_blk(npix, 2, n, col, f"{wname} + {affine((k, n))}", [init(k), init(k1)], outs(c, accs))

    def S_blk1(npix, **c):
        k = str(g.K - 1)
        accs = [("a00", c["b"], k)] + ([("a10", b1(c), k)] if npix == 2 else [])
        return t.S_blk(npix, 1, n, col, f"{wname} + {(g.K - 1) * n}", [init(k), init(k)], outs(c, accs))

    quad = _quads(stage, pool, col, n, wname, fold, init, outs, b1)
    stmts = []
    for npix, tag in ((2, "2"), (1, "1")):
        sel = f"pix{tag}"
        stmts.append((f"S{i}_col{tag}", (), "", ("0", "0"), partial(S_col, npix), sel))
        if quad is not None:
            stmts += [(f"S{i}_{name}{tag}", dims, cons, tail, partial(body, npix), sel)
                      for name, dims, cons, tail, body in quad]
        elif g.K >= 2:
            stmts.append((f"S{i}_blk{tag}", ("kp",), f"0 <= kp < {g.K // 2}", ("1", "kp"), partial(S_blk, npix), sel))
        if quad is None and g.K % 2:
            stmts.append((f"S{i}_tail{tag}", (), "", ("2", "0"), partial(S_blk1, npix), sel))
    return stmts, 2 * n


def _quads(stage, pool, col: str, n: int, wname: str, fold, init, outs, b1) -> list | None:
    """Statements (name, dims, constraints, tail, body(npix, **c)) of the stage's outputs in blocks of
    4 channels with the vector requantization (``conv2d/arm_mve_quad.c.j2``; the folded input offset
    goes into its bias) and the last K % 4 channels one at a time through the scalar epilogue; None
    when the stage's epilogue is not the one that kernel computes (``strategy.epilogue.quad_epilogue``)."""
    g = stage.geo
    shape = stage.anchor.ty.shape
    consts = quad_epilogue(stage.anchor, stage.epi.ops, g.K, shape) if g.K >= 4 else None
    if consts is None:
        return None
    bias, mult, shift, ozp, clamp, qa = consts
    bias = (bias + fold + 2 ** 31) % 2 ** 32 - 2 ** 31          # int32 sums wrap: the same total
    arrs = [pool.ref(a.astype(np.int32), key=(k, id(stage.anchor))) for k, a in
            (("chain_mveq_bias", bias), ("chain_mveq_mult", mult), ("chain_mveq_shift", shift))]
    tq = template("conv2d/arm_mve_quad.c.j2").module
    t = template("fused_chain/arm_mve.c.j2").module

    def S_quad(npix, **c):
        o = affine((c["q"], 4))
        bs = [c["b"], b1(c)][:npix]
        stage.epi.j = c["j"]
        others = ["&" + stage.epi.operand(qa.other, shape, ["0", c["a"], b, o], {}) for b in bs] if qa else None
        return tq.quad(npix, n, f"(const int8_t *){col}", n, f"{wname} + {affine((o, n))}", o, arrs, ozp, clamp,
                       ["&" + stage.dst(dict(c, b=b), o) for b in bs], qa, others)

    def S_rest(npix, **c):
        parts = []
        for k in range(g.K // 4 * 4, g.K):
            accs = [("a00", c["b"], str(k))] + ([("a10", b1(c), str(k))] if npix == 2 else [])
            parts.append("{\n" + t.S_blk(npix, 1, n, col, f"{wname} + {k * n}", [init(k), init(k)], outs(c, accs))
                         + "}")
        return "\n".join(parts)

    quads = [("quad", ("q",), f"0 <= q < {g.K // 4}", ("1", "q"), S_quad)]
    return quads + ([("rest", (), "", ("2", "0"), S_rest)] if g.K % 4 else [])


__all__ = ["mve_conv"]
