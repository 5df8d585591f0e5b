"""Injective data movement with a static index map: strided_slice, take (gather with constant
indices), tile and broadcast_to; cast and prelu (element-wise).

Every data-movement op here reads one input element per output element, through an index map the
lowering (``lower/movement.py``) prints as C index arithmetic, and moves bytes without arithmetic, so
legalize_qdq runs it on the int8 tensor unchanged (``moves_data``: scale and zero point pass through).
The frontends normalise the ONNX/TFLite conventions (negative and clamped starts, masks, negative
indices) before building the op; the attributes here are already in range.
"""
from __future__ import annotations

import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import C_TYPES, TensorType
from .elemwise import Binary, Unary


def slice_length(begin: int, end: int, step: int) -> int:
    """Number of indices begin, begin+step, ... before ``end`` (exclusive, either direction)."""
    return max(0, -(-(end - begin) // step)) if step > 0 else max(0, -(-(begin - end) // -step))


@register_op
class StridedSlice(OpDef):
    """y[o] = x[begin + strides * o] per axis (ONNX Slice-13, TFLite STRIDED_SLICE after the frontend
    resolves masks and negative / clamped bounds). ``begin``, ``end``, ``strides`` have one entry per
    axis of x; ``strides`` non-zero, ``end`` exclusive and -1 means "through index 0" for a negative
    stride. Output dims: ceil((end - begin) / stride), each >= 1."""
    name, pattern, num_inputs = "strided_slice", OpPattern.INJECTIVE, 1
    moves_data = True
    attrs = {"begin": (), "end": (), "strides": ()}

    def infer(self, args, attrs):
        (x,) = args
        b, e, s = attrs["begin"], attrs["end"], attrs["strides"]
        if not len(b) == len(e) == len(s) == x.ndim or 0 in s:
            raise TinyfuseError(f"strided_slice: begin {b}, end {e}, strides {s} do not fit shape {list(x.shape)}")
        shape = tuple(slice_length(*t) for t in zip(b, e, s))
        if any(not 0 <= bi < n for bi, n in zip(b, x.shape)) or min(shape, default=1) < 1:
            raise TinyfuseError(f"strided_slice: begin {b}, end {e}, strides {s} select nothing "
                                f"of shape {list(x.shape)}")
        return TensorType(shape, x.dtype)

    def compute(self, x, begin, end, strides):
        index = tuple(slice(b, None if e < 0 else e, s) for b, e, s in zip(begin, end, strides))
        return np.ascontiguousarray(x[index])


@register_op
class Take(OpDef):
    """numpy.take(x, indices, axis) with constant ``indices`` (ONNX Gather-13, TFLite GATHER with
    batch_dims 0): the flat index list (non-negative, < x.shape[axis]) and its shape ``indices_shape``.
    Output shape: x.shape[:axis] + indices_shape + x.shape[axis+1:]."""
    name, pattern, num_inputs = "take", OpPattern.INJECTIVE, 1
    moves_data = True
    attrs = {"indices": (), "indices_shape": (), "axis": 0}

    def infer(self, args, attrs):
        (x,) = args
        axis, idx, ishape = attrs["axis"], attrs["indices"], tuple(attrs["indices_shape"])
        if not 0 <= axis < x.ndim or len(idx) != int(np.prod(ishape, dtype=np.int64)) \
                or any(not 0 <= i < x.shape[axis] for i in idx) or not idx:
            raise TinyfuseError(f"take: indices {list(idx)[:8]} of shape {list(ishape)} do not fit axis {axis} "
                                f"of shape {list(x.shape)}")
        return TensorType(x.shape[:axis] + ishape + x.shape[axis + 1:], x.dtype)

    def compute(self, x, indices, indices_shape, axis):
        return np.take(x, np.array(indices, np.int64).reshape(indices_shape), axis=axis)


@register_op
class Tile(OpDef):
    """numpy.tile with one repeat count per axis (ONNX Tile-13): y[o] = x[o mod x.shape]."""
    name, pattern, num_inputs = "tile", OpPattern.INJECTIVE, 1
    moves_data = True
    attrs = {"reps": ()}

    def infer(self, args, attrs):
        (x,) = args
        reps = tuple(attrs["reps"])
        if len(reps) != x.ndim or min(reps, default=1) < 1:
            raise TinyfuseError(f"tile: repeats {list(reps)} do not fit shape {list(x.shape)}")
        return TensorType(tuple(d * r for d, r in zip(x.shape, reps)), x.dtype)

    def compute(self, x, reps):
        return np.tile(x, reps)


@register_op
class BroadcastTo(OpDef):
    """numpy.broadcast_to(x, shape), materialised (ONNX Expand-13: ``shape`` is already the
    broadcast of x's shape and the requested one)."""
    name, pattern, num_inputs = "broadcast_to", OpPattern.INJECTIVE, 1
    moves_data = True
    attrs = {"shape": ()}

    def infer(self, args, attrs):
        (x,) = args
        shape = tuple(attrs["shape"])
        try:
            ok = np.broadcast_shapes(x.shape, shape) == shape
        except ValueError:
            ok = False
        if not ok:
            raise TinyfuseError(f"broadcast_to: shape {list(x.shape)} does not broadcast to {list(shape)}")
        return TensorType(shape, x.dtype)

    def compute(self, x, shape):
        return np.ascontiguousarray(np.broadcast_to(x, shape))


@register_op
class Cast(Unary):
    """Element-wise conversion to ``dtype`` as C's conversion does it (ONNX Cast-19 for the types of
    ir.types.C_TYPES): float → integer truncates toward zero (out-of-range values are undefined, as
    in ONNX), integer → float rounds to nearest, → bool is x != 0."""
    name, c_expr = "cast", "cast"
    attrs = {"dtype": "float32"}

    def infer(self, args, attrs):
        if attrs["dtype"] not in C_TYPES:
            raise TinyfuseError(f"cast: dtype {attrs['dtype']} is not supported ({', '.join(C_TYPES)})")
        return TensorType(args[0].shape, attrs["dtype"])

    def compute(self, x, dtype):
        return (x != 0) if dtype == "bool" else x.astype(dtype)

    def is_identity(self, node):
        return node.args[0].ty.dtype == node.ty.dtype


@register_op
class PRelu(Binary):
    """y = x < 0 ? slope * x : x, ``slope`` broadcasting to x (ONNX PRelu-16, TFLite PRELU float)."""
    name, c_expr = "nn.prelu", "prelu"
    f = staticmethod(lambda x, slope: np.where(x < 0, x * slope, x))

    def infer(self, args, attrs):
        ty = super().infer(args, attrs)
        if ty.shape != args[0].shape:
            raise TinyfuseError(f"nn.prelu: slope {list(args[1].shape)} does not broadcast to x {list(args[0].shape)}")
        return ty


@register_op
class SliceView(OpDef):
    """A slice whose elements are one contiguous range of x's buffer (every axis before the last cut
    one has output size 1, steps 1: a split of the outer axis, a window of a [1, T, ...] stream): no
    kernel and no copy, the consumers read x's buffer from ``offset`` (elements) on. ``newshape`` is
    the slice's shape (ONNX Slice / Split, TFLite STRIDED_SLICE / SPLIT / SPLIT_V)."""
    name, pattern, num_inputs = "slice_view", OpPattern.INJECTIVE, 1
    is_view, moves_data = True, True
    attrs = {"offset": 0, "newshape": ()}

    def infer(self, args, attrs):
        (x,) = args
        shape, offset = tuple(attrs["newshape"]), attrs["offset"]
        size = int(np.prod(shape, dtype=np.int64))
        if offset < 0 or size < 1 or offset + size > x.size:
            raise TinyfuseError(f"slice_view: {size} elements from {offset} do not fit shape {list(x.shape)}")
        return TensorType(shape, x.dtype)

    def compute(self, x, offset, newshape):
        size = int(np.prod(newshape, dtype=np.int64))
        return np.ascontiguousarray(x).reshape(-1)[offset:offset + size].reshape(newshape)

    def view_offset(self, node):
        return node.attrs["offset"] * np.dtype(node.ty.dtype).itemsize


def contiguous_offset(shape, begin, end, steps) -> int | None:
    """The element offset of the slice x[begin:end:steps] in x's row-major buffer when the slice is
    one contiguous range of it (SliceView), else None."""
    cut = [a for a, (b, e, s, n) in enumerate(zip(begin, end, steps, shape)) if (b, e, s) != (0, n, 1)]
    if any(s != 1 for s in steps) or not cut:
        return None
    last = cut[-1]
    if any(e - b != 1 for b, e in zip(begin[:last], end[:last])):
        return None
    strides = np.cumprod((1,) + tuple(shape[:0:-1]))[::-1]
    return int(sum(b * int(st) for b, st in zip(begin, strides)))
