"""16x8 depthwise conv2d (groups = input channels, any channel multiplier) for DSP cores (strategy
``depthwise.arm_dsp_s16``), the counterpart of CMSIS-NN's arm_depthwise_conv_fast_s16: int16 activations
with zero point 0, int8 weights widened at compile time to int16 pairs of taps, SMLAD over pairs of taps
of one channel (codegen_templates/depthwise/arm_dsp_s16.c.j2). The accumulators are int32: the strategy
accepts only layers where 32768 · Σ|w| of every channel fits int32 (``s16_accumulator_reason``), so the
sum equals TFLM's int64 one (reference_integer_ops::DepthwiseConvPerChannel, int16 input); the epilogue
(bias, TFLM's 64-bit requantize, clamp) is the group's own.
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


def pair_weights(wt: np.ndarray) -> np.ndarray:
    """[K][T] int8 -> int32 [K][ceil(T / 2)]: word j = (w[k, 2j], w[k, 2j + 1]) as int16 lanes (low,
    high), the odd last tap paired with 0."""
    k, t = wt.shape
    w = np.zeros((k, t + t % 2), np.int64)
    w[:, :t] = wt
    lo, hi = w[:, 0::2] & 0xFFFF, (w[:, 1::2] & 0xFFFF) << 16
    return (lo | hi).astype(np.uint32).view(np.int32)


@implements("depthwise.arm_dsp_s16")
def depthwise_dsp_s16(fn, ctx) -> Kernel:
    """The 16x8 DSP depthwise kernel (module doc)."""
    anchor, epi, pool, name = ctx.unpack(fn)
    g = ConvGeom.of_call(anchor)
    x = anchor.args[0]
    require(x.ty.dtype == "int16" and g.zp == 0 and g.C == g.G, "not a 16x8 depthwise conv")
    M, T = g.M, g.KH * g.KW
    T2 = (T + 1) // 2
    wt = anchor.args[1].value.reshape(g.K, T)
    ws = pool.ref(pair_weights(wt), key=("dw_s16_pairs", id(anchor)))
    zrow = pool.ref(np.zeros(g.C, np.int16), key=("zero_row16", g.C))
    t = template("depthwise/arm_dsp_s16.c.j2").module
    outer = ("n", "h", "w")
    ob = box(outer, (g.N, g.OH, g.OW))

    def taps(n, h, w):
        tab = tap_pointers(g, h, w, lambda ih, iw: f"p0 + {flat_index(x.ty.shape, [n, ih, iw, '0'])}")
        return t.S_taps(tab + [("", zrow)] * (2 * T2 - T), zrow)

    def outs(n, h, w, ks, accs):
        res = []
        for k, acc in zip(ks, accs):
            idx = [n, h, w, k]
            lines, value = epi.code(idx, acc=acc)
            res.append((lines, value, f"out[{flat_index(anchor.ty.shape, idx)}]"))
        return res

    def pair(n, h, w, q):
        k0, k1 = affine((q, 2)), affine((q, 2), ("1", 1))
        return t.S_pair(k0, T2, f"{ws} + {affine((q, 2 * T2))}", outs(n, h, w, [k0, k1], ["a0", "a1"]))

    def one(n, h, w, k):
        ci = k if M == 1 else f"({k}) / {M}"
        return t.S_one(ci, T2, f"{ws} + {affine((k, T2))}", outs(n, h, w, [k], ["a0"]))

    pairs = g.K // 2 if M == 1 else 0
    stmts = [Statement("S_taps", outer, ob, outer + ("0", "0"), taps)]
    if pairs:
        stmts.append(Statement("S_pair", outer + ("q",), f"{ob} and 0 <= q < {pairs}", outer + ("1", "q"), pair))
    if g.K > 2 * pairs:
        stmts.append(Statement("S_one", outer + ("k",), f"{ob} and {2 * pairs} <= k < {g.K}", outer + ("2", "k"), one))
    macros, loops = ctx.loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [f"const int16_t *tp[{2 * T2}];"], macros,
                  macs=g.N * g.P * g.K * T, headers=list(HEADERS))


__all__ = ["depthwise_dsp_s16", "pair_weights"]
