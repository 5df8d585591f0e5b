"""TFLite TILE (LiteRT's kernels/tile.cc; TFLite Micro has no TILE): ``tile`` with one constant count per
axis; int8 copies its bytes, so the output keeps the input's scale and zero point. A tiled constant (an
SSD's anchor grid) folds at compile time. Registered by importing this module."""
from __future__ import annotations

from ...ir import call
from .misc import _same_q
from .registry import Graph, Op, constant, converter


@converter("TILE", max_version=3)
def convert_tile(g: Graph, op: Op):
    """TILE(x, multiples): output dim i = x dim i x multiples[i] (int32 or int64 multiples, one per axis)."""
    x, out = op.inputs[0], op.outputs[0]
    reps = [int(v) for v in constant(op, op.inputs[1], "multiples").reshape(-1)]
    if len(reps) != len(x.shape) or min(reps, default=1) < 1:
        raise op.error(f"multiples {reps} do not fit shape {list(x.shape)} (one count >= 1 per axis)")
    if tuple(d * r for d, r in zip(x.shape, reps)) != tuple(out.shape):
        raise op.error(f"{list(x.shape)} tiled {reps} is not the output's shape {list(out.shape)}")
    _same_q(op, x, [out])
    xv = g.value(x)
    return xv if all(r == 1 for r in reps) else call("tile", xv, reps=tuple(reps), span=op.span)
