"""In-place int8 convolutions: the output is written over the input tensor, which dies at this kernel
(TinyEngine's in-place depthwise, generalised). Two kernels, each with the isl model its proof uses
(``tinyfuse.poly.inplace_models``, proven in ``tinyfuse.memory.inplace``); the C comes from the same
domains and schedules:

``dw_plane``  depthwise (multiplier 1, any stride/padding/dilation), channel by channel: copy the
              channel's input plane into scratch (border = input zero point, filled once), then
              compute that channel's outputs from the plane over ``X[:, :, k]``. Scratch: one padded
              plane.
``pixel_buffer``  any conv: per output pixel all K channels into a K-byte scratch, then one store of
              the pixel. Legal when no later pixel reads the bytes it lands on: shrinking convs
              (1x1 projections, stride-2 depthwise) in ascending pixel order, growing ones (1x1
              expansions) in descending order, both starting at the input's offset.

Preconditions (``ops.conv_geom.conv_group`` returns None otherwise): qnn.conv2d, NHWC/OHWI, batch 1,
int8 input and output.
"""
from __future__ import annotations

import numpy as np

from ...codegen.templates import template
from ...ir import Function
from ...ops.conv_geom import conv_group
from ...poly import Statement
from ...poly.inplace_models import dw_plane_model, pixel_order
from ...poly.isl_helpers import box
from ..kernel import Kernel, affine
from ..registry import implements


# ---------------------------------------------------------------------------------------------------
# dw_plane

@implements("depthwise.dw_plane")
def lower_dw_plane(fn: Function, ctx) -> Kernel:
    """The portable dw_plane kernel (module doc)."""
    pool, name = ctx.pool, ctx.name
    anchor, epi_ops, g = conv_group(fn)
    assert g.depthwise, "dw_plane needs a depthwise conv with channel multiplier 1"
    t = template("inplace_conv/ref.c.j2").module
    ph, pw = g.plane
    wt = anchor.args[1].value.reshape(g.K, g.KH * g.KW).astype(np.int64)
    wname = pool.ref(anchor.args[1])
    offset = -g.zp
    fold = (offset * wt.sum(axis=1)).astype(np.int32)
    init = pool.ref(fold, key=("inplace_fold", id(anchor))) + "[k]" if offset else "0"
    epi = ctx.epilogue(fn)
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
    macros, loops = ctx.loops_to_c(stmts)
    return finish(Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops,
                         ["int8_t *plane = (int8_t *)scratch;", "int32_t acc;"], macros, macs=g.macs,
                         scratch_bytes=ph * pw), fn, anchor, epi_ops, "inplace_dw_plane")


# ---------------------------------------------------------------------------------------------------
# pixel_buffer

@implements("conv2d.pixel_buffer")
def lower_pixel_buffer(fn: Function, ctx) -> Kernel:
    """The portable pixel_buffer kernel (module doc), pixels in ``ctx.order``."""
    pool, name, order = ctx.pool, ctx.name, ctx.order or "ascending"
    anchor, epi_ops, geo = conv_group(fn)
    t = template("inplace_conv/ref.c.j2").module
    wname = pool.ref(anchor.args[1])
    offset = -geo.zp
    fold_ok = geo.is_1x1 and geo.unpadded and offset != 0   # every tap real: the offset folds into the start value
    if fold_ok:
        w2 = anchor.args[1].value.reshape(geo.K, -1).astype(np.int64)
        fold = pool.ref((offset * w2.sum(axis=1)).astype(np.int32), key=("inplace_fold", id(anchor)))
    epi = ctx.epilogue(fn)
    o1, o2 = pixel_order(order, "oh"), pixel_order(order, "ow")
    outer = ("oh", "ow", "g", "m")
    dom = box(outer, (geo.OH, geo.OW, geo.G, geo.M))
    taps = f"0 <= c < {geo.Cg} and " + (geo.taps_in_image("oh", "ow") if not (geo.is_1x1 and geo.unpadded)
                                           else "r = 0 and s = 0")

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
    macros, loops = ctx.loops_to_c(stmts)
    return finish(Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops,
                         ["int8_t *tmp = (int8_t *)scratch;", "int32_t acc;"], macros, macs=geo.macs,
                         scratch_bytes=geo.K), fn, anchor, epi_ops, f"inplace_pixel_{order}")


def finish(kernel: Kernel, fn: Function, anchor, epi_ops, variant: str, simd: bool = False) -> Kernel:
    """Fill ops/group/code the way ``lower_group`` does for its kernels; ``simd``: the kernel carries
    TF_SIMD_KERNEL (tinyfuse_simd.h: GCC's pre-allocation scheduler off, as for the SIMD variants)."""
    kernel.ops = [c.op for c in ([anchor] if anchor is not None else []) + list(epi_ops)]
    kernel.group = fn.attrs.get("name", kernel.name)
    kernel.variant = variant
    kernel.code = template("expr/kernel.c.j2").render(
        name=kernel.name, group=kernel.group, ops=kernel.ops, macs=kernel.macs,
        params=[p.ctype for p in kernel.params], out_ctype=kernel.out.ctype, decls=kernel.decls,
        loops=kernel.loops, variant=variant if simd else "ref", scratch=kernel.scratch_bytes,
        slice=kernel.slice_range)
    return kernel
