"""concatenate → one statement per operand: out[..., off_i + j, ...] = x_i[..., j, ...]. Operands are
params or constants (a constant operand is read from flash)."""
from ..codegen.templates import template
from ..ir import Constant
from ..poly import Statement
from ..poly.isl_helpers import box
from .kernel import Kernel, affine, flat_index
from .registry import lowering


@lowering("concatenate")
def lower_concat(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    axis, out = anchor.attrs["axis"], anchor.ty
    t = template("concat/ref.c.j2").module
    dims = tuple(f"o{i}" for i in range(out.ndim))
    stmts, offset = [], 0
    for i, x in enumerate(anchor.args):
        src = pool.ref(x) if isinstance(x, Constant) else epi.param_names[id(x)]

        def body(x=x, src=src, offset=offset, **c):
            o = [c[d] for d in dims]
            dst = o[:axis] + [affine((o[axis], 1), (str(offset), 1))] + o[axis + 1:]
            return t.S(f"out[{flat_index(out.shape, dst)}]", f"{src}[{flat_index(x.ty.shape, o)}]")

        stmts.append(Statement(f"S{i}", dims, box(dims, x.ty.shape), (str(i),) + dims, body))
        offset += x.ty.shape[axis]
    macros, loops = ctx.loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], out, loops, [], macros)
