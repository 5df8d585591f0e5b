"""The row-wise int16 im2col of an arm_dsp conv whose channel count is not a multiple of 4 (the first
conv of an image model, C = 3): with dilation 1 the KW taps of one kernel row are KW * C contiguous
input bytes, so a window row is read a word at a time (tf_ld4 + two SXTAB16, no byte loop) when it
lies inside the image, and term by term (0 at a padded tap) otherwise.

The reduction is reordered to match (``row_order``): per kernel row its first 4 * (KW*C // 4) terms
in groups of 4, then the KH * (KW*C % 4) leftover terms of all rows, zero-padded to a whole group.
Each group of 4 terms (k0..k3) is stored as the int16 lane pairs (k0,k2),(k1,k3), the order SXTB16
widens the int8 OHWI weights to, so the weights are only permuted (``row_weights``), never swapped.
Used by conv/dsp.py (unfused im2col conv) and conv/chain.py (a chain's DSP conv stage).
"""
from __future__ import annotations

import numpy as np

from ...codegen.templates import template
from ...ops.conv_geom import ConvGeom
from .depthwise_common import tap_pointers


MAX_ROW_WORDS = 128     # the gather is unrolled a word at a time; larger windows: the looped int16 im2col


def row_form(g: ConvGeom) -> bool:
    """Whether the row-wise gather applies: C % 4 != 0, dilation 1 along W, a row of at least one word,
    and at most MAX_ROW_WORDS words in the window (the gather unrolls every word: about 20 lines of C
    each; the reference models need at most 42)."""
    return g.C % 4 != 0 and g.dw == 1 and g.KW * g.C >= 4 and g.KH * -(-(g.KW * g.C) // 4) <= MAX_ROW_WORDS


def row_order(g: ConvGeom) -> np.ndarray:
    """[K4] int64: the OHWI reduction index ((r * KW + s) * C + c) at each column term, -1 for a pad."""
    L = g.KW * g.C
    L4 = L // 4 * 4
    order = [r * L + e for r in range(g.KH) for e in range(L4)]
    order += [r * L + e for r in range(g.KH) for e in range(L4, L)]
    order += [-1] * (-len(order) % 4)
    return np.array(order, np.int64)


def row_weights(w2d: np.ndarray, g: ConvGeom) -> np.ndarray:
    """[K][K4] int8 weights in row_order (0 at the pad terms), from the [K][KH*KW*C] OHWI rows."""
    order = row_order(g)
    w = np.pad(w2d, ((0, 0), (0, 1)))[:, order]        # index -1 reads the appended zero column
    return np.ascontiguousarray(w.astype(np.int8))


def gather_rows(g: ConvGeom, h: str, w: str, ptr, offset: int, cp: str) -> str:
    """C statements writing the int16 column of output pixel (h, w) through ``cp`` (int32_t *, groups
    4 words apart, as the interleaved pixel pair of the arm_dsp col mode): ``ptr(ih, iw)`` is the C
    pointer to input pixel (ih, iw), ``offset`` the input offset (-zero point) added to every real tap."""
    taps = tap_pointers(g, h, w, ptr)
    rows = []
    for r in range(g.KH):
        row = taps[r * g.KW:(r + 1) * g.KW]
        conds = list(dict.fromkeys(part for c, _ in row if c for part in c.split(" && ")))
        rows.append((" && ".join(conds), row[0][1], row))
    L = g.KW * g.C
    return template("conv2d/arm_dsp_rows.c.j2").module.gather_rows(
        rows, g.C, L, L // 4, L % 4, len(row_order(g)) // 4, offset, cp)


__all__ = ["gather_rows", "row_form", "row_order", "row_weights"]
