"""mean (+ epilogue) → S_init / S_acc / S_out: the kept axes are the outer loops, the reduced axes
the inner ones; the divisor (number of reduced elements) is a compile-time literal."""
import numpy as np

from ..codegen.templates import c_literal, template
from ..poly import Statement
from ..poly.isl_helpers import box
from .kernel import Kernel, flat_index
from .registry import lowering


@lowering("mean")
def lower_mean(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    (x,) = anchor.args
    axes, keep = anchor.attrs["axes"], anchor.attrs["keepdims"]
    t = template("reduce/ref.c.j2").module
    ctype = anchor.ty.ctype
    kept = [i for i in range(x.ty.ndim) if i not in axes]
    outer = tuple(f"o{i}" for i in kept) or ("z",)     # a scalar result still needs one loop
    inner = tuple(f"r{i}" for i in axes)
    outer_box = box(outer, tuple(x.ty.shape[i] for i in kept) or (1,))
    count = c_literal(int(np.prod([x.ty.shape[i] for i in axes])), anchor.ty.dtype)

    def out_index(c) -> list[str]:
        return [c[f"o{i}"] if i in kept else "0" for i in range(x.ty.ndim) if keep or i in kept]

    def acc(**c):
        idx = [c[f"o{i}"] if i in kept else c[f"r{i}"] for i in range(x.ty.ndim)]
        return t.S_acc(f"p0[{flat_index(x.ty.shape, idx)}]")

    def store(**c):
        o = out_index(c)
        lines, value = epi.code(o)
        return t.S_out(count, lines, value, f"out[{flat_index(anchor.ty.shape, o) if o else '0'}]")

    zeros = ("0",) * len(inner)
    stmts = [
        Statement("S_init", outer, outer_box, outer + ("0",) + zeros, lambda **c: t.S_init(ctype)),
        Statement("S_acc", outer + inner, f"{outer_box} and {box(inner, [x.ty.shape[i] for i in axes])}",
                  outer + ("1",) + inner, acc),
        Statement("S_out", outer, outer_box, outer + ("2",) + zeros, store),
    ]
    macros, loops = ctx.loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [f"{ctype} acc;"], macros,
                  macs=x.ty.size)
