"""nn.resize2d with K taps per output row and column (mode cubic, antialias, tf_crop_and_resize;
float32): one statement over the output box whose body runs two small loops over the taps. The
source offsets (index times stride) [O, K] and weights [O, K] of every output row and column come
from ops/resize_taps.py ``tap_table`` (the numpy reference's own tables), stored as const tables in
flash; tf_crop_and_resize adds a 0/1 table per axis (1: inside the image) and stores
``extrapolation_value`` where either is 0."""
import numpy as np

from ..codegen.templates import c_literal, template
from ..ir import get_op
from ..ops.resize import spatial_axes
from ..poly import Statement
from ..poly.isl_helpers import box
from .kernel import Kernel, flat_index


def lower_resize_taps(fn, ctx) -> Kernel:
    """The Kernel of a float32 nn.resize2d for which ``ops.resize_taps.uses_taps`` holds."""
    anchor, epi, pool, name = ctx.unpack(fn)
    (x,) = anchor.args
    a, out = anchor.attrs, anchor.ty
    hax, wax = spatial_axes(a["layout"])
    strides = np.cumprod((1,) + tuple(x.ty.shape[:0:-1]))[::-1]
    ty, tx = get_op(anchor.op).tap_tables(x.ty.shape, a)
    key = id(anchor)
    ro = pool.ref((ty.idx * np.int32(strides[hax])).astype(np.int32), key=("rows_offs", key))
    co = pool.ref((tx.idx * np.int32(strides[wax])).astype(np.int32), key=("cols_offs", key))
    rw, cw = pool.ref(ty.w, key=("rows_w", key)), pool.ref(tx.w, key=("cols_w", key))
    crop = a["coordinate_transformation_mode"] == "tf_crop_and_resize"
    if crop:
        rv = pool.ref(ty.valid.astype(np.int8), key=("rows_in", key))
        cv = pool.ref(tx.valid.astype(np.int8), key=("cols_in", key))
    kh, kw = ty.idx.shape[1], tx.idx.shape[1]
    t = template("resize/taps.c.j2").module
    dims = ("d0", "d1", "d2", "d3")

    def body(**c):
        o = [c[d] for d in dims]
        base = flat_index(x.ty.shape, [e if i not in (hax, wax) else "0" for i, e in enumerate(o)])
        compute = t.S_taps(base, ro, co, rw, cw, o[hax], o[wax], kh, kw, out.ctype)
        if crop:
            compute += "\n" + t.S_outside(rv, cv, o[hax], o[wax], c_literal(a["extrapolation_value"], "float32"))
        lines, value = epi.code(o)
        return compute.strip() + "\n" + t.S_out(lines, value, f"out[{flat_index(out.shape, o)}]", fn.body.ty.ctype)

    stmts = [Statement("S_resize", dims, box(dims, out.shape), dims, body)]
    macros, loops = ctx.loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [f"{out.ctype} acc;"], macros,
                  macs=int(np.prod(out.shape)) * kh * kw)
