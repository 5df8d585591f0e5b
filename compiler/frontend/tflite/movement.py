"""TFLite converters of data movement (float32, int8 and int32 as TFLM has them; int8 moves bytes
with one quantization in and out, TFLM's requirement): EXPAND_DIMS, SLICE, PACK, UNPACK, REVERSE_V2,
BROADCAST_TO, DEPTH_TO_SPACE, SPACE_TO_DEPTH, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, MIRROR_PAD,
GATHER_ND, EMBEDDING_LOOKUP and DYNAMIC_UPDATE_SLICE. The space/batch/depth ops are reshape →
transpose → reshape (pad / crop around them); no op of its own. Registered by importing this module.
"""
from __future__ import annotations

import math

import numpy as np

from ...ir import Constant, Expr, call
from ..onnx.misc import slice_expr
from .misc import _axis, _same_q
from .registry import Graph, Op, constant, converter, dequantize, is_int8, reshape, transpose


def _ints(op: Op, i: int, what: str) -> list[int]:
    return [int(v) for v in constant(op, op.inputs[i], what).reshape(-1)]


@converter("EXPAND_DIMS", max_version=1)
def convert_expand_dims(g: Graph, op: Op):
    """EXPAND_DIMS: a reshape to the output's shape (the axis input only places the new 1)."""
    x, out = op.inputs[0], op.outputs[0]
    if math.prod(x.shape) != math.prod(out.shape) or len(out.shape) != len(x.shape) + 1:
        raise op.error(f"cannot expand {list(x.shape)} to {list(out.shape)}")
    _same_q(op, x, [out])
    return reshape(g.value(x), out.shape, op.span)


@converter("SLICE", max_version=5)
def convert_slice(g: Graph, op: Op):
    """SLICE(x, begin, size): size -1 takes the rest of the axis."""
    x, out = op.inputs[0], op.outputs[0]
    begin, size = _ints(op, 1, "begin"), _ints(op, 2, "size")
    if len(begin) != len(x.shape) or len(size) != len(x.shape):
        raise op.error(f"begin {begin} / size {size} need one entry per axis of {list(x.shape)}")
    end = [n if s == -1 else b + s for b, s, n in zip(begin, size, x.shape)]
    if any(not 0 <= b < e <= n for b, e, n in zip(begin, end, x.shape)):
        raise op.error(f"begin {begin}, size {size} do not select a non-empty slice of {list(x.shape)}")
    _same_q(op, x, [out])
    return slice_expr(g.value(x), begin, end, [1] * len(x.shape), op.span)


@converter("PACK", max_version=3)
def convert_pack(g: Graph, op: Op):
    """PACK(values..., axis): each input gets a new axis of size 1, then one concatenation."""
    xs, out = op.inputs, op.outputs[0]
    rank = len(xs[0].shape) + 1
    axis = _axis(op, op.opt("axis", 0), rank)
    if any(t.shape != xs[0].shape or t.dtype != xs[0].dtype for t in xs):
        raise op.error("PACK needs inputs of one shape and type")
    _same_q(op, xs[0], [out, *xs[1:]])
    parts = [reshape(g.value(t), t.shape[:axis] + (1,) + t.shape[axis:], op.span) for t in xs]
    return parts[0] if len(parts) == 1 else call("concatenate", *parts, axis=axis, span=op.span)


@converter("UNPACK", max_version=3)
def convert_unpack(g: Graph, op: Op):
    """UNPACK(x, axis): one slice per index of the axis, the axis dropped."""
    x = op.inputs[0]
    axis = _axis(op, op.opt("axis", 0), len(x.shape))
    n = x.shape[axis]
    if len(op.outputs) != n:
        raise op.error(f"{len(op.outputs)} outputs for an axis of {n}")
    _same_q(op, x, op.outputs)
    outs = []
    for k in range(n):
        begin, end = [0] * len(x.shape), list(x.shape)
        begin[axis], end[axis] = k, k + 1
        y = slice_expr(g.value(x), begin, end, [1] * len(x.shape), op.span)
        outs.append(reshape(y, x.shape[:axis] + x.shape[axis + 1:], op.span))
    return outs


@converter("REVERSE_V2", max_version=3)
def convert_reverse(g: Graph, op: Op):
    """REVERSE_V2 along constant axes: a strided slice with stride -1 there."""
    x, out = op.inputs[0], op.outputs[0]
    rank = len(x.shape)
    axes = {_axis(op, a, rank) for a in _ints(op, 1, "axis")}
    _same_q(op, x, [out])
    if not any(x.shape[a] > 1 for a in axes):
        return g.value(x)
    begin = [n - 1 if a in axes else 0 for a, n in enumerate(x.shape)]
    end = [-1 if a in axes else n for a, n in enumerate(x.shape)]
    strides = [-1 if a in axes else 1 for a in range(rank)]
    return call("strided_slice", g.value(x), begin=tuple(begin), end=tuple(end), strides=tuple(strides), span=op.span)


