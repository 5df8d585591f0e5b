"""softmax: a hand-written template (no isl); x viewed as [outer][length][inner] around the axis."""
import numpy as np

from ..codegen.templates import template
from .kernel import Kernel
from .registry import lowering


@lowering("nn.softmax")
def lower_softmax(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    shape, axis = anchor.ty.shape, anchor.attrs["axis"] % anchor.ty.ndim
    loops = template("softmax/ref.c.j2").render(
        outer=int(np.prod(shape[:axis])), length=shape[axis], inner=int(np.prod(shape[axis + 1:])))
    return Kernel(name, [p.ty for p in fn.params], anchor.ty, loops, [])
