"""gather_index, one_hot, topk, scatter and dynamic_update_slice (ops/indexing.py): hand-written loops
(codegen_templates/indexing/ref.c.j2) with the strides of the static shapes as literals; indices read
at run time are wrapped and clamped into their axis."""
from __future__ import annotations

import math

import numpy as np

from ..codegen.templates import c_literal, template
from .kernel import Kernel, flat_index
from .reduction import around
from .registry import lowering


def _strides(shape) -> list[int]:
    return [math.prod(shape[i + 1:]) for i in range(len(shape))]


def _kernel(fn, name, anchor, loops) -> Kernel:
    return Kernel(name, [p.ty for p in fn.params], anchor.ty, str(loops), [])


def _names(anchor, epi, pool) -> list[str]:
    """The C array of each operand: its kernel parameter, or a constant in flash."""
    return [epi.param_names[id(a)] if id(a) in epi.param_names else pool.ref(a) for a in anchor.args]


@lowering("gather_index")
def lower_gather_index(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    x, idx = anchor.args
    X, I = _names(anchor, epi, pool)
    a, t = anchor.attrs, template("indexing/ref.c.j2").module
    xs, ishape = x.ty.shape, idx.ty.shape
    if a["mode"] == "take":
        view = around(xs, a["axis"])
        loops = t.take(X, I, view["outer"], view["length"], view["inner"], idx.ty.size)
    elif a["mode"] == "elements":
        dims = [f"i{k}" for k in range(len(ishape))]
        src = ["j" if k == a["axis"] else d for k, d in enumerate(dims)]
        loops = t.gather_elements(X, I, ishape, xs[a["axis"]], flat_index(ishape, dims), flat_index(xs, src))
    else:
        b, k = a["batch_dims"], ishape[-1]
        batch = math.prod(ishape[:b])
        loops = t.gather_nd(X, I, batch, math.prod(ishape[:-1]) // batch, k, math.prod(xs[b + k:]), math.prod(xs[b:]),
                            list(xs[b:b + k]), _strides(xs[b:])[:k])
    return _kernel(fn, name, anchor, loops)


@lowering("one_hot")
def lower_one_hot(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    a = anchor.attrs
    view = around(anchor.ty.shape, a["axis"])
    loops = template("indexing/ref.c.j2").module.one_hot(
        *_names(anchor, epi, pool), view["outer"], a["depth"], view["inner"], c_literal(a["on"], anchor.ty.dtype),
        c_literal(a["off"], anchor.ty.dtype))
    return _kernel(fn, name, anchor, loops)


@lowering("topk")
def lower_topk(fn, ctx) -> Kernel:
    anchor, _, _, name = ctx.unpack(fn)
    (x,) = anchor.args
    a = anchor.attrs
    view = around(x.ty.shape, a["axis"])
    loops = template("indexing/ref.c.j2").module.topk(**view, k=a["k"], ctype=x.ty.ctype, largest=a["largest"],
                                                      values=a["output"] == "values", otype=anchor.ty.ctype)
    return _kernel(fn, name, anchor, loops)


@lowering("scatter")
def lower_scatter(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    data, upd = anchor.args
    table = np.asarray(anchor.attrs["table"], np.int32)
    ref = pool.ref(table, key=("scatter", table.tobytes()))
    loops = template("indexing/ref.c.j2").module.scatter(*_names(anchor, epi, pool), data.ty.size, upd.ty.size, ref,
                                                         anchor.attrs["reduction"])
    return _kernel(fn, name, anchor, loops)


@lowering("dynamic_update_slice")
def lower_update_slice(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    x, upd, _ = anchor.args
    loops = template("indexing/ref.c.j2").module.update_slice(*_names(anchor, epi, pool), x.ty.size, list(x.ty.shape), list(upd.ty.shape),
                                                              _strides(x.ty.shape))
    return _kernel(fn, name, anchor, loops)
