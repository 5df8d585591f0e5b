"""Reduction kernels (ops/reduction.py): sum / prod / max / min / all / any over any set of axes
as isl statements (the kept axes outer, the reduced axes inner, one register accumulator per output,
the group's epilogue after), and hand-written loops over x viewed as [outer][length][inner] around
one axis for argmax / argmin, cumsum and qnn.cumsum (codegen_templates/reduction/ref.c.j2)."""
from __future__ import annotations

import math

from ..codegen.templates import template
from ..poly import Statement
from ..poly.isl_helpers import box
from .kernel import Kernel, flat_index
from .registry import lowering


def around(shape, axis: int) -> dict:
    """x viewed as [outer][length][inner] around ``axis``."""
    return dict(outer=math.prod(shape[:axis]), length=shape[axis], inner=math.prod(shape[axis + 1:]))


@lowering("sum", "prod", "max", "min", "all", "any")
def lower_reduce(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    (x,) = anchor.args
    axes, keep, kind = anchor.attrs["axes"], anchor.attrs["keepdims"], anchor.op
    pre, post = anchor.attrs.get("pre", ""), anchor.attrs.get("post", "")
    t = template("reduction/ref.c.j2").module
    ctype, dtype = anchor.ty.ctype, anchor.ty.dtype
    kept = [i for i in range(x.ty.ndim) if i not in axes]
    outer = tuple(f"o{i}" for i in kept) or ("z",)     # a scalar result still needs one loop
    inner = tuple(f"r{i}" for i in axes)
    outer_box = box(outer, tuple(x.ty.shape[i] for i in kept) or (1,))
    xname = epi.param_names[id(x)]

    def out_index(c) -> list[str]:
        return [c[f"o{i}"] if i in kept else "0" for i in range(x.ty.ndim) if keep or i in kept]

    def acc(**c):
        idx = [c[f"o{i}"] if i in kept else c[f"r{i}"] for i in range(x.ty.ndim)]
        return t.S_acc(kind, f"{xname}[{flat_index(x.ty.shape, idx)}]", pre, dtype)

    def store(**c):
        o = out_index(c)
        lines, value = epi.code(o)
        return t.S_out(post, lines, value, f"out[{flat_index(anchor.ty.shape, o) if o else '0'}]", dtype)

    zeros = ("0",) * len(inner)
    stmts = [
        Statement("S_init", outer, outer_box, outer + ("0",) + zeros, lambda **c: t.S_init(kind, ctype, dtype)),
        Statement("S_acc", outer + inner, f"{outer_box} and {box(inner, [x.ty.shape[i] for i in axes])}",
                  outer + ("1",) + inner, acc),
        Statement("S_out", outer, outer_box, outer + ("2",) + zeros, store),
    ]
    macros, loops = ctx.loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [f"{ctype} acc;"], macros, macs=x.ty.size)


@lowering("argmax", "argmin")
def lower_arg(fn, ctx) -> Kernel:
    anchor, _, _, name = ctx.unpack(fn)
    (x,) = anchor.args
    a = anchor.attrs
    cmp = (">" if anchor.op == "argmax" else "<") + ("=" if a["select_last_index"] else "")
    loops = template("reduction/ref.c.j2").module.arg(**around(x.ty.shape, a["axis"]), ctype=x.ty.ctype,
                                                      otype=anchor.ty.ctype, cmp=cmp)
    return Kernel(name, [p.ty for p in fn.params], anchor.ty, str(loops), [])


@lowering("cumsum", "qnn.cumsum")
def lower_cumsum(fn, ctx) -> Kernel:
    anchor, _, _, name = ctx.unpack(fn)
    (x,) = anchor.args
    a = anchor.attrs
    t = template("reduction/ref.c.j2").module
    view = around(x.ty.shape, a["axis"])
    if anchor.op == "cumsum":
        loops = t.cumsum(**view, ctype=x.ty.ctype, dtype=x.ty.dtype, reverse=a["reverse"], exclusive=a["exclusive"])
    else:
        loops = t.qcumsum(**view, reverse=a["reverse"], exclusive=a["exclusive"], a=a)
    return Kernel(name, [p.ty for p in fn.params], anchor.ty, str(loops), [])
