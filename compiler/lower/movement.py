"""strided_slice, take, tile, broadcast_to → one copy kernel each: out[o] = x[src(o)], with the
op's index map printed as C (ops/movement.py): begin + stride·o (strided_slice), a constant index
table or an arithmetic progression (take), o mod n (tile), 0 on broadcast dims (broadcast_to)."""
import numpy as np

from ..codegen.templates import template
from ..poly import Statement
from ..poly.isl_helpers import box
from .kernel import Kernel, affine, flat_index
from .registry import lowering


def _strided_slice(anchor, o, pool):
    return [affine((e, s), (str(b), 1)) for e, b, s in zip(o, anchor.attrs["begin"], anchor.attrs["strides"])]


def _take(anchor, o, pool):
    axis, idx = anchor.attrs["axis"], list(anchor.attrs["indices"])
    k = len(anchor.attrs["indices_shape"])
    inner = o[axis:axis + k]
    step = idx[1] - idx[0] if len(idx) > 1 else 0
    if k <= 1 and all(b - a == step for a, b in zip(idx, idx[1:])):     # an arithmetic progression
        src = affine((inner[0], step), (str(idx[0]), 1)) if k else str(idx[0])
    else:
        table = pool.ref(np.array(idx, np.int32), key=("take", tuple(idx)))
        src = f"{table}[{flat_index(tuple(anchor.attrs['indices_shape']), inner)}]"
    return o[:axis] + [src] + o[axis + k:]


def _tile(anchor, o, pool):
    return [e if r == 1 else f"({e} % {n})" for e, r, n in zip(o, anchor.attrs["reps"], anchor.args[0].ty.shape)]


def _broadcast_to(anchor, o, pool):
    x = anchor.args[0].ty
    lead = len(o) - x.ndim
    return [e if d != 1 else "0" for e, d in zip(o[lead:], x.shape)]


SOURCES = {"strided_slice": _strided_slice, "take": _take, "tile": _tile, "broadcast_to": _broadcast_to}


@lowering(*SOURCES)
def lower_movement(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    (x,) = anchor.args
    out = anchor.ty
    t = template("movement/ref.c.j2").module
    dims = tuple(f"o{i}" for i in range(out.ndim))

    def body(**c):
        o = [c[d] for d in dims]
        src = SOURCES[anchor.op](anchor, o, pool)
        lines, value = epi.code(o, acc=f"{epi.param_names[id(x)]}[{flat_index(x.ty.shape, src)}]")
        assert not lines, f"{anchor.op} groups carry no epilogue"
        return t.S(f"out[{flat_index(out.shape, o)}]", value)

    macros, loops = ctx.loops_to_c([Statement("S", dims, box(dims, out.shape), dims, body)])
    return Kernel(name, [p.ty for p in fn.params], out, loops, [], macros)
