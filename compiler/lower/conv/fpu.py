"""float32 conv2d (groups 1 and depthwise) and fully connected for Arm cores with a single-precision
FPU: the arm_fpu variant of nn.conv2d and nn.matmul (Cortex-M4F, M7, M33, M55: ``Target.features``
'vfp').

isl builds the outer nest over output blocks of 4 pixels x 4 channels, with the pixel and channel
tails; the bodies are the register-blocked VFMA micro-kernels of codegen_templates/conv2d/arm_fpu.c.j2:
the 16 accumulators stay in S registers, each reduction step loads 4 inputs and 4 weights for 16
fused multiply-adds (about 1.5 instructions a MAC instead of the portable kernel's two loads, a
multiply and an add). Pointwise convs and matmuls block flattened pixels (rows) read in place; KxK
and depthwise convs block 4 output rows of one column, so a padded column is skipped for the whole
block and a padded row reads a const row of zeros (no test per tap, no scratch: the arena is the
portable kernel's). The weights are repacked at compile time into groups of 4 output channels,
[O/4][KH][KW][C][4] (zero-padded to a multiple of 4 channels; depthwise [C/4][KH][KW][4]). Fused
multiply-adds round once per MAC, so the sums differ from the portable kernel's within float
tolerance. No in-place or NCHW-input variant (those convs run the portable kernels).
"""
from __future__ import annotations

import numpy as np

from ...codegen.templates import template
from ...ir import Constant
from ...ops.conv_geom import ConvGeom
from ...poly import Statement, loops_to_c
from ..kernel import Kernel, affine, flat_index
from ..simd import HEADERS, check_flat_operands, require

PB, OB = 4, 4           # output block: pixels x channels


def fpu_statements(N: int, P: int, O: int, block, cols: int = 1) -> list[Statement]:
    """isl statements over output blocks of PB pixels x OB channels and the P % PB, O % OB tails:
    block(n, p, q, o, npix, nch) is the C of one block (p: its first pixel row, q: the column, o: its
    first channel; C expressions). ``cols`` 1: p runs over flattened pixels (q is 0); else pixels are
    P rows x ``cols`` columns and a block is npix rows of one column."""
    PP, OP, prest, orest = P // PB, O // OB, P % PB, O % OB
    stmts = []
    for ptag, pdom, pdims, pos, npix in (("", f"0 <= pb < {PP}", ("pb",), "pb", PB), ("_t", None, (), str(PP), prest)):
        if npix == 0 or (npix == PB and PP == 0):
            continue
        dims = ("n",) + pdims + ("q",)
        dom = f"0 <= n < {N} and 0 <= q < {cols}" + (f" and {pdom}" if pdom else "")

        def p_of(c, npix=npix):
            return affine((c["pb"], PB)) if npix == PB else str(P - npix)
        if OP:
            stmts.append(Statement(f"S_f{ptag}", dims + ("ob",), f"{dom} and 0 <= ob < {OP}",
                                   ("n", pos, "q", "0", "ob"), lambda p_of=p_of, npix=npix, **c:
                                   block(c["n"], p_of(c), c["q"], affine((c["ob"], OB)), npix, OB)))
        if orest:
            stmts.append(Statement(f"S_f1{ptag}", dims, dom, ("n", pos, "q", "1", "0"),
                                   lambda p_of=p_of, npix=npix, **c:
                                   block(c["n"], p_of(c), c["q"], str(O - orest), npix, orest)))
    return stmts


def block_outputs(epi, out_shape, idx_of, npix: int, nch: int, o: str) -> list[tuple]:
    """(accumulator, epilogue lines, value, destination) per output of a block: ``idx_of(i, ch)`` is the
    output index (list of C expressions) of pixel i, channel expression ch."""
    outs = []
    for i in range(npix):
        for j in range(nch):
            idx = idx_of(i, affine((o, 1), (str(j), 1)))
            lines, value = epi.code(idx, acc=f"a{i}{j}")
            outs.append((f"a{i}{j}", lines, value, f"out[{flat_index(out_shape, idx)}]"))
    return outs


