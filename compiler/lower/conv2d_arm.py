"""int8 conv2d (groups = 1) for Arm cores with SIMD: the arm_dsp (SMLAD) and arm_mve (Helium) variants
of qnn.conv2d. Depthwise goes to depthwise_arm; other grouped convs stay on the portable kernel.

isl builds the outer loop nest over output blocks (pixel pairs x channel pairs, or x channel quads for
the arm_dsp reductions up to WIDE_STEPS groups or a multiple of WIDE_BODY, plus the odd pixel and the
channel tails); the block bodies are the hand-written micro-kernels of
codegen_templates/conv2d/arm_dsp.c.j2 and arm_mve.c.j2, and every output goes through the group's
shared Epilogue. 1x1 stride-1 unpadded convs read the int8 input in place with the input offset folded
into the accumulators' start values; every other conv goes through an im2col column in the arena
scratch (int16 with the offset applied and 0 at padded taps for DSP; int8 padded with the zero point
plus the folded offset for MVE), so padding stays exact.
"""
from __future__ import annotations

import numpy as np

from ..codegen.emit import REQUANT_ARM_HEADER
from ..codegen.templates import template
from ..ops.conv_geom import ConvGeom
from ..poly import Statement, loops_to_c
from .im2col_rows import gather_rows, row_form, row_weights
from .kernel import Kernel, affine, flat_index
from . import group_knobs
from .requant_arm import c_store, short_requant
from .simd import (HEADERS, check_flat_operands, check_int8_anchor, fold_offset, offset_fold, pad_k, require,
                   swap_middle_pairs, widen_weights)


# The DSP micro-kernel of 2 pixels x WIDE_CHANNELS channels (direct and im2col column modes): its
# reduction unrolled fully up to WIDE_STEPS groups of 4 taps, else a loop of WIDE_BODY groups when that
# divides it (a shorter body spills more at the back edge; a longer one costs code), else 2 x 2.
# Measured on KWS (cortex-m4, tail blocks rolled by wide_unroll): (16, 8) 1.540 instr/MAC, 22.1 KB code;
# (8, 8) 1.676, 16.3 KB; (8, 4) 1.673, 13.5 KB; (2, 2) 1.706, 12.6 KB: every loop costs >= 8 % (the
# 2 x 4 block needs 16 registers, a loop's pointers and counter push it into spills), so the default
# keeps the full unroll of the main block and saves code on the tails instead.
WIDE_CHANNELS, WIDE_STEPS, WIDE_BODY = 4, 16, 8
# The conv kernels (direct and column mode, and the fused chain's conv stages) block 2 pixels x
# CONV_CHANNELS = 3 channels instead: 6 accumulators, the 4 input halves (widened words or column
# words), one weight pair and 2 pointers fit the 14 registers, where 2 x 4 spills about 6 words per step
# (direct: 27 instructions / 24 MACs without spills vs 34 / 32 plus spills). Measured on cortex-m4:
# VWW-like 128 -> 128 pointwise 1.353 -> 1.277 instr/MAC; ResNet-8 convs 1.28 / 1.35 -> 1.10 / 1.16.
# Fewer live registers also make a longer loop body pay: K > 64 reductions loop over CONV_BODY groups
# when it divides them (128 -> 128: 1.277 -> 1.260; a full unroll of 32 groups 1.230 for +16 KB of code
# on VWW-like). The fully connected kernel (matmul_arm) keeps WIDE_CHANNELS.
CONV_CHANNELS, CONV_BODY = 3, 16
# Direct-mode (pointwise) main blocks unroll fully up to DIRECT_STEPS groups, longer reductions loop over
# DIRECT_STEPS groups when it divides them: VWW-like (six 128 -> 128 pointwise layers) 1.617 -> 1.602
# instr/MAC for +10 KB of code, its 256 -> 256 layer 1.260 -> 1.254 for +1.7 KB (column mode gains
# nothing: ResNet-8 1.423 -> 1.433 with 32).
DIRECT_STEPS = 32
TAIL_BODY = 2


