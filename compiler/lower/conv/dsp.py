"""int8 conv2d with groups 1 for cores with the DSP extension (arm_dsp, strategy ``conv2d.arm_dsp``):
SMLAD micro-kernels over the output blocks of ``blocks`` (codegen_templates/conv2d/arm_dsp.c.j2).
1x1 stride-1 unpadded convs with C % 4 == 0 read the int8 input in place (the input offset folded
into the accumulators' start values); every other conv goes through an int16 im2col column in the
arena scratch (offset applied, 0 at padded taps: exact), or for C % 4 != 0 a row-wise gather
(``im2col_rows``). The wide block (2 pixels x 3 channels) offers the tuning knobs (lower.group_knobs).
"""
from __future__ import annotations


from ...codegen.templates import template
from ...ops.conv_geom import ConvGeom
from .im2col_rows import gather_rows, row_form, row_weights
from ..kernel import Kernel, affine
from .. import group_knobs
from ...options import KNOBS
from ..simd import (check_flat_operands, fold_offset, offset_fold, pad_k, swap_middle_pairs, widen_weights)
from .blocks import ConvBlocks, blocked_conv, conv_geometry, mac_bounds, short_output
from ..registry import implements


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


def unroll_knobs(ctx, steps: int, full: int, body: int) -> tuple[int, int]:
    """(full, body) of a main block under the group's ``unroll`` / ``body`` tuning knobs
    (``lower.group_knobs``): ``unroll`` replaces ``full`` (0 keeps it), ``body`` the loop body; the
    body is then the largest divisor of ``steps`` not above it (a tail block, full 0, keeps its own)."""
    if not full:
        return full, body
    full = ctx.knob("unroll", 0) or full
    body = ctx.knob("body", 0) or body
    return full, max(d for d in range(1, body + 1) if steps % d == 0)     # the loop covers every step


UNROLLS = tuple(u for u in KNOBS["unroll"].values if u)


def offer_wide_knobs(ctx, steps: int, full: int) -> None:
    """Offer the wide block's knobs for a reduction of ``steps`` groups of 4 taps fully unrolled up to
    ``full``: int16 weights, channels per block, and the unroll limits that change the code (below
    the default's full unroll: a loop)."""
    ctx.offer("weights", group_knobs.WEIGHTS)
    ctx.offer("channels", (CONV_CHANNELS, *(c for c in group_knobs.CHANNELS if c != CONV_CHANNELS)))
    default = min(full, steps)
    ctx.offer("unroll", (0, *(u for u in UNROLLS if u < steps and u != default)))


def wide_direct(steps: int) -> bool:
    """Whether a direct-mode reduction of ``steps`` groups of 4 taps takes the wide micro-kernel."""
    return steps <= WIDE_STEPS or steps % WIDE_BODY == 0


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


@implements("conv2d.arm_dsp")
def conv2d_dsp(fn, ctx) -> Kernel:
    """The arm_dsp conv with groups 1 (strategy ``conv2d.arm_dsp``); in place through a pixel buffer in
    the pixel_buffer mode (``ctx.order``)."""
    anchor, epi, pool, _ = ctx.unpack(fn)
    g = conv_geometry(anchor)
    check_flat_operands(epi, anchor.ty.shape, (1, 2))
    wt = anchor.args[1].value.reshape(g.K, g.reduction)
    t = template("conv2d/arm_dsp.c.j2").module
    direct = g.is_pointwise and g.C % 4 == 0

    def ref(stored, int8_ref):        # the weights as stored, or pre-widened to int16 (tuning knob)
        if wide_direct(stored.shape[1] // 4) and ctx.widened:
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
        offer_wide_knobs(ctx, K4 // 4, DIRECT_STEPS if direct else WIDE_STEPS)
    och = ctx.knob("channels", CONV_CHANNELS) if wide else 2
    w16 = wide and ctx.widened

    def micro(x, w, inits, npix, nch, outs):
        if wide:
            full, body = wide_unroll(K4 // 4, npix, nch, g.N * g.P, g.K, och)
            if direct and full:
                full, body = DIRECT_STEPS, DIRECT_STEPS if (K4 // 4) % DIRECT_STEPS == 0 else body
            full, body = unroll_knobs(ctx, K4 // 4, full, body)
            return t.wide_block(npix, nch, K4 // 4, x, g.C, w, K4, inits, outs, full=full, body=body, mode=mode,
                                w16=w16)
        return t.block(mode, npix, nch, K4 // 4, x, g.C, w, K4, inits, outs)
    return blocked_conv(fn, ctx, anchor, epi, g, ConvBlocks(t, vars(g) | {"K4": K4, "offset": g.offset}, direct,
                                                        ("int32_t", col_bytes), (wname, K4), init, micro, och,
                                                        short_output(epi, anchor, pool, init, bounds)))


__all__ = ["CONV_BODY", "CONV_CHANNELS", "DIRECT_STEPS", "WIDE_BODY", "WIDE_CHANNELS", "WIDE_STEPS", "conv2d_dsp",
           "offer_wide_knobs", "unroll_knobs", "wide_direct", "wide_unroll"]
