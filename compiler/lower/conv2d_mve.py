"""int8 conv2d (groups = 1) for Helium with a vector requantization: output blocks of (npix <= 2)
pixels x 4 channels, each accumulator a VMLADAVA reduction over 16 int8 lanes (as
``conv2d_arm.conv2d_mve``), then the four channels' accumulators of a pixel moved into one int32x4
vector and requantized together (``codegen_templates/conv2d/arm_mve_quad.c.j2``): per-lane bias,
multiplier and shift loaded from const arrays, VQRDMULH (SaturatingRoundingDoublingHighMul), the
RoundingDivideByPOT fixup (a negative lane lowered by one where its shift is not 0, then VRSHL: halves
away from zero, bit-exact with tf_mbqm's double rounding, QUANT.md), the output zero point, the clamp
and one 4-byte store. The last O % 4 channels go through the 2 x 2 blocks and the scalar epilogue.

Taken when the group's epilogue is a bias add + int8 double-rounding requantize with right shifts
only (+ a residual qnn.add, + a clip): ``requant_mve.quad_epilogue``; otherwise None (the caller's
2 x 2 kernel).
"""
from __future__ import annotations

import numpy as np

from ..codegen.templates import template
from ..poly import Statement, loops_to_c
from .conv2d_arm import block_outputs, conv2d_mve, conv_geometry, inplace_buffer, pixel_of
from .depthwise_mve import depthwise_mve
from .kernel import Kernel, affine, flat_index
from .registry import variant
from .requant_mve import quad_epilogue
from .simd import HEADERS, check_flat_operands, fold_offset, offset_fold, require


def _quad_statements(N, P, O, col, quad, tail, store, order) -> list[Statement]:
    """isl statements over pixel pairs (p flattened over OH*OW, the odd pixel last; ``order``
    'descending' reverses the pixels) x channel quads: col(n, p, npix) fills the scratch (None: no
    im2col), quad(n, p, o, npix) one 4-channel block, tail(n, p, npix) the last O % 4 channels (None:
    none), store(n, p, npix) the in-place pixel store (None: not in place)."""
    PP, Q = P // 2, O // 4
    down = order == "descending"
    stmts = []
    for npix in (2, 1):
        if (npix == 2 and PP == 0) or (npix == 1 and P % 2 == 0):
            continue
        dom, dims = (f"0 <= n < {N} and 0 <= pp < {PP}", ("n", "pp")) if npix == 2 else (f"0 <= n < {N}", ("n",))
        pos = "pp" if npix == 2 else str(PP)
        p_of = pixel_of(npix, P, down)
        tag = "" if npix == 2 else "_t"
        parts = [("col", col and (lambda p_of=p_of, npix=npix, **c: col(c["n"], p_of(c), npix))),
                 ("tail", tail and (lambda p_of=p_of, npix=npix, **c: tail(c["n"], p_of(c), npix))),
                 ("store", store and (lambda p_of=p_of, npix=npix, **c: store(c["n"], p_of(c), npix)))]
        for k, (name, body) in enumerate(parts):
            if body is not None:
                stmts.append(Statement(f"S_{name}{tag}", dims, dom, ("n", pos, str(2 * k), "0"), body))
        if Q:
            stmts.append(Statement(f"S_quad{tag}", dims + ("q",), f"{dom} and 0 <= q < {Q}", ("n", pos, "1", "q"),
                                   lambda p_of=p_of, npix=npix, **c:
                                   quad(c["n"], p_of(c), affine((c["q"], 4)), npix)))
    return stmts


