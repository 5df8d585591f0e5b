"""16x8 conv2d (groups 1) and fully connected for Helium (strategies ``conv2d.arm_mve_s16``,
``matmul.arm_mve_s16``): int16 activations, int8 weights widened by the load, VMLADAVA.S16 over 8 lanes
(codegen_templates/conv2d/arm_mve_s16.c.j2), the counterpart of CMSIS-NN's arm_convolve_s16 /
arm_fully_connected_s16 on MVE. The accumulators are int32: the strategy accepts only layers where
32768 · Σ|w| of every output channel fits int32 (``strategy.conv.s16_accumulator_reason``), so the sum
equals TFLM's int64 one; the epilogue (the bias of the accumulator's dtype, TFLM's requantize, clamp) is
the group's own.

Pointwise convs and fully connected layers read the input in place (any C: the tail of the reduction
is a predicated load); every other conv goes through an int16 im2col column per pixel in the arena
scratch (0 at padded taps). Output blocks of 2 pixels (rows) x 4 channels over
``blocks.blocked_statements``.
"""
from __future__ import annotations

import numpy as np

from ...codegen.templates import template
from ...ir import Constant
from ...ops.conv_geom import ConvGeom
from ..kernel import Kernel, affine
from ..matmul_arm import row_outputs, transposed_weights
from ..registry import implements
from ..simd import HEADERS, check_flat_operands, require
from .blocks import ConvBlocks, blocked_conv, blocked_statements

TEMPLATE = "conv2d/arm_mve_s16.c.j2"
CHANNELS = 4          # output channels per block (CMSIS-NN's MVE s16 kernels compute 4 rows at a time)


@implements("conv2d.arm_mve_s16")
def conv2d_mve_s16(fn, ctx) -> Kernel:
    """The 16x8 Helium conv with groups 1 (module doc)."""
    anchor, epi, pool, _ = ctx.unpack(fn)
    g = ConvGeom.of_call(anchor)
    require(anchor.args[0].ty.dtype == "int16" and g.zp == 0 and g.G == 1, "not a 16x8 conv with groups 1")
    check_flat_operands(epi, anchor.ty.shape, (1, 2))
    R = g.reduction
    w2d = np.ascontiguousarray(anchor.args[1].value.reshape(g.K, R))
    wname = pool.ref(w2d, key=("mve_s16_w", id(anchor)))
    t = template(TEMPLATE).module
    direct = g.is_pointwise
    xs = g.C if direct else R

    def micro(x, w, inits, npix, nch, outs):
        return t.block(npix, nch, R, x, xs, w, R, outs)
    return blocked_conv(fn, ctx, anchor, epi, g, ConvBlocks(t, vars(g) | {"K": R}, direct,
                                                        ("int16_t", 0 if direct else 4 * R), (wname, R),
                                                        lambda o: "0", micro, CHANNELS))


@implements("matmul.arm_mve_s16")
def matmul_mve_s16(fn, ctx) -> Kernel:
    """The 16x8 Helium fully connected kernel (module doc): rows of the int16 input in place, 2 rows x 4
    columns, the K % 8 tail predicated."""
    anchor, epi, pool, name = ctx.unpack(fn)
    a, b = anchor.args
    require(a.ty.dtype == "int16" and isinstance(b, Constant) and b.ty.ndim == 2
            and not anchor.attrs.get("input_zero_point", 0), "not a 16x8 fully connected layer")
    out_shape = anchor.ty.shape
    K, N = b.ty.shape
    if len(out_shape) >= 2:
        check_flat_operands(epi, out_shape, tuple(range(len(out_shape) - 1)))
    R = int(np.prod(out_shape[:-1]))
    wname = transposed_weights(pool, b)
    t = template(TEMPLATE).module

    def block(n, r, o, npix, nch):
        x = f"p0 + {affine((r, K))}" if r != "0" else "p0"
        w = f"{wname} + {affine((o, K))}" if o != "0" else wname
        return t.block(npix, nch, K, x, K, w, K, row_outputs(epi, out_shape, r, o, npix, nch))

    macros, loops = ctx.loops_to_c(blocked_statements(1, R, N, None, block, och=CHANNELS))
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [], macros, macs=R * N * K,
                  headers=list(HEADERS))


__all__ = ["conv2d_mve_s16", "matmul_mve_s16"]
