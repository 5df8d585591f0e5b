"""The output blocking shared by the SIMD conv kernels (arm_dsp ``dsp``, arm_mve ``mve``) and the
fully connected ones (``lower/matmul_arm``): isl statements over blocks of 2 output pixels (flattened
over OH*OW, so a pair may straddle two rows) x 2-4 output channels, plus the odd pixel and the channel
tails; each accumulator handed to the group's Epilogue at its output index ``[n, 0, p, k]``
(``lower.kernel.flat_index``), or to the short exact requantize; the in-place pixel buffer.
"""
from __future__ import annotations

import numpy as np

from ...codegen.emit import REQUANT_ARM_HEADER
from ...ops.conv_geom import ConvGeom
from ...poly import Statement, loops_to_c
from ..kernel import Kernel, affine, flat_index
from ..requant_arm import c_store, short_requant
from ..simd import (HEADERS, check_int8_anchor, require)


def conv_geometry(anchor) -> ConvGeom:
    """The geometry of an int8 NHWC/OHWI qnn.conv2d; Unsupported for anything else."""
    check_int8_anchor(anchor)
    a = anchor.attrs
    require(a["data_layout"] == "NHWC" and a["kernel_layout"] == "OHWI",
            f"layout {a['data_layout']}/{a['kernel_layout']}, not NHWC/OHWI")
    require(a["input_layout"] is None, "input read through its NCHW layout (im2col reads NHWC pixels): portable C")
    return ConvGeom.of_call(anchor)


def pixel_of(npix: int, P: int, down: bool):
    """The C expression of a block's lower output pixel from its isl coordinates ``c``: pixel pair pp
    covers pixels 2pp, 2pp+1 (``down``: counted from the end, P-2-2pp), the odd pixel (npix 1) is the last
    one (``down``: pixel 0)."""
    PP = P // 2

    def p_of(c):
        if npix == 1:
            return "0" if down else str(2 * PP)
        return affine((c["pp"], -2), (str(P - 2), 1)) if down else affine((c["pp"], 2))
    return p_of


def blocked_statements(N: int, P: int, O: int, col, block, store=None, order: str = "ascending",
                       och: int = 2) -> list[Statement]:
    """isl statements over output blocks of 2 pixels x ``och`` channels (p flattened over OH*OW), with
    the odd-pixel and the O % och channel tails: col(n, p, npix) fills the scratch (None: no im2col),
    block(n, p, o, npix, nch) computes one block, store(n, p, npix) (optional) runs after the last
    channel block of a pixel pair. p and o are C expressions; p is the lower pixel of the pair.
    ``order``: pixel pairs in ascending p (the odd pixel last), or descending (pixel 0 last)."""
    PP, OP, rest = P // 2, O // och, O % och
    stmts = []
    pair = (f"0 <= n < {N} and 0 <= pp < {PP}", ("n", "pp"))
    last = (f"0 <= n < {N}", ("n",))
    down = order == "descending"
    for (dom, dims), npix in ((pair, 2), (last, 1)):
        if (npix == 2 and PP == 0) or (npix == 1 and P % 2 == 0):
            continue
        pos = "pp" if npix == 2 else str(PP)
        p_of = pixel_of(npix, P, down)
        tag = "" if npix == 2 else "_t"
        if col is not None:
            stmts.append(Statement(f"S_col{tag}", dims, dom, ("n", pos, "0", "0"),
                                   lambda p_of=p_of, npix=npix, **c: col(c["n"], p_of(c), npix)))
        if OP:
            stmts.append(Statement(f"S_blk{tag}", dims + ("op",), f"{dom} and 0 <= op < {OP}", ("n", pos, "1", "op"),
                                   lambda p_of=p_of, npix=npix, **c:
                                   block(c["n"], p_of(c), affine((c["op"], och)), npix, och)))
        if rest:
            stmts.append(Statement(f"S_blk1{tag}", dims, dom, ("n", pos, "2", "0"),
                                   lambda p_of=p_of, npix=npix, **c: block(c["n"], p_of(c), str(O - rest), npix, rest)))
        if store is not None:
            stmts.append(Statement(f"S_store{tag}", dims, dom, ("n", pos, "3", "0"),
                                   lambda p_of=p_of, npix=npix, **c: store(c["n"], p_of(c), npix)))
    return stmts


def block_outputs(epi, out_shape, n: str, p: str, o: str, npix: int, nch: int, tmp: str | None = None,
                  short=None) -> list[tuple]:
    """(accumulator, epilogue lines, value, destination) for each output of a block, NHWC flattened
    as [n, 0, p, k] (check_flat_operands makes that exact for the epilogue operands). ``tmp``: the
    in-place pixel buffer (2 pixels x O bytes) to write instead of the output. ``short(acc, k)``: the
    C value of the short requantize (``short_output``) instead of the epilogue, or None."""
    O = out_shape[-1]
    outs = []
    for i in range(npix):
        for j in range(nch):
            idx = [n, "0", affine((p, 1), (str(i), 1)), affine((o, 1), (str(j), 1))]
            lines, value = ([], short(f"a{i}{j}", idx[3])) if short else epi.code(idx, acc=f"a{i}{j}")
            dst = f"{tmp}[{affine((o, 1), (str(i * O + j), 1))}]" if tmp else f"out[{flat_index(out_shape, idx)}]"
            outs.append((f"a{i}{j}", lines, value, dst))
    return outs


