"""Where the sparse conv kernel (lower/conv/sparse.py) blocks its output pixels: shared by the kernel
and the cost model (cost/analytical.sparse_decision), so both count the same blocks."""
from __future__ import annotations

from .conv_geom import ConvGeom

BLOCK = 4        # output pixels per pass over a channel's list (each weight and offset loaded once)


def column_segments(g: ConvGeom, block: int = BLOCK) -> list[tuple[int, int, int, bool]]:
    """The output columns as (start, stop, pixels per step, inside), in ascending order: the columns
    whose windows reach into the left or right padding one at a time (inside False: their taps are
    checked), the others (inside True) in blocks of ``block``, then their remainder one at a time."""
    inside = [ow for ow in range(g.OW) if g.pl <= ow * g.sw and ow * g.sw - g.pl + (g.KW - 1) * g.dw < g.W]
    if not inside:
        return [(0, g.OW, 1, False)]
    lo, hi = inside[0], inside[-1] + 1
    mid = lo + (hi - lo) // block * block
    segs = [(0, lo, 1, False), (lo, mid, block, True), (mid, hi, 1, True), (hi, g.OW, 1, False)]
    return [s for s in segs if s[1] > s[0]]


def pixel_kinds(g: ConvGeom) -> tuple[int, int, int]:
    """Output pixels per image the sparse kernel computes (in a block, one at a time with a flat
    list, one at a time checking each tap), from ``column_segments``."""
    blocked = single = border = 0
    for start, stop, nb, inside in column_segments(g):
        n = (stop - start) * g.OH
        if not inside:
            border += n
        elif nb > 1:
            blocked += n
        else:
            single += n
    return blocked, single, border


__all__ = ["BLOCK", "column_segments", "pixel_kinds"]
