"""take_runtime → one loop over the outer positions and the indices, each index wrapped and clamped
(compiler/ops/gather_runtime.py) before the row of ``inner`` elements is copied
(codegen_templates/movement/gather_runtime.c.j2)."""
from __future__ import annotations

import numpy as np

from ..codegen.templates import template
from ..ir import Constant
from .kernel import Kernel
from .registry import lowering


@lowering("take_runtime")
def lower_take_runtime(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    idx, x = anchor.args
    ind, src = (pool.ref(a) if isinstance(a, Constant) else epi.param_names[id(a)] for a in anchor.args)
    axis = anchor.attrs["axis"]
    shape = x.ty.shape
    loops = template("movement/gather_runtime.c.j2").render(
        x=src, indices=ind, outer=int(np.prod(shape[:axis], dtype=np.int64)), n=shape[axis],
        count=int(np.prod(idx.ty.shape, dtype=np.int64)), inner=int(np.prod(shape[axis + 1:], dtype=np.int64)))
    return Kernel(name, [p.ty for p in fn.params], anchor.ty, loops, [])
