"""16x8 depthwise conv2d (groups = input channels, any channel multiplier M) for Helium (strategy
``depthwise.arm_mve_s16``), the counterpart of CMSIS-NN's arm_depthwise_conv_s16 on MVE: int16
activations with zero point 0, int8 weights, four input channels per int32x4 vector, VMUL.S32 + VADD.S32 per tap
(codegen_templates/depthwise/arm_mve_s16.c.j2). Per multiplier index m the weights of output channels
c·M + m are stored [M][T][C] at compile time, so a quad of input channels c..c+3 reads four contiguous
inputs and four contiguous weights; lane j goes to output channel (c + j)·M + m. The accumulators are int32: the strategy accepts only
layers where 32768 · Σ|w| of every channel fits int32 (``s16_accumulator_reason``), so the sum equals
TFLM's int64 one (reference_integer_ops::DepthwiseConvPerChannel, int16 input); the epilogue (bias,
TFLM's 64-bit requantize, clamp) is the group's own.
"""
from __future__ import annotations

import numpy as np

from ...codegen.templates import template
from ...ops.conv_geom import ConvGeom
from ...poly import Statement
from ...poly.isl_helpers import box
from ..kernel import Kernel, affine, flat_index
from ..registry import implements
from ..simd import HEADERS, require
from .depthwise_common import tap_pointers


@implements("depthwise.arm_mve_s16")
def depthwise_mve_s16(fn, ctx) -> Kernel:
    """The 16x8 Helium depthwise kernel (module doc): per output pixel the tap table, then per multiplier
    index the input-channel quads and the predicated last C % 4 channels."""
    anchor, epi, pool, name = ctx.unpack(fn)
    g = ConvGeom.of_call(anchor)
    x = anchor.args[0]
    require(x.ty.dtype == "int16" and g.zp == 0 and g.C == g.G, "not a 16x8 depthwise conv")
    T, M = g.KH * g.KW, g.M
    wt = np.ascontiguousarray(anchor.args[1].value.reshape(g.C, M, T).transpose(1, 2, 0))     # [M][T][C]
    ws = pool.ref(wt, key=("dw_s16_taps", id(anchor)))
    zrow = pool.ref(np.zeros(g.C, np.int16), key=("zero_row16", g.C))
    t = template("depthwise/arm_mve_s16.c.j2").module
    taps_t = template("depthwise/arm_dsp_s16.c.j2").module
    outer = ("n", "h", "w")
    ob = box(outer, (g.N, g.OH, g.OW))

    def taps(n, h, w):
        return taps_t.S_taps(tap_pointers(g, h, w, lambda ih, iw: f"p0 + {flat_index(x.ty.shape, [n, ih, iw, '0'])}"),
                             zrow)

    def quad(n, h, w, m, c, nch):
        outs = []
        for j in range(nch):
            idx = [n, h, w, affine((c, M), (str(j * M), 1), (m, 1))]
            lines, value = epi.code(idx, acc=f"a{j}")
            outs.append((f"a{j}", lines, value, f"out[{flat_index(anchor.ty.shape, idx)}]"))
        return t.S_quad(c, T, g.C, f"{ws} + {affine((m, T * g.C), (c, 1))}" if (m, c) != ("0", "0") else ws,
                        nch, outs)

    quads, rest = g.C // 4, g.C % 4
    mq = outer + ("m",)
    mb = f"{ob} and 0 <= m < {M}"
    stmts = [Statement("S_taps", outer, ob, outer + ("0", "0", "0"), taps)]
    if quads:
        stmts.append(Statement("S_quad", mq + ("q",), f"{mb} and 0 <= q < {quads}", outer + ("1", "m", "q"),
                               lambda n, h, w, m, q: quad(n, h, w, m, affine((q, 4)), 4)))
    if rest:
        stmts.append(Statement("S_rest", mq, mb, outer + ("2", "m", "0"),
                               lambda n, h, w, m: quad(n, h, w, m, str(4 * quads), rest)))
    macros, loops = ctx.loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [f"const int16_t *tp[{T}];"], macros,
                  macs=g.N * g.P * g.K * T, headers=list(HEADERS))


__all__ = ["depthwise_mve_s16"]
