"""Groups without an anchor: element-wise/broadcast chains (one statement per output element, in
place over a same-shape input when the planner allows) and transposes."""

import numpy as np

from ..codegen.templates import template
from ..poly import Statement
from ..poly.isl_helpers import box
from .kernel import Kernel, flat_index
from .registry import lowering


def _dims(shape):
    return tuple(f"o{i}" for i in range(len(shape)))


@lowering("elemwise")
def lower_elemwise(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    out = fn.body.ty
    t = template("elemwise/ref.c.j2").module
    dims = _dims(out.shape) or ("o0",)
    shape = out.shape or (1,)

    def body(**c):
        o = [c[d] for d in dims][-len(out.shape):] if out.shape else []
        lines, value = epi.code(o)
        return t.S(lines, value, f"out[{flat_index(out.shape, o) if o else '0'}]")

    macros, loops = ctx.loops_to_c([Statement("S", dims, box(dims, shape), dims, body)])
    return Kernel(name, [p.ty for p in fn.params], out, loops, [], macros)


@lowering("transpose")
def lower_transpose(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    (x,) = anchor.args
    axes = anchor.attrs["axes"]
    out = fn.body.ty       # the anchor's shape; float32 when a dequantize follows (else its dtype)
    t = template("transpose/ref.c.j2").module
    dims = _dims(out.shape)

    def body(**c):
        o = [c[d] for d in dims]
        src = [o[axes.index(i)] for i in range(len(axes))]
        lines, value = epi.code(o, acc=f"p0[{flat_index(x.ty.shape, src)}]")
        if lines:    # a (de)quantize epilogue (fuse_ops._dequantizes_transpose)
            return template("elemwise/ref.c.j2").module.S(lines, value, f"out[{flat_index(out.shape, o)}]")
        return t.S(f"out[{flat_index(out.shape, o)}]", value)

    # narrowing (a quantize epilogue): descending, the order memory/inplace.py ``transpose`` proves
    narrower = np.dtype(str(out.dtype)).itemsize < np.dtype(str(x.ty.dtype)).itemsize
    time = tuple(f"-{d}" for d in dims) if narrower else dims
    macros, loops = ctx.loops_to_c([Statement("S", dims, box(dims, out.shape), time, body)])
    return Kernel(name, [p.ty for p in fn.params], out, loops, [], macros)


