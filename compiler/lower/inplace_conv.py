"""In-place int8 convolutions: the output is written over the input tensor, which dies at this kernel
(TinyEngine's in-place depthwise, generalised). Two kernels, each with the isl model its proof uses
(``tinyfuse.memory.inplace``); the C comes from the same domains and schedules:

``dw_plane``  depthwise (multiplier 1, any stride/padding/dilation), channel by channel: copy the
              channel's input plane into scratch (border = input zero point, filled once), then
              compute that channel's outputs from the plane over ``X[:, :, k]``. Scratch: one padded
              plane.
``pixel_buffer``  any conv: per output pixel all K channels into a K-byte scratch, then one store of
              the pixel. Legal when no later pixel reads the bytes it lands on: shrinking convs
              (1x1 projections, stride-2 depthwise) in ascending pixel order, growing ones (1x1
              expansions) in descending order, both starting at the input's offset.

Preconditions (``ConvGeom.of`` returns None otherwise): qnn.conv2d, NHWC/OHWI, batch 1, int8 input
and output.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..codegen.templates import template
from ..ir import Constant, Function
from ..poly import Statement, loops_to_c
from ..poly.deps import Access
from ..poly.isl_helpers import box
from .kernel import Epilogue, Kernel, affine, split_group


@dataclass(frozen=True)
class ConvGeom:
    """Sizes of an NHWC batch-1 conv: input H x W x C, output OH x OW x K, kernel KH x KW, groups G
    (M output channels and Cg input channels per group), strides, dilations, padding, input zp."""

    H: int
    W: int
    C: int
    OH: int
    OW: int
    K: int
    KH: int
    KW: int
    G: int
    M: int
    Cg: int
    sh: int
    sw: int
    dh: int
    dw: int
    pt: int
    pl: int
    pb: int
    pr: int
    zp: int

    @staticmethod
    def of(fn: Function):
        """(anchor, epilogue ops, geometry) of an int8 NHWC batch-1 conv group, else None."""
        try:
            anchor, epi = split_group(fn)
        except AssertionError:
            return None
        if anchor is None or anchor.op != "qnn.conv2d" or fn.body.ty.dtype != "int8":
            return None
        a = anchor.attrs
        x, w = anchor.args
        if a["data_layout"] != "NHWC" or a["kernel_layout"] != "OHWI" or x.ty.dtype != "int8" \
                or not isinstance(w, Constant) or x.ty.shape[0] != 1:
            return None
        _, H, W, C = x.ty.shape
        K, KH, KW, Cg = w.ty.shape
        _, OH, OW, _ = anchor.ty.shape
        G = a["groups"]
        (sh, sw), (dh, dw), (pt, pl, pb, pr) = a["strides"], a["dilation"], a["padding"]
        g = ConvGeom(H, W, C, OH, OW, K, KH, KW, G, K // G, Cg, sh, sw, dh, dw, pt, pl, pb, pr,
                     int(a.get("input_zero_point", 0)))
        return anchor, epi, g

    @property
    def depthwise(self) -> bool:
        return self.G == self.C and self.M == 1 and self.Cg == 1

    @property
    def pointwise(self) -> bool:
        return self.KH == self.KW == 1 and not (self.pt or self.pl or self.pb or self.pr)

    @property
    def in_bytes(self) -> int:
        return self.H * self.W * self.C

    @property
    def out_bytes(self) -> int:
        return self.OH * self.OW * self.K

    @property
    def macs(self) -> int:
        return self.OH * self.OW * self.K * self.KH * self.KW * self.Cg

    # the padded plane of dw_plane: every row/column some window reaches
    @property
    def plane(self) -> tuple[int, int]:
        ph = max((self.OH - 1) * self.sh + (self.KH - 1) * self.dh + 1, 1)
        pw = max((self.OW - 1) * self.sw + (self.KW - 1) * self.dw + 1, 1)
        return ph, pw

    def taps_in_image(self, h: str, w: str) -> str:
        """isl constraints: the tap (r, s) of output (h, w) reads a real input pixel (padding cut)."""
        return (f"0 <= r < {self.KH} and 0 <= s < {self.KW} and "
                f"0 <= {self.sh}{h} + {self.dh}r - {self.pt} < {self.H} and "
                f"0 <= {self.sw}{w} + {self.dw}s - {self.pl} < {self.W}")


# ---------------------------------------------------------------------------------------------------
# dw_plane

def dw_plane_scratch(g: ConvGeom) -> int:
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


def lower_dw_plane(fn: Function, name: str, pool) -> Kernel:
    anchor, epi_ops, g = ConvGeom.of(fn)
    assert g.depthwise, "dw_plane needs a depthwise conv with channel multiplier 1"
    t = template("inplace_conv/ref.c.j2").module
    ph, pw = g.plane
    wt = anchor.args[1].value.reshape(g.K, g.KH * g.KW).astype(np.int64)
    wname = pool.ref(anchor.args[1])
    offset = -g.zp
    fold = (offset * wt.sum(axis=1)).astype(np.int32)
    init = pool.ref(fold, key=("inplace_fold", id(anchor))) + "[k]" if offset else "0"
    epi = Epilogue(fn, anchor, epi_ops, pool, fn.body.ty.ctype)
    T = g.KH * g.KW

    def dw(k, oh, ow):
        base = affine((oh, g.sh * pw), (ow, g.sw))
        taps = [(r * g.dh * pw + s * g.dw, f"{wname}[{affine((k, T), (str(r * g.KW + s), 1))}]")
                for r in range(g.KH) for s in range(g.KW)]
        lines, value = epi.code(["0", oh, ow, k])
        return t.S_dw(base, init.replace("[k]", f"[{k}]"), taps, lines, value,
                      f"out[{affine((oh, g.OW * g.K), (ow, g.K), (k, 1))}]")

    m = dw_plane_model(g)
    stmts = [
        Statement("S_fill", m[0].dims, m[0].constraints, m[0].time,
                  lambda a, b: t.S_fill(f"plane[{affine((a, pw), (b, 1))}]", g.zp)),
        Statement("S_copy", m[1].dims, m[1].constraints, m[1].time,
                  lambda k, h, w: t.S_copy(f"plane[{affine((h, pw), (w, 1), (str(g.pt * pw + g.pl), 1))}]",
                                           f"p0[{affine((h, g.W * g.C), (w, g.C), (k, 1))}]")),
        Statement("S_dw", m[2].dims, m[2].constraints, m[2].time, dw),
    ]
    macros, loops = loops_to_c(stmts)
    return finish(Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops,
                         ["int8_t *plane = (int8_t *)scratch;", "int32_t acc;"], macros, macs=g.macs,
                         scratch_bytes=ph * pw), fn, anchor, epi_ops, "inplace_dw_plane")


# ---------------------------------------------------------------------------------------------------
# pixel_buffer

def _ord(order: str, v: str) -> str:
    return v if order == "ascending" else f"-{v}"


def pixel_buffer_model(g: ConvGeom, order: str, block: int = 1) -> list[Access]:
    """S_px[oh, ow, k] (one output channel into T) then S_store[oh, ow, k] (T over Y).

    ``block`` = 1: one pixel at a time (this module's kernel). ``block`` = 2: pixels flattened
    (p = oh * OW + ow) and taken in pairs, the odd one last, as the SIMD variants block them
    (compiler/lower/conv2d_arm.py): both pixels' windows are read before either is stored."""
    out = box(("oh", "ow", "k"), (g.OH, g.OW, g.K))
    x = (f"X[ih, iw, ci] : exists r, s, c, q, m: k = {g.M}q + m and 0 <= m < {g.M} and "
         f"ci = {g.Cg}q + c and 0 <= c < {g.Cg} and ih = {g.sh}oh + {g.dh}r - {g.pt} and "
         f"iw = {g.sw}ow + {g.dw}s - {g.pl} and {g.taps_in_image('oh', 'ow')}")
    if block == 1:
        t = (_ord(order, "oh"), _ord(order, "ow"))
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


def lower_pixel_buffer(fn: Function, name: str, pool, order: str = "ascending") -> Kernel:
    anchor, epi_ops, geo = ConvGeom.of(fn)
    t = template("inplace_conv/ref.c.j2").module
    wname = pool.ref(anchor.args[1])
    offset = -geo.zp
    fold_ok = geo.pointwise and offset != 0       # every tap real: the offset folds into the start value
    if fold_ok:
        w2 = anchor.args[1].value.reshape(geo.K, -1).astype(np.int64)
        fold = pool.ref((offset * w2.sum(axis=1)).astype(np.int32), key=("inplace_fold", id(anchor)))
    epi = Epilogue(fn, anchor, epi_ops, pool, fn.body.ty.ctype)
    o1, o2 = _ord(order, "oh"), _ord(order, "ow")
    outer = ("oh", "ow", "g", "m")
    dom = box(outer, (geo.OH, geo.OW, geo.G, geo.M))
    taps = f"0 <= c < {geo.Cg} and " + (geo.taps_in_image("oh", "ow") if not geo.pointwise else "r = 0 and s = 0")

    def k_of(g, m):
        return affine((g, geo.M), (m, 1))

    def mac(oh, ow, g, m, r, s, c):
        ih = affine((oh, geo.sh), (r, geo.dh), (str(-geo.pt), 1))
        iw = affine((ow, geo.sw), (s, geo.dw), (str(-geo.pl), 1))
        xi = affine((ih, geo.W * geo.C), (iw, geo.C), (g, geo.Cg), (c, 1))
        wi = affine((k_of(g, m), geo.KH * geo.KW * geo.Cg), (r, geo.KW * geo.Cg), (s, geo.Cg), (c, 1))
        return t.S_mac(f"p0[{xi}]", f"{wname}[{wi}]", 0 if fold_ok else offset)

    def tmp(oh, ow, g, m):
        k = k_of(g, m)
        lines, value = epi.code(["0", oh, ow, k])
        return t.S_tmp(lines, value, f"tmp[{k}]")

    stmts = [
        Statement("S_init", outer, dom, (o1, o2, "0", "g", "m", "0", "0", "0", "0"),
                  lambda oh, ow, g, m: t.S_init(f"{fold}[{k_of(g, m)}]" if fold_ok else "0")),
        Statement("S_mac", outer + ("r", "s", "c"), f"{dom} and {taps}", (o1, o2, "0", "g", "m", "1", "r", "s", "c"),
                  mac),
        Statement("S_tmp", outer, dom, (o1, o2, "0", "g", "m", "2", "0", "0", "0"), tmp),
        Statement("S_store", ("oh", "ow"), box(("oh", "ow"), (geo.OH, geo.OW)),
                  (o1, o2, "1", "0", "0", "0", "0", "0", "0"),
                  lambda oh, ow: t.S_store(f"out + {affine((oh, geo.OW * geo.K), (ow, geo.K))}", geo.K)),
    ]
    macros, loops = loops_to_c(stmts)
    return finish(Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops,
                         ["int8_t *tmp = (int8_t *)scratch;", "int32_t acc;"], macros, macs=geo.macs,
                         scratch_bytes=geo.K), fn, anchor, epi_ops, f"inplace_pixel_{order}")


def finish(kernel: Kernel, fn: Function, anchor, epi_ops, variant: str) -> Kernel:
    """Fill ops/group/code the way ``lower_group`` does for its kernels."""
    kernel.ops = [c.op for c in ([anchor] if anchor is not None else []) + list(epi_ops)]
    kernel.group = fn.attrs.get("name", kernel.name)
    kernel.variant = variant
    kernel.code = template("expr/kernel.c.j2").render(
        name=kernel.name, group=kernel.group, ops=kernel.ops, macs=kernel.macs,
        params=[p.ctype for p in kernel.params], out_ctype=kernel.out.ctype, decls=kernel.decls,
        loops=kernel.loops, variant="ref", scratch=kernel.scratch_bytes)
    return kernel