@converter("BROADCAST_TO", max_version=3)
def convert_broadcast_to(g: Graph, op: Op):
    """BROADCAST_TO the output's (static) shape."""
    x, out = op.inputs[0], op.outputs[0]
    _same_q(op, x, [out])
    try:
        np.broadcast_shapes(x.shape, out.shape)
    except ValueError:
        raise op.error(f"{list(x.shape)} does not broadcast to {list(out.shape)}") from None
    xv = reshape(g.value(x), (1,) * (len(out.shape) - len(x.shape)) + x.shape, op.span)
    return xv if xv.ty.shape == out.shape else call("broadcast_to", xv, shape=out.shape, span=op.span)


def _block(op: Op, x, b: int, to_space: bool) -> Expr:
    """DEPTH_TO_SPACE / SPACE_TO_DEPTH on NHWC (TensorFlow's order: depth = (by·b + bx)·C + c)."""
    n, h, w, c = x.shape
    if to_space:
        if c % (b * b):
            raise op.error(f"depth {c} is not a multiple of block_size² {b * b}")
        y = transpose(reshape(x.value, (n, h, w, b, b, c // (b * b)), op.span), (0, 1, 3, 2, 4, 5), op.span)
        return reshape(y, (n, h * b, w * b, c // (b * b)), op.span)
    if h % b or w % b:
        raise op.error(f"spatial size {h}x{w} is not a multiple of block_size {b}")
    y = transpose(reshape(x.value, (n, h // b, b, w // b, b, c), op.span), (0, 1, 3, 2, 4, 5), op.span)
    return reshape(y, (n, h // b, w // b, b * b * c), op.span)


class _Bound:
    """A tensor with its IR value (what _block reads)."""

    def __init__(self, t, value):
        self.shape, self.value = t.shape, value


@converter("DEPTH_TO_SPACE", "SPACE_TO_DEPTH", max_version=2)
def convert_depth_space(g: Graph, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    b = op.opt("blockSize", 0)
    if len(x.shape) != 4 or not b or b < 1:
        raise op.error(f"needs a 4-D NHWC input and a positive block_size (got {b})")
    _same_q(op, x, [out])
    return _block(op, _Bound(x, g.value(x)), b, op.name == "DEPTH_TO_SPACE")


def _spatial(op: Op, x, what: str) -> tuple[list[int], np.ndarray]:
    """(block shape, [[before, after]] per spatial axis) of SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND on a
    3-D (NHC) or 4-D (NHWC) tensor."""
    if len(x.shape) not in (3, 4):
        raise op.error(f"{op.name} needs a 3-D or 4-D input, not {list(x.shape)}")
    block = _ints(op, 1, "block_shape")
    pads = constant(op, op.inputs[2], what).astype(np.int64).reshape(-1, 2)
    if len(block) != len(x.shape) - 2 or pads.shape[0] != len(block) or min(block) < 1 or pads.min() < 0:
        raise op.error(f"block_shape {block} / {what} {pads.tolist()} do not fit {list(x.shape)}")
    return block, pads


@converter("SPACE_TO_BATCH_ND", max_version=4)
def convert_space_to_batch(g: Graph, op: Op):
    """SPACE_TO_BATCH_ND: pad with 0.0 / the int8 output zero point (TFLite's reference; TFLM's kernel
    pads with an output offset it never sets), then [N, H/bh, bh, W/bw, bw, C] → [bh, bw, N, H/bh, W/bw, C]."""
    x, out = op.inputs[0], op.outputs[0]
    block, pads = _spatial(op, x, "paddings")
    _same_q(op, x, [out])
    xv, shape = g.value(x), x.shape
    if len(shape) == 3:
        xv, shape, block, pads = reshape(xv, shape[:2] + (1,) + shape[2:], op.span), shape[:2] + (1,) + shape[2:], \
            block + [1], np.vstack([pads, [[0, 0]]])
    if pads.any():
        xv = call("nn.pad", xv, pad_width=((0, 0), *map(tuple, pads.tolist()), (0, 0)),
                  pad_value=out.q[1] if is_int8(x) else 0.0, span=op.span)
    n, h, w, c = xv.ty.shape
    (bh, bw) = block
    if h % bh or w % bw:
        raise op.error(f"padded size {h}x{w} is not a multiple of block_shape {block}")
    y = transpose(reshape(xv, (n, h // bh, bh, w // bw, bw, c), op.span), (2, 4, 0, 1, 3, 5), op.span)
    return reshape(y, out.shape, op.span)


@converter("BATCH_TO_SPACE_ND", max_version=4)
def convert_batch_to_space(g: Graph, op: Op):
    """BATCH_TO_SPACE_ND: [bh, bw, N, h, w, C] → [N, h·bh, w·bw, C], then crop."""
    x, out = op.inputs[0], op.outputs[0]
    block, crops = _spatial(op, x, "crops")
    _same_q(op, x, [out])
    xv, shape = g.value(x), x.shape
    if len(shape) == 3:
        xv, shape, block, crops = reshape(xv, shape[:2] + (1,) + shape[2:], op.span), shape[:2] + (1,) + shape[2:], \
            block + [1], np.vstack([crops, [[0, 0]]])
    bh, bw = block
    nb, h, w, c = shape
    if nb % (bh * bw):
        raise op.error(f"batch {nb} is not a multiple of the block {bh}x{bw}")
    n = nb // (bh * bw)
    y = transpose(reshape(xv, (bh, bw, n, h, w, c), op.span), (2, 3, 0, 4, 1, 5), op.span)
    y = reshape(y, (n, h * bh, w * bw, c), op.span)
    (ct, cb), (cl, cr) = crops.tolist()
    if ct or cb or cl or cr:
        y = slice_expr(y, [0, ct, cl, 0], [n, h * bh - cb, w * bw - cr, c], [1, 1, 1, 1], op.span)
    return reshape(y, out.shape, op.span)


@converter("MIRROR_PAD", max_version=3)
def convert_mirror_pad(g: Graph, op: Op):
    """MIRROR_PAD, REFLECT (the border not repeated) or SYMMETRIC (repeated): nn.border_pad."""
    x, out = op.inputs[0], op.outputs[0]
    pads = constant(op, op.inputs[1], "paddings").astype(np.int64).reshape(-1, 2)
    mode = "reflect" if op.opt("mode", 0) == 0 else "symmetric"
    limit = [n - (mode == "reflect") for n in x.shape]
    if pads.shape[0] != len(x.shape) or pads.min() < 0 or any(p.max() > m for p, m in zip(pads, limit)):
        raise op.error(f"paddings {pads.tolist()} do not fit {list(x.shape)} ({mode}: at most the size"
                       f"{' - 1' if mode == 'reflect' else ''} per side)")
    _same_q(op, x, [out])
    if not pads.any():
        return g.value(x)
    return call("nn.border_pad", g.value(x), pad_width=tuple(map(tuple, pads.tolist())), mode=mode, span=op.span)


@converter("GATHER_ND", max_version=4)
def convert_gather_nd(g: Graph, op: Op):
    """GATHER_ND(params, indices): float32 / int8 / int32 params, int32 indices (run-time or constant)."""
    x, idx, out = op.inputs[0], op.inputs[1], op.outputs[0]
    if idx.dtype != "int32" or not idx.shape or not 1 <= idx.shape[-1] <= len(x.shape):
        raise op.error(f"indices {idx} do not index params {x} (int32, last dim <= rank)")
    _same_q(op, x, [out])
    y = call("gather_index", g.value(x), g.value(idx), mode="nd", span=op.span)
    return reshape(y, out.shape, op.span) if math.prod(out.shape) == y.ty.size else y


@converter("EMBEDDING_LOOKUP", max_version=1)
def convert_embedding_lookup(g: Graph, op: Op):
    """EMBEDDING_LOOKUP(ids int32 [k], table [rows, ...]): rows of the table; an int8 table with a
    float32 output is dequantized (TFLM's hybrid form, zero point 0)."""
    ids, table, out = op.inputs[0], op.inputs[1], op.outputs[0]
    if ids.dtype != "int32" or len(ids.shape) != 1 or len(table.shape) < 2:
        raise op.error(f"ids {ids} (int32, 1-D) and table {table} (rank >= 2) expected")
    y = call("gather_index", g.value(table), g.value(ids), mode="take", span=op.span)
    if table.dtype == "int8" and out.dtype == "float32":
        if not table.quantized or table.q[1] != 0:
            raise op.error("a hybrid int8 table needs a zero point of 0 (TFLM's check)")
        return dequantize(y, table, op=op)
    if table.dtype != out.dtype:
        raise op.error(f"table {table.dtype} to output {out.dtype} is not supported")
    _same_q(op, table, [out])
    return y


@converter("DYNAMIC_UPDATE_SLICE", max_version=1)
def convert_dynamic_update_slice(g: Graph, op: Op):
    """DYNAMIC_UPDATE_SLICE(operand, update, start): start indices clamped to fit (TFLM); constant
    start indices become a scatter of the update's positions."""
    x, upd, start = op.inputs[0], op.inputs[1], op.inputs[2]
    if len(upd.shape) != len(x.shape) or any(u > d for u, d in zip(upd.shape, x.shape)) or upd.dtype != x.dtype:
        raise op.error(f"update {upd} does not fit operand {x}")
    _same_q(op, x, [op.outputs[0], upd])
    if start.data is None:
        return call("dynamic_update_slice", g.value(x), g.value(upd), g.value(start), span=op.span)
    s = [min(max(int(v), 0), d - u) for v, d, u in zip(start.data.reshape(-1), x.shape, upd.shape)]
    pos = np.ravel_multi_index(np.indices(upd.shape).reshape(len(x.shape), -1) + np.array(s)[:, None], x.shape)
    if isinstance(g.value(x), Constant):
        raise op.error("the operand is a constant and the update computed; not supported")
    return call("scatter", g.value(x), g.value(upd), table=tuple(int(p) for p in pos), reduction="none", span=op.span)
