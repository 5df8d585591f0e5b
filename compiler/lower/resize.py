"""nn.resize2d (+ epilogue): one statement over the output box. The output sizes are static, so the
source offsets (row/column index times its stride) and weights of every output row and column are
computed at compile time (ops/resize.py ``axis_table``, the same table the numpy reference uses)
and stored as const tables of two entries per row/column in flash; the C only indexes and
multiply-adds. nearest reads one element; linear four (TFLM's int8 arithmetic for int8); cubic,
antialias and tf_crop_and_resize K·K (lower/resize_taps.py)."""
import numpy as np

from ..codegen.templates import template
from ..ir import get_op
from ..ops.resize import spatial_axes
from ..ops.resize_taps import uses_taps
from ..poly import Statement
from ..poly.isl_helpers import box
from .kernel import Kernel, affine, flat_index
from .registry import lowering
from .resize_taps import lower_resize_taps


def _tables(pool, anchor, t, stride: int, what: str, linear: bool):
    """Const tables of one axis: offsets [out, 2] (i0, i1 times ``stride``) and weights [out, 2];
    nearest: offsets [out, 1] (i0 times ``stride``) only."""
    offs = np.stack([t.i0, t.i1] if linear else [t.i0], 1).astype(np.int32) * np.int32(stride)
    if not linear:
        return pool.ref(offs, key=(what + "_offs", id(anchor))), None
    return (pool.ref(offs, key=(what + "_offs", id(anchor))),
            pool.ref(np.stack([t.w0, t.w1], 1), key=(what + "_w", id(anchor))))


@lowering("nn.resize2d")
def lower_resize(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    if uses_taps(anchor.attrs):
        return lower_resize_taps(fn, ctx)
    (x,) = anchor.args
    a, out = anchor.attrs, anchor.ty
    hax, wax = spatial_axes(a["layout"])
    strides = np.cumprod((1,) + tuple(x.ty.shape[:0:-1]))[::-1]
    ty, tx = get_op(anchor.op).tables(x.ty.shape, a, out.dtype)
    linear = a["method"] == "linear"
    ro, rw = _tables(pool, anchor, ty, int(strides[hax]), "rows", linear)
    co, cw = _tables(pool, anchor, tx, int(strides[wax]), "cols", linear)
    integer = out.dtype == "int8"
    t = template("resize/ref.c.j2").module
    dims = ("d0", "d1", "d2", "d3")

    def body(**c):
        o = [c[d] for d in dims]
        base = flat_index(x.ty.shape, [e if i not in (hax, wax) else "0" for i, e in enumerate(o)])
        r, s = (affine((o[hax], 2)), affine((o[wax], 2))) if linear else (o[hax], o[wax])

        def px(i, j):
            terms = ([base] if base != "0" else []) + [f"{ro}[{r}{' + 1' if i else ''}]",
                                                       f"{co}[{s}{' + 1' if j else ''}]"]
            return f"p0[{' + '.join(terms)}]"

        if not linear:
            compute = t.S_nearest(px(0, 0))
        else:
            w = [f"{tab}[{e}{' + 1' if k else ''}]" for tab, e in ((cw, s), (rw, r)) for k in (0, 1)]
            compute = t.S_linear(px(0, 0), px(0, 1), px(1, 0), px(1, 1), *w, integer, a["rounding"])
        lines, value = epi.code(o)
        return compute.strip() + "\n" + t.S_out(lines, value, f"out[{flat_index(out.shape, o)}]", fn.body.ty.ctype)

    stmts = [Statement("S_resize", dims, box(dims, out.shape), dims, body)]
    macros, loops = ctx.loops_to_c(stmts)
    acc_type = "int32_t" if integer else out.ctype
    taps = 4 if linear else 1
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [f"{acc_type} acc;"], macros,
                  macs=int(np.prod(out.shape)) * taps)