def channel_groups(w2d: np.ndarray, taps: int) -> np.ndarray:
    """[O][taps * C] float weights → [ceil(O/4)][taps][C][4] (O zero-padded to a multiple of 4)."""
    o = w2d.shape[0]
    o4 = -(-o // OB) * OB
    w = np.pad(w2d, ((0, o4 - o), (0, 0))).reshape(o4 // OB, OB, -1)
    return np.ascontiguousarray(w.transpose(0, 2, 1)).astype(np.float32)


def check_float(anchor, epi) -> None:
    x, w = anchor.args
    require(x.ty.dtype == "float32" and anchor.ty.dtype == "float32", f"dtype {x.ty.dtype}, not float32")
    require(isinstance(w, Constant) and w.ty.dtype == "float32", "weights are not a constant float32 tensor")


def conv2d_fpu(fn, anchor, epi, pool, name, order=None) -> Kernel:
    """NHWC/OHWI float conv, groups 1 or depthwise (multiplier 1); Unsupported otherwise (and in place:
    ``order``)."""
    require(order is None, "no in-place float kernel: portable C")
    check_float(anchor, epi)
    a = anchor.attrs
    require(a["data_layout"] == "NHWC" and a["kernel_layout"] == "OHWI" and a["input_layout"] is None,
            "layout not NHWC/OHWI read as NHWC")
    g = ConvGeom.of_call(anchor)
    require(g.G == 1 or (g.G == g.C and g.M == 1), f"grouped conv ({g.G} groups, multiplier {g.M}): portable C")
    out_shape = anchor.ty.shape
    check_flat_operands(epi, out_shape, (1, 2))
    t = template("conv2d/arm_fpu.c.j2").module
    wt = anchor.args[1].value
    geo = vars(g)
    if g.is_pointwise and g.G == 1:   # flattened pixels, read in place (a 1x1 depthwise: dw blocks)
        wname = pool.ref(channel_groups(wt.reshape(g.K, -1), 1), key=("fpu_w", id(anchor)))

        def block(n, p, q, o, npix, nch):
            w = f"{wname} + {affine((o, g.C))}" if o != "0" else wname
            outs = block_outputs(epi, out_shape, lambda i, ch: [n, "0", affine((p, 1), (str(i), 1)), ch], npix, nch, o)
            return t.direct_block(npix, nch, g.C, f"p0 + {affine((n, g.OH * g.OW * g.C), (p, g.C))}", w, outs)
        stmts = fpu_statements(g.N, g.OH * g.OW, g.K, block)
    else:                             # npix rows of one output column
        taps = g.KH * g.KW
        zrow = pool.ref(np.zeros(g.W * g.C, np.float32), key=("fpu_zeros", g.W * g.C))
        wname = pool.ref(channel_groups(wt.reshape(g.K, -1), taps), key=("fpu_w", id(anchor)))
        step = taps * (g.C if g.G == 1 else 1)

        def block(n, p, q, o, npix, nch):
            w = f"{wname} + {affine((o, step))}" if o != "0" else wname
            outs = block_outputs(epi, out_shape, lambda i, ch: [n, affine((p, 1), (str(i), 1)), q, ch], npix, nch, o)
            if g.G == 1:
                return t.conv_block(npix, nch, n, p, q, geo, w, zrow, outs)
            return t.dw_block(npix, nch, n, p, q, o, geo, w, zrow, outs)
        stmts = fpu_statements(g.N, g.OH, g.K, block, cols=g.OW)
    macros, loops = loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [], macros,
                  macs=g.N * g.OH * g.OW * g.K * g.KH * g.KW * g.Cg, headers=list(HEADERS))


def matmul_fpu(fn, anchor, epi, pool, name, order=None) -> Kernel:
    """Fully connected with constant [K][N] float weights: rows x columns blocks of the direct micro-kernel."""
    require(order is None, "no in-place matmul kernel")
    check_float(anchor, epi)
    b = anchor.args[1]
    require(b.ty.ndim == 2, "weights are not a matrix")
    out_shape = anchor.ty.shape
    K, N = b.ty.shape
    R = int(np.prod(out_shape[:-1]))
    if len(out_shape) >= 2:
        check_flat_operands(epi, out_shape, tuple(range(len(out_shape) - 1)))
    t = template("conv2d/arm_fpu.c.j2").module
    wname = pool.ref(channel_groups(np.ascontiguousarray(b.value.T), 1), key=("fpu_w", id(b)))

    lead = ["0"] * (len(out_shape) - 2)

    def block(n, r, q, o, npix, nch):
        w = f"{wname} + {affine((o, K))}" if o != "0" else wname
        x = f"p0 + {affine((r, K))}" if r != "0" else "p0"
        outs = block_outputs(epi, out_shape, lambda i, ch: lead + [affine((r, 1), (str(i), 1)), ch]
                             if len(out_shape) >= 2 else [ch], npix, nch, o)
        return t.direct_block(npix, nch, K, x, w, outs)
    macros, loops = loops_to_c(fpu_statements(1, R, N, block))
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [], macros, macs=R * N * K, headers=list(HEADERS))
