"""slice_axis → a copy kernel, out[..., i, ...] = x[..., begin + i, ...] (only when no consumer reads
the slice in place, see passes/fold_views.py)."""
from ..codegen.templates import template
from ..poly import Statement
from ..poly.isl_helpers import box
from .kernel import Kernel, affine, flat_index
from .registry import lowering


@lowering("slice_axis")
def lower_slice_axis(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    (x,) = anchor.args
    axis, begin, out = anchor.attrs["axis"], anchor.attrs["begin"], anchor.ty
    t = template("view/ref.c.j2").module
    dims = tuple(f"o{i}" for i in range(out.ndim))

    def body(**c):
        o = [c[d] for d in dims]
        src = o[:axis] + [affine((o[axis], 1), (str(begin), 1))] + o[axis + 1:]
        lines, value = epi.code(o, acc=f"{epi.param_names[id(x)]}[{flat_index(x.ty.shape, src)}]")
        assert not lines, "slice_axis groups carry no epilogue"
        return t.S(f"out[{flat_index(out.shape, o)}]", value)

    macros, loops = ctx.loops_to_c([Statement("S", dims, box(dims, out.shape), dims, body)])
    return Kernel(name, [p.ty for p in fn.params], out, loops, [], macros)