def wide_unroll(steps: int, npix: int, nch: int, pixels: int, channels: int,
                och: int = WIDE_CHANNELS) -> tuple[int, int]:
    """(full, body) of the wide micro-kernel for a block of ``npix`` pixels x ``nch`` channels of a
    kernel with ``pixels`` x ``channels`` outputs in blocks of ``och`` channels: the main blocks unroll
    as WIDE_STEPS / WIDE_BODY (CONV_BODY for blocks of CONV_CHANNELS when it divides ``steps``)
    say; the tail blocks (the odd pixel, the O % och channels next to full blocks), which run a small
    fraction of the time, keep a loop of TAIL_BODY steps (or 1 when it does not divide the reduction),
    so a kernel carries one large unrolled body, not three."""
    if (npix == 2 or pixels < 2) and (nch == och or channels < och):
        long_body = och == CONV_CHANNELS and steps % CONV_BODY == 0
        return WIDE_STEPS, CONV_BODY if long_body else WIDE_BODY
    return 0, TAIL_BODY if steps % TAIL_BODY == 0 else 1


def unroll_knobs(steps: int, full: int, body: int) -> tuple[int, int]:
    """(full, body) of a main block under the group's ``unroll`` / ``body`` tuning knobs
    (``lower.group_knobs``): ``unroll`` replaces ``full`` (0 keeps it), ``body`` the loop body; the
    body is then the largest divisor of ``steps`` not above it (a tail block, full 0, keeps its own)."""
    if not full:
        return full, body
    full = group_knobs.get("unroll", 0) or full
    body = group_knobs.get("body", 0) or body
    return full, max(d for d in range(1, body + 1) if steps % d == 0)     # the loop covers every step


UNROLLS = (4, 8, 16, 32)


def offer_wide_knobs(steps: int, full: int) -> None:
    """Offer the wide block's knobs for a reduction of ``steps`` groups of 4 taps fully unrolled up to
    ``full``: int16 weights, channels per block, and the unroll limits that change the code (below
    the default's full unroll: a loop)."""
    group_knobs.offer("weights", group_knobs.WEIGHTS)
    group_knobs.offer("channels", (CONV_CHANNELS, *(c for c in group_knobs.CHANNELS if c != CONV_CHANNELS)))
    default = min(full, steps)
    group_knobs.offer("unroll", (0, *(u for u in UNROLLS if u < steps and u != default)))


def wide_direct(steps: int) -> bool:
    """Whether a direct-mode reduction of ``steps`` groups of 4 taps takes the wide micro-kernel."""
    return steps <= WIDE_STEPS or steps % WIDE_BODY == 0


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


class RowsIm2col:
    """conv2d/arm_dsp.c.j2's module with im2col replaced by the row-wise gather (im2col_rows)."""

    def __init__(self, t, g: ConvGeom):
        self.t, self.g = t, g

    def __getattr__(self, name):
        return getattr(self.t, name)

    def im2col(self, n, p, j, geo) -> str:
        g = self.g
        hw = template("_macros.c.j2").module.pixel_hw(p, g.OW)
        return str(hw) + "\n" + gather_rows(g, "h", "w", lambda ih, iw: f"p0 + {affine((n, g.H * g.W * g.C), (ih, g.W * g.C), (iw, g.C))}",
                                             g.offset, f"(int32_t *)scratch + {2 * j}")