def mac_bounds(w2d: np.ndarray, lo_x: int, hi_x: int) -> tuple[np.ndarray, np.ndarray]:
    """[K] int64 bounds of sum_t x_t w[k, t] with every x_t in [lo_x, hi_x] (lo_x <= 0 <= hi_x, so a
    padded tap that adds 0 stays inside them): the accumulator range short_requant checks."""
    w = w2d.astype(np.int64)
    return np.minimum(w * lo_x, w * hi_x).sum(axis=1), np.maximum(w * lo_x, w * hi_x).sum(axis=1)


def short_output(epi, anchor, pool, init, bounds):
    """(``short(acc, k)`` for block_outputs, extra Kernel headers) of the short exact requantize
    (requant_arm.short_requant) when the accumulators start at 0 (bias and offset fold in the epilogue's
    bias add) and every channel's range conditions hold on ``bounds`` (mac_bounds); (None, [])
    otherwise. The per-channel 2 bias, m, hz and e are the columns of one const [K][n] table (a uniform
    one is a literal instead)."""
    if init("0") != "0":
        return None, []
    sr = short_requant(epi.ops, anchor, *bounds)
    if sr is None:
        return None, []
    cols = [a for a in (sr.bias2, sr.m, sr.hz, sr.e) if not np.all(a == a[0])]
    tname = pool.ref(np.ascontiguousarray(np.stack(cols, axis=1)), key=("sr", id(anchor))) if cols else None

    def value(acc: str, k: str) -> str:     # one [K][n] table: one base register, not four
        parts, c = [], 0
        for a in (sr.bias2, sr.m, sr.hz, sr.e):
            if np.all(a == a[0]):
                parts.append(str(int(a[0])))
            else:
                parts.append(f"{tname}[{affine((k, len(cols)))} + {c}]" if c else f"{tname}[{affine((k, len(cols)))}]")
                c += 1
        a2 = f"(2 * ({acc}) + {parts[0]})" if parts[0] != "0" else f"2 * ({acc})"
        return c_store(sr, a2, *parts[1:])
    return value, [REQUANT_ARM_HEADER]


def block_inits(init, o: str, nch: int) -> list[str]:
    """The accumulator start values of a channel block from channel ``o``: init(o), init(o + 1), ...
    (at least two: the 2-channel micro-kernels take both even when the block has one channel)."""
    return [init(o)] + [init(affine((o, 1), (str(j), 1))) for j in range(1, max(nch, 2))]


def inplace_buffer(g, fn, order, col_bytes: int):
    """For a pixel-buffer in-place kernel (``order`` set): (C name of the 2-pixel output buffer in the
    scratch after ``col_bytes`` of columns, its bytes, store(n, p, npix)). (None, 0, None) otherwise."""
    if order is None:
        return None, 0, None
    require(g.N == 1 and fn.body.ty.dtype == "int8", "in place: batch 1, int8 output only")
    base = -(-col_bytes // 4) * 4
    tmp = f"((int8_t *)scratch + {base})" if base else "((int8_t *)scratch)"

    def store(n, p, npix):
        return f"memcpy(out + {affine((p, g.K))}, {tmp}, {npix * g.K});"
    return tmp, base + 2 * g.K, store


def blocked_conv(fn, anchor, epi, name, g, order, t, *, geo: dict, direct: bool, col: tuple[str, int],
                 weights: tuple[str, int], init, micro, och: int = 2, short=(None, [])) -> Kernel:
    """The int8 conv (groups 1) kernel over output blocks of 2 pixels x 2 channels (blocked_statements),
    shared by the arm_dsp and arm_mve variants; only the micro-kernel differs.

    ``t``: the variant's template module, whose ``im2col(n, p, j, geo)`` fills column j of the scratch
    for output pixel p; ``direct``: the input is read in place (no im2col); ``col``: (C element type of
    the columns, their scratch bytes); ``weights``: (C name of the [O][row] weights, row length);
    ``init(o)``: start value of an accumulator of output channel o (C expression); ``micro(x, w, inits,
    npix, nch, outs)``: C of one block from the pointers to its first input pixel (or column) and
    weight row, the two channels' start values and block_outputs. ``order``: in place through a pixel
    buffer (the pixel_buffer mode of its strategy), pixels in that order; None: not in place. ``short``: short_output's
    pair (the short requantize's value and headers) or (None, []).
    """
    out_shape = anchor.ty.shape
    wname, wk = weights
    tmp, scratch, store = inplace_buffer(g, fn, order, col[1]) if order else (None, col[1], None)

    def im2col(n, p, npix):
        return "\n".join("{\n" + t.im2col(n, affine((p, 1), (str(j), 1)), j, geo) + "}" for j in range(npix))

    def block(n, p, o, npix, nch):
        x = f"p0 + {affine((n, g.P * g.C), (p, g.C))}" if direct else f"(const {col[0]} *)scratch"
        w = f"{wname} + {affine((o, wk))}" if o != "0" else wname
        return micro(x, w, block_inits(init, o, nch), npix, nch, block_outputs(epi, out_shape, n, p, o, npix, nch, tmp,
                                                                                   short[0]))

    macros, loops = loops_to_c(blocked_statements(g.N, g.P, g.K, None if direct else im2col, block, store,
                                                  order or "ascending", och))
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [], macros,
                  macs=g.N * g.P * g.K * g.reduction, scratch_bytes=scratch, headers=[*HEADERS, *short[1]])


__all__ = ["block_inits", "block_outputs", "blocked_conv", "blocked_statements", "conv_geometry", "inplace_buffer",
           "mac_bounds", "pixel_of", "short_output"]