def conv2d_mve_quads(fn, anchor, epi, pool, name, g, order=None) -> Kernel | None:
    """The quad kernel (module doc) of an int8 conv group with geometry ``g``, or None when the
    epilogue is not the one the vector requantization computes. ``order``: in place through a
    two-pixel buffer, pixels in that order (as ``conv2d_arm.conv2d_mve``)."""
    if fn.body.ty.dtype != "int8" or g.K < 4:
        return None
    shape = anchor.ty.shape
    if quad_epilogue(anchor, epi.ops, g.K, shape) is None:
        return None
    fold = offset_fold(anchor.args[1].value.reshape(g.K, g.reduction), g.offset)
    init = fold_offset(epi, anchor, fold, pool)     # into the bias when it fits (exact, see conv2d_mve)
    bias, mult, shift, ozp, clamp, qa = quad_epilogue(anchor, epi.ops, g.K, shape)
    if init("0") != "0":                            # not merged: the tail blocks start at the folds
        bias = bias + fold
    bias = (bias + 2 ** 31) % 2 ** 32 - 2 ** 31     # int32 sums wrap (mod 2^32 the same total)
    t = template("conv2d/arm_mve_quad.c.j2").module
    tm = template("conv2d/arm_mve.c.j2").module
    direct = g.is_pointwise
    R, xs = g.reduction, (g.C if direct else g.reduction)
    col_bytes = 0 if direct else 2 * R
    tmp, scratch, store = inplace_buffer(g, fn, order, col_bytes) if order else (None, col_bytes, None)
    wname = pool.ref(anchor.args[1])
    arrs = [pool.ref(a.astype(np.int32), key=(k, id(anchor))) for k, a in
            (("mveq_bias", bias), ("mveq_mult", mult), ("mveq_shift", shift))]
    geo = vars(g) | {"K": R, "offset": g.offset}

    def x_of(n, p):
        return f"p0 + {affine((n, g.P * g.C), (p, g.C))}" if direct else "(const int8_t *)scratch"

    def dst(n, p, o, i):
        if tmp:
            return f"{tmp} + {affine((o, 1), (str(i * g.K), 1))}"
        return f"out + {flat_index(anchor.ty.shape, [n, '0', affine((p, 1), (str(i), 1)), o])}"

    fill = t.im2col_rows if g.dw == 1 else tm.im2col

    def col(n, p, npix):
        return "\n".join("{\n" + fill(n, affine((p, 1), (str(j), 1)), j, geo) + "}" for j in range(npix))

    def quad(n, p, o, npix):
        idx = [[n, "0", affine((p, 1), (str(i), 1)), o] for i in range(npix)]
        others = ["&" + epi.operand(qa.other, shape, ix, {}) for ix in idx] if qa else None
        return t.quad(npix, R, x_of(n, p), xs, f"{wname} + {affine((o, R))}", o, arrs, ozp, clamp,
                      [dst(n, p, o, i) for i in range(npix)], qa, others)

    def tail(n, p, npix):
        o0 = g.K // 4 * 4
        parts = []
        for o in range(o0, g.K, 2):
            nch = min(2, g.K - o)
            parts.append("{\n" + tm.block(npix, nch, R, x_of(n, p), xs, f"{wname} + {o * R}", R,
                                          [init(str(o)), init(str(o + 1))],
                                          block_outputs(epi, anchor.ty.shape, n, p, str(o), npix, nch, tmp)) + "}")
        return "\n".join(parts)

    stmts = _quad_statements(g.N, g.P, g.K, None if direct else col, quad, tail if g.K % 4 else None, store,
                             order or "ascending")
    macros, loops = loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [], macros,
                  macs=g.N * g.P * g.K * R, scratch_bytes=scratch, headers=list(HEADERS))


@variant("arm_mve", "qnn.conv2d")
def conv2d_mve_variant(fn, anchor, epi, pool, name, order=None) -> Kernel:
    """The arm_mve qnn.conv2d: the quad kernel where the epilogue allows it, else the 2 x 2 block kernel
    (``conv2d_arm.conv2d_mve``). ``order``: in place through a pixel buffer, pixels in that order."""
    g = conv_geometry(anchor)
    if g.G != 1:
        kernel = depthwise_mve(fn, anchor, epi, pool, name, g, order) if g.depthwise else None
        require(kernel is not None, "Helium depthwise: multiplier 1, at most MAX_UNROLLED_TAPS taps, int8 bias + "
                                    "requantize (+ clip) epilogue only (the next variant, arm_dsp, takes the rest)")
        return kernel
    check_flat_operands(epi, anchor.ty.shape, (1, 2))
    return conv2d_mve_quads(fn, anchor, epi, pool, name, g, order) or conv2d_mve(fn, anchor, epi, pool, name, order)


__all__ = ["conv2d_mve_quads", "conv2d_mve_variant"]
