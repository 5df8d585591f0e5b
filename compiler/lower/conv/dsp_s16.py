"""16x8 conv2d (groups 1) and fully connected for cores with the DSP extension (strategies
``conv2d.arm_dsp_s16``, ``matmul.arm_dsp_s16``): int16 activations, int8 weights, SMLAD on int16 lane
pairs (codegen_templates/conv2d/arm_dsp_s16.c.j2), the counterpart of CMSIS-NN's arm_convolve_s16 /
arm_fully_connected_s16. The accumulators are int32: the strategy accepts only layers where 32768 · Σ|w|
of every output channel fits int32 (``s16_accumulator_reason``), so the sum equals TFLM's int64 one; the
epilogue (the bias of the accumulator's dtype, TFLM's requantize, clamp) is the group's own.

Pointwise convs with C % 4 == 0 and fully connected layers read the input in place; every other conv
goes through an int16 im2col column pair in the arena scratch (0 at padded taps). Output blocks of 2
pixels (rows) x 3 (conv) or 4 (fully connected) channels over ``blocks.blocked_statements``.
"""
from __future__ import annotations

import numpy as np

from ...codegen.templates import template
from ...ir import Constant
from ...ops.conv_geom import ConvGeom
from ..kernel import Kernel, affine
from ..matmul_arm import row_outputs
from ..registry import implements
from ..simd import HEADERS, check_flat_operands, pad_k, require, swap_middle_pairs
from .blocks import ConvBlocks, blocked_conv, blocked_statements
from .dsp import CONV_CHANNELS, WIDE_CHANNELS, WIDE_STEPS, offer_wide_knobs, unroll_knobs

TEMPLATE = "conv2d/arm_dsp_s16.c.j2"


def _stored(w2d: np.ndarray, widened: bool) -> np.ndarray:
    """[O][K] int8 weights as the kernel reads them: int16 natural order (``widened``), or int8 with the
    middle pair of every whole group of 4 taps swapped (the K % 4 tail as it is)."""
    if widened:
        return np.ascontiguousarray(w2d.astype(np.int16))
    k4 = w2d.shape[1] // 4 * 4
    head = swap_middle_pairs(np.ascontiguousarray(w2d[:, :k4])) if k4 else w2d[:, :0]
    return np.ascontiguousarray(np.concatenate([head, w2d[:, k4:]], axis=1))


def _unroll(ctx, steps: int, npix: int, nch: int, main: tuple[int, int, int]) -> tuple[int, int]:
    """(full, body): main blocks (``main`` = (pixels, channels, channels per block)) unroll fully up to
    WIDE_STEPS steps, else a loop of the largest divisor of steps up to 8; tail blocks loop over 1-2."""
    pixels, channels, och = main
    if (npix == 2 or pixels < 2) and (nch == och or channels < och):
        return unroll_knobs(ctx, steps, WIDE_STEPS, 8)
    return 0, 2 if steps % 2 == 0 else 1


@implements("conv2d.arm_dsp_s16")
def conv2d_dsp_s16(fn, ctx) -> Kernel:
    """The 16x8 SMLAD conv with groups 1 (module doc)."""
    anchor, epi, pool, _ = ctx.unpack(fn)
    g = ConvGeom.of_call(anchor)
    require(anchor.args[0].ty.dtype == "int16" and g.zp == 0 and g.G == 1, "not a 16x8 conv with groups 1")
    check_flat_operands(epi, anchor.ty.shape, (1, 2))
    wt = anchor.args[1].value.reshape(g.K, g.reduction)
    direct = g.is_pointwise and g.C % 4 == 0
    stored = wt if direct else pad_k(wt, 4)
    K4 = stored.shape[1]
    offer_wide_knobs(ctx, K4 // 4, WIDE_STEPS)
    och, w16 = ctx.knob("channels", CONV_CHANNELS), ctx.widened
    wname = pool.ref(_stored(stored, w16), key=("dsp_s16_w", id(anchor), w16))
    t = template(TEMPLATE).module
    mode = "direct" if direct else "col"

    def micro(x, w, inits, npix, nch, outs):
        full, body = _unroll(ctx, K4 // 4, npix, nch, (g.N * g.P, g.K, och))
        return t.block(npix, nch, K4 // 4, x, g.C, w, K4, outs, mode, full or 0, body, None, w16)
    return blocked_conv(fn, ctx, anchor, epi, g, ConvBlocks(t, vars(g) | {"K4": K4}, direct,
                                                        ("int32_t", 0 if direct else 4 * K4), (wname, K4),
                                                        lambda o: "0", micro, och))


@implements("matmul.arm_dsp_s16")
def matmul_dsp_s16(fn, ctx) -> Kernel:
    """The 16x8 SMLAD fully connected kernel (module doc): rows of the int16 input in place, 2 rows x
    WIDE_CHANNELS columns, the K % 4 tail scalar."""
    anchor, epi, pool, name = ctx.unpack(fn)
    a, b = anchor.args
    require(a.ty.dtype == "int16" and isinstance(b, Constant) and b.ty.ndim == 2
            and not anchor.attrs.get("input_zero_point", 0), "not a 16x8 fully connected layer")
    out_shape = anchor.ty.shape
    K, N = b.ty.shape
    if len(out_shape) >= 2:
        check_flat_operands(epi, out_shape, tuple(range(len(out_shape) - 1)))
    R = int(np.prod(out_shape[:-1]))
    if K % 4 == 0:
        ctx.offer("weights", ("int8", "int16"))
    w16 = K % 4 == 0 and ctx.widened
    wname = pool.ref(_stored(np.ascontiguousarray(b.value.T), w16), key=("fc_s16_w", id(b), w16))
    t = template(TEMPLATE).module

    def block(n, r, o, npix, nch):
        x = f"p0 + {affine((r, K))}" if r != "0" else "p0"
        w = f"{wname} + {affine((o, K))}" if o != "0" else wname
        full, body = _unroll(ctx, K // 4, npix, nch, (R, N, WIDE_CHANNELS))
        return t.block(npix, nch, K // 4, x, K, w, K, row_outputs(epi, out_shape, r, o, npix, nch), "direct",
                       full, body, K % 4 or None, w16)

    macros, loops = ctx.loops_to_c(blocked_statements(1, R, N, None, block, och=WIDE_CHANNELS))
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [], macros, macs=R * N * K, headers=list(HEADERS))


__all__ = ["conv2d_dsp_s16", "matmul_dsp_s16"]