def conv2d_dsp(fn, anchor, epi, pool, name, order=None) -> Kernel:
    """The arm_dsp conv with groups 1 (strategy ``conv2d.arm_dsp``). ``order``: run in place through a
    pixel buffer (the pixel_buffer mode), pixels in that order."""
    g = conv_geometry(anchor)
    check_flat_operands(epi, anchor.ty.shape, (1, 2))
    wt = anchor.args[1].value.reshape(g.K, g.reduction)
    t = template("conv2d/arm_dsp.c.j2").module
    direct = g.is_pointwise and g.C % 4 == 0

    def ref(stored, int8_ref):        # the weights as stored, or pre-widened to int16 (tuning knob)
        if wide_direct(stored.shape[1] // 4) and group_knobs.widened():
            return pool.ref(widen_weights(stored), key=("dsp_w16", id(anchor)))
        return int8_ref()
    if direct:                        # int8 in place, offset folded (every tap real)
        K4, wname = g.reduction, ref(wt, lambda: pool.ref(anchor.args[1]))
        init = fold_offset(epi, anchor, offset_fold(wt, g.offset), pool)
        bounds = mac_bounds(wt, -128, 127)
    elif row_form(g):                 # C % 4 != 0: window rows a word at a time (im2col_rows)
        wp = row_weights(wt, g)
        K4 = wp.shape[1]
        t = RowsIm2col(t, g)
        init = lambda o: "0"  # noqa: E731
        bounds = mac_bounds(wt, -128 + g.offset, 127 + g.offset)     # a padded tap adds 0
        wname = ref(wp, lambda: pool.ref(wp, key=("dsp_w", id(anchor))))
    else:                             # int16 im2col in the scratch
        wp = pad_k(wt, 4)
        K4 = wp.shape[1]
        if g.C % 4:
            wp = swap_middle_pairs(wp)
        wname = ref(wp, lambda: pool.ref(wp, key=("dsp_w", id(anchor))) if wp is not wt else pool.ref(anchor.args[1]))
        init = lambda o: "0"  # noqa: E731
        bounds = mac_bounds(wt, -128 + g.offset, 127 + g.offset)     # a padded tap adds 0
    col_bytes = 0 if direct else 4 * K4     # two pixels x K4 int16
    wide = wide_direct(K4 // 4)       # 2 pixels x 3 channels, each widened word reused across the block
    mode = "direct" if direct else "col"
    if wide:                          # the tuning knobs of the wide block (lower.group_knobs)
        offer_wide_knobs(K4 // 4, DIRECT_STEPS if direct else WIDE_STEPS)
    och = group_knobs.get("channels", CONV_CHANNELS) if wide else 2
    w16 = wide and group_knobs.widened()

    def micro(x, w, inits, npix, nch, outs):
        if wide:
            full, body = wide_unroll(K4 // 4, npix, nch, g.N * g.P, g.K, och)
            if direct and full:
                full, body = DIRECT_STEPS, DIRECT_STEPS if (K4 // 4) % DIRECT_STEPS == 0 else body
            full, body = unroll_knobs(K4 // 4, full, body)
            return t.wide_block(npix, nch, K4 // 4, x, g.C, w, K4, inits, outs, full=full, body=body, mode=mode,
                                w16=w16)
        return t.block(mode, npix, nch, K4 // 4, x, g.C, w, K4, inits, outs)
    return blocked_conv(fn, anchor, epi, name, g, order, t, geo=vars(g) | {"K4": K4, "offset": g.offset},
                        direct=direct, col=("int32_t", col_bytes), weights=(wname, K4), init=init,
                        micro=micro, och=och, short=short_output(epi, anchor, pool, init, bounds))


def conv2d_mve(fn, anchor, epi, pool, name, order=None) -> Kernel:
    """The 2 x 2 block kernel with the scalar epilogue (the arm_mve variant, ``conv2d_mve.py``, tries its
    vector-requantization kernel first). ``order``: run in place through a pixel buffer
    (the pixel_buffer mode of its strategy), pixels in that order."""
    g = conv_geometry(anchor)
    require(g.G == 1, "no Helium depthwise / grouped conv kernel (the next variant, arm_dsp, has one)")
    check_flat_operands(epi, anchor.ty.shape, (1, 2))
    wt = anchor.args[1].value.reshape(g.K, g.reduction)
    t = template("conv2d/arm_mve.c.j2").module
    direct = g.is_pointwise           # int8 in place; else int8 im2col padded with the zero point
    wname = pool.ref(anchor.args[1])
    init = fold_offset(epi, anchor, offset_fold(wt, g.offset), pool)   # exact: real inputs or the zero point
    xs = g.C if direct else g.reduction
    return blocked_conv(fn, anchor, epi, name, g, order, t, geo=vars(g) | {"K": g.reduction, "offset": g.offset},
                        direct=direct, col=("int8_t", 0 if direct else 2 * g.reduction), weights=(wname, g.reduction),
                        init=init, micro=lambda x, w, inits, npix, nch, outs:
                        t.block(npix, nch, g.reduction, x, xs, w, g.reduction, inits, outs))


__all__ = ["CONV_BODY", "CONV_CHANNELS", "DIRECT_STEPS", "WIDE_BODY", "WIDE_CHANNELS", "WIDE_STEPS", "block_inits",
           "block_outputs", "blocked_statements", "conv2d_dsp", "conv2d_mve", "conv_geometry", "inplace_buffer", "mac_bounds", "pixel_of",
           "offer_wide_knobs", "short_output", "unroll_knobs", "wide_direct", "wide_unroll"]
