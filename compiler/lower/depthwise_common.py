"""Helpers shared by the DSP depthwise kernels (``depthwise_arm``) and the DSP stages of a poly-fused
chain (``fused_chain``): the per-pixel tap table and the SXTB16 lane order of depthwise weights.

The SIMD forms that use the tap table (the arm_dsp and arm_mve depthwise kernels, the Helium in-place
dw_plane kernel, the SIMD stages of a poly-fused chain) unroll the window: one pointer and one
multiply-accumulate block per tap, so their C grows with KH x KW (about 11 lines a tap per channel
quad on arm_dsp). Past ``MAX_UNROLLED_TAPS`` taps they decline and the portable kernel loops over the
window: an int8 average pool that rescales becomes a depthwise conv of ones (legalize_qdq), and a
global pool over a 30 x 60 map gave a 1800-tap kernel of 21,000 lines that gcc -O1 did not finish
compiling in half an hour. The largest window of the reference models is 23 taps.

Tap table: for each tap (r, s) of output pixel (h, w), the C condition under which it reads a real
input pixel and a pointer to that pixel's channel vector; a padded tap points at a constant row of
the input zero point instead, which adds 0 once the input offset is applied (exact, QUANT.md).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..ops.conv_geom import ConvGeom
from .kernel import affine

MAX_UNROLLED_TAPS = 128           # an 11 x 11 window; more: the portable kernel (module doc)


def unrollable(g: ConvGeom) -> bool:
    """Whether the window of ``g`` is small enough for the SIMD forms that unroll its taps."""
    return g.KH * g.KW <= MAX_UNROLLED_TAPS


def quad_weights(w: np.ndarray) -> np.ndarray:
    """[O][T] int8 (T taps) -> int32 [O//4][T][2]: word 0 = (w[4q], w[4q+2]), word 1 = (w[4q+1], w[4q+3])
    as int16 halfwords (low, high), the lane order of SXTB16 on four consecutive channels. Channels
    past the last whole quad are left out."""
    q = w[: w.shape[0] // 4 * 4].astype(np.int64).reshape(-1, 4, w.shape[1])
    lo = q & 0xFFFF
    words = np.stack([lo[:, 0] | (lo[:, 2] << 16), lo[:, 1] | (lo[:, 3] << 16)], axis=-1)
    return words.astype(np.uint32).view(np.int32)


def tap_pointers(g: ConvGeom, h: str, w: str, ptr: Callable[[str, str], str]) -> list[tuple[str, str]]:
    """Per tap (r, s), row-major: (C condition that output pixel (h, w) reads a real input pixel there,
    '' when every output pixel's does; ``ptr(ih, iw)``, the C pointer to input pixel (ih, iw))."""
    taps = []
    for r in range(g.KH):
        for s in range(g.KW):
            conds = []
            for o, stride, lo, out_size, size in ((h, g.sh, r * g.dh - g.pt, g.OH, g.H),
                                                  (w, g.sw, s * g.dw - g.pl, g.OW, g.W)):
                e = affine((o, stride), (str(lo), 1))
                if lo < 0:                                  # the first output pixels read padding
                    conds.append(f"{e} >= 0")
                if stride * (out_size - 1) + lo >= size:    # the last ones do
                    conds.append(f"{e} < {size}")
            ih, iw = affine((h, g.sh), (str(r * g.dh - g.pt), 1)), affine((w, g.sw), (str(s * g.dw - g.pl), 1))
            taps.append((" && ".join(conds), ptr(ih, iw)))
    return taps


__all__ = ["MAX_UNROLLED_TAPS", "quad_weights", "tap_pointers", "unrollable"]
