"""isl access models of the in-place conv kernels (``lower/conv/inplace.py`` generates its loops from
the same domains and schedules; ``memory/inplace.py`` proves the in-place layout with them, through
``poly.deps``). Arrays: X the input, Y the output written over it, P the padded plane of one channel
(``dw_plane``), T the pixel buffer (``pixel_buffer``).
"""
from __future__ import annotations

from ..ops.conv_geom import ConvGeom
from .deps import Access
from .isl_helpers import box


def dw_plane_scratch(g: ConvGeom) -> int:
    """Scratch bytes of ``dw_plane``: one padded int8 plane."""
    ph, pw = g.plane
    return ph * pw


def _interior(g: ConvGeom) -> str:
    """Plane cells that hold input pixels (the rest is border)."""
    ph, pw = g.plane
    return (f"{g.pt} <= a < {min(ph, g.pt + g.H)} and {g.pl} <= b < {min(pw, g.pl + g.W)}")


def dw_plane_model(g: ConvGeom) -> list[Access]:
    """S_fill (border, once) -> per channel k: S_copy (plane) then S_dw (outputs of channel k)."""
    ph, pw = g.plane
    copy_dom = f"0 <= k < {g.C} and 0 <= h < {min(g.H, ph - g.pt)} and 0 <= w < {min(g.W, pw - g.pl)}"
    out_dom = box(("k", "oh", "ow"), (g.K, g.OH, g.OW))
    window = (f"P[a, b] : exists r, s: a = {g.sh}oh + {g.dh}r and b = {g.sw}ow + {g.dw}s "
              f"and 0 <= r < {g.KH} and 0 <= s < {g.KW}")
    return [
        Access("S_fill", ("a", "b"), f"0 <= a < {ph} and 0 <= b < {pw} and not ({_interior(g)})",
               ("0", "0", "0", "a", "b"), writes=("P[a, b]",)),
        Access("S_copy", ("k", "h", "w"), copy_dom, ("1", "k", "0", "h", "w"),
               reads=("X[h, w, k]",), writes=(f"P[h + {g.pt}, w + {g.pl}]",)),
        Access("S_dw", ("k", "oh", "ow"), out_dom, ("1", "k", "1", "oh", "ow"),
               reads=(window,), writes=("Y[oh, ow, k]",)),
    ]


def pixel_order(order: str, v: str) -> str:
    """Schedule coordinate of pixel coordinate ``v`` for pixels taken in ``order``
    ('ascending' or 'descending')."""
    return v if order == "ascending" else f"-{v}"


def pixel_buffer_model(g: ConvGeom, order: str, block: int = 1) -> list[Access]:
    """S_px[oh, ow, k] (one output channel into T) then S_store[oh, ow, k] (T over Y).

    ``block`` = 1: one pixel at a time (``lower/conv/inplace.py``). ``block`` = 2: pixels flattened
    (p = oh * OW + ow) and taken in pairs, the odd one last, as the SIMD variants block them
    (compiler/lower/conv/blocks.py): both pixels' windows are read before either is stored."""
    out = box(("oh", "ow", "k"), (g.OH, g.OW, g.K))
    x = (f"X[ih, iw, ci] : exists r, s, c, q, m: k = {g.M}q + m and 0 <= m < {g.M} and "
         f"ci = {g.Cg}q + c and 0 <= c < {g.Cg} and ih = {g.sh}oh + {g.dh}r - {g.pt} and "
         f"iw = {g.sw}ow + {g.dw}s - {g.pl} and {g.taps_in_image('oh', 'ow')}")
    if block == 1:
        t = (pixel_order(order, "oh"), pixel_order(order, "ow"))
        tail = ("0", "k")
        return [Access("S_px", ("oh", "ow", "k"), out, t + tail, reads=(x,), writes=("T[oh, ow, k]",)),
                Access("S_store", ("oh", "ow", "k"), out, t + ("1", "k"), reads=("T[oh, ow, k]",),
                       writes=("Y[oh, ow, k]",))]
    P = g.OH * g.OW
    p = f"({g.OW}oh + ow)"
    pair = f"floor({p}/2)" if order == "ascending" else f"floor(({P - 1} - {p})/2)"
    return [Access("S_px", ("oh", "ow", "k"), out, (pair, "0", "oh", "ow", "k"), reads=(x,),
                   writes=("T[oh, ow, k]",)),
            Access("S_store", ("oh", "ow", "k"), out, (pair, "1", "oh", "ow", "k"), reads=("T[oh, ow, k]",),
                   writes=("Y[oh, ow, k]",))]


def conv_offset_models(g: ConvGeom, form: str = "any") -> list[list[Access]]:
    """A conv's normal kernel, pixels ascending, by how its blocks order their reads of X and writes of Y:

    - ``pixel`` (the portable conv): per pixel, each output channel written (S_w) before the next one
      reads the window (S_r): modelled as every write of the pixel before every read of it;
    - ``im2col`` (the SIMD kernels with a column: every input of a pixel pair is read into the column
      before any output of the pair is written): reads of a pair, then its writes;
    - ``direct`` (the SIMD pointwise kernels reading X in the MAC loop): writes of a pair before its reads;
    - ``any``: writes of a flattened block of 4 pixels before its reads (covers the three, and blocks of
      four pixels).
    """
    out = box(("oh", "ow", "k"), (g.OH, g.OW, g.K))
    x = (f"X[ih, iw, ci] : exists r, s, c, q, m: k = {g.M}q + m and 0 <= m < {g.M} and "
         f"ci = {g.Cg}q + c and 0 <= c < {g.Cg} and ih = {g.sh}oh + {g.dh}r - {g.pt} and "
         f"iw = {g.sw}ow + {g.dw}s - {g.pl} and {g.taps_in_image('oh', 'ow')}")
    p = f"({g.OW}oh + ow)"
    blk, w, r = {"pixel": (p, "0", "1"), "im2col": (f"floor({p}/2)", "1", "0"),
                 "direct": (f"floor({p}/2)", "0", "1"), "any": (f"floor({p}/4)", "0", "1")}[form]
    return [[Access("S_w", ("oh", "ow", "k"), out, (blk, w, "oh", "ow", "k"), writes=("Y[oh, ow, k]",)),
             Access("S_r", ("oh", "ow", "k"), out, (blk, r, "oh", "ow", "k"), reads=(x,))]]


__all__ = ["conv_offset_models", "dw_plane_model", "dw_plane_scratch", "pixel_buffer_model", "pixel_order"]
