"""ONNX converters of the data-movement and small element-wise ops: Slice, Split, Gather (constant
indices), Cast, Expand, Tile, Where, PRelu. Registered by importing this module
(``onnx.py``); the ops are in ``ops/movement.py``."""
from __future__ import annotations

import numpy as np
from onnx import helper

from ...ir import Constant, Expr, call
from ...ir.types import C_TYPES, STORAGE_TYPES
from .half import cast_to_storage
from ...ops.movement import contiguous_offset, slice_length
from .ops import const_ints
from .registry import Node, const_value, converter, node_axis, optional_arg


def slice_bound(v: int, n: int, step: int, is_end: bool) -> int:
    """A Slice-13 start/end on a dim of size n: negative counts from the end, then clamped to [0, n]
    (step > 0) or [0, n-1] for starts / [-1, n-1] for ends (step < 0)."""
    v = v + n if v < 0 else v
    if step > 0:
        return min(max(v, 0), n)
    return min(max(v, -1 if is_end else 0), n - 1)


def slice_expr(x: Expr, begin, end, steps, span: str) -> Expr:
    """x sliced per axis: slice_view when the slice is one contiguous range of x's buffer (no copy),
    slice_axis when one axis is cut with step 1 (a strided view fold_views can fold into a matmul
    reading it), else strided_slice; x itself for the whole tensor."""
    cut = [a for a, (b, e, s, n) in enumerate(zip(begin, end, steps, x.ty.shape)) if (b, e, s) != (0, n, 1)]
    if not cut:
        return x
    offset = contiguous_offset(x.ty.shape, begin, end, steps)
    if offset is not None:
        shape = tuple(slice_length(*t) for t in zip(begin, end, steps))
        return call("slice_view", x, offset=offset, newshape=shape, span=span)
    if len(cut) == 1 and steps[cut[0]] == 1:
        a = cut[0]
        return call("slice_axis", x, axis=a, begin=begin[a], end=end[a], span=span)
    return call("strided_slice", x, begin=tuple(begin), end=tuple(end), strides=tuple(steps), span=span)


@converter("Slice")
def convert_slice(node: Node, args):
    """Slice-13: starts, ends, optional axes (negative count from the end) and steps are constant
    inputs; bounds are clamped as the spec says (INT_MAX / INT_MIN mean "to the end")."""
    x = args[0]
    rank, shape = x.ty.ndim, x.ty.shape
    starts, ends = const_ints(node, args[1], "starts"), const_ints(node, args[2], "ends")
    axes_arg, steps_arg = optional_arg(args, 3), optional_arg(args, 4)
    axes = const_ints(node, axes_arg, "axes") if axes_arg is not None else list(range(len(starts)))
    steps = const_ints(node, steps_arg, "steps") if steps_arg is not None else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps) or any(not -rank <= a < rank for a in axes):
        raise node.error(f"starts {starts}, ends {ends}, axes {axes}, steps {steps} do not fit shape {list(shape)}")
    axes = [a % rank for a in axes]
    if len(set(axes)) != len(axes) or 0 in steps:
        raise node.error(f"axes {axes} repeat or steps {steps} hold a zero")
    begin, end, step = [0] * rank, list(shape), [1] * rank
    for a, b, e, s in zip(axes, starts, ends, steps):
        begin[a], end[a], step[a] = slice_bound(b, shape[a], s, False), slice_bound(e, shape[a], s, True), s
    out = [max(0, -(-(e - b) // s)) for b, e, s in zip(begin, end, step)]
    if 0 in out:                       # an empty slice: a zero-element constant (onnx.py empty_constant)
        return Constant(np.zeros(out, x.ty.dtype), node.name)
    return slice_expr(x, begin, end, step, node.name)


def split_sizes(node: Node, n: int, count: int, split_arg) -> list[int]:
    """Split-13 (split input, else equal parts) and Split-18 (num_outputs: ceil(n / k) each, the last
    smaller)."""
    if split_arg is not None:
        sizes = const_ints(node, split_arg, "split")
    elif node.attr("num_outputs") is not None:
        k = int(node.attr("num_outputs"))
        chunk = -(-n // k)
        sizes = [min(chunk, n - i * chunk) for i in range(k)]
    elif node.attr("split") is not None:
        sizes = [int(v) for v in node.attr("split")]
    else:
        if n % count:
            raise node.error(f"dim {n} does not split into {count} equal outputs")
        sizes = [n // count] * count
    if len(sizes) != count or sum(sizes) != n or min(sizes) < 1:
        raise node.error(f"split {sizes} does not cut dim {n} into {count} non-empty outputs")
    return sizes


@converter("Split")
def convert_split(node: Node, args):
    """Split-13/18 along ``axis``: one slice per output."""
    x = args[0]
    axis = node_axis(node, x, 0)
    sizes = split_sizes(node, x.ty.shape[axis], len(node.proto.output), optional_arg(args, 1))
    outs, offset = [], 0
    for size in sizes:
        begin, end = [0] * x.ty.ndim, list(x.ty.shape)
        begin[axis], end[axis] = offset, offset + size
        outs.append(slice_expr(x, begin, end, [1] * x.ty.ndim, node.name))
        offset += size
    return outs


@converter("Gather")
def convert_gather(node: Node, args):
    """Gather-13 along ``axis``, any element type: constant indices (negative count from the end; out of
    range: one error) → ``take``; indices computed at run time (int32 / int64) → ``take_runtime``
    (ops/gather_runtime.py: negative wrap, out of range clamped)."""
    x = args[0]
    axis = node_axis(node, x, 0)
    if not isinstance(args[1], Constant):
        if args[1].ty.dtype not in ("int32", "int64"):
            raise node.error(f"indices are {args[1].ty.dtype}, not int32 or int64")
        return call("take_runtime", args[1], x, axis=axis, span=node.name)
    idx = const_value(node, args[1], "indices").astype(np.int64)
    n = x.ty.shape[axis]
    if idx.size == 0 or idx.min() < -n or idx.max() >= n:
        raise node.error(f"indices {idx.reshape(-1)[:8].tolist()} out of range for dim {n}")
    if x.ty.ndim + idx.ndim - 1 == 0:
        raise node.error("a gather to a scalar is not supported", "tinyfuse tensors have rank >= 1")
    idx = np.where(idx < 0, idx + n, idx)
    return call("take", x, indices=tuple(int(i) for i in idx.reshape(-1)), indices_shape=idx.shape, axis=axis,
                span=node.name)


@converter("Cast")
def convert_cast(node: Node, args):
    """Cast-19 between the element types tinyfuse has C types for (float32, int8/16/32/64, uint8,
    bool); same type: the input itself."""
    x = args[0]
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(node.attr("to"))).name
    if dtype in STORAGE_TYPES:
        return cast_to_storage(x, dtype, node.name)
    if dtype not in C_TYPES:
        raise node.error(f"cast to {dtype} is not supported ({', '.join(C_TYPES)})")
    return x if dtype == x.ty.dtype else call("cast", x, dtype=dtype, span=node.name)


@converter("CastLike")
def convert_cast_like(node: Node, args):
    """CastLike-15/19/21: x cast to the element type of ``target_type`` (only its type is read), as Cast;
    a constant x folds to a constant of that type."""
    x, like = args[0], args[1]
    dtype = like.ty.dtype
    if dtype not in C_TYPES:
        raise node.error(f"cast to {dtype} is not supported ({', '.join(C_TYPES)})")
    if isinstance(x, Constant):
        return Constant(x.value.astype(dtype), node.proto.output[0])
    return x if dtype == x.ty.dtype else call("cast", x, dtype=dtype, span=node.name)


@converter("Expand")
def convert_expand(node: Node, args):
    """Expand-13: x broadcast (numpy rules, in both directions) with the constant ``shape``."""
    x = args[0]
    spec = const_ints(node, args[1], "shape")
    try:
        shape = tuple(int(d) for d in np.broadcast_shapes(x.ty.shape, tuple(spec)))
    except ValueError:
        raise node.error(f"shape {spec} does not broadcast with input {list(x.ty.shape)}") from None
    return x if shape == x.ty.shape else call("broadcast_to", x, shape=shape, span=node.name)


@converter("Tile")
def convert_tile(node: Node, args):
    """Tile-13: one constant repeat count per axis."""
    x = args[0]
    reps = const_ints(node, args[1], "repeats")
    if len(reps) != x.ty.ndim or min(reps, default=1) < 1:
        raise node.error(f"repeats {reps} do not fit shape {list(x.ty.shape)} (one count >= 1 per axis)")
    return x if all(r == 1 for r in reps) else call("tile", x, reps=tuple(reps), span=node.name)


@converter("Where")
def convert_where(node: Node, args):
    """Where-16: an element-wise ``select`` (ops/select.py). A constant condition all true or all
    false is X (or Y) broadcast to the output shape; a mixed one is a uint8 weight mask; a computed
    condition is a bool tensor."""
    try:
        shape = tuple(int(d) for d in np.broadcast_shapes(*(a.ty.shape for a in args)))
    except ValueError:
        raise node.error(f"shapes {[list(a.ty.shape) for a in args]} do not broadcast") from None
    if not isinstance(args[0], Constant):
        if args[0].ty.dtype != "bool" or args[1].ty.dtype != args[2].ty.dtype:
            raise node.error(f"condition {args[0].ty.dtype}, X {args[1].ty.dtype}, Y {args[2].ty.dtype}: Where needs "
                             "a bool condition and one type for X and Y")
        return call("select", *args, span=node.name)
    cond = const_value(node, args[0], "condition").astype(bool)
    if cond.all() == cond.any():
        x = args[1] if cond.all() else args[2]
        return x if shape == x.ty.shape else call("broadcast_to", x, shape=shape, span=node.name)
    if args[1].ty.dtype != args[2].ty.dtype:
        raise node.error(f"X is {args[1].ty.dtype} and Y is {args[2].ty.dtype}; Where needs one type")
    return call("select", Constant(cond.astype(np.uint8)), args[1], args[2], span=node.name)


@converter("PRelu")
def convert_prelu(node: Node, args):
    """PRelu-16: the slope broadcasts (unidirectionally) to X; usually per channel [C, 1, 1]."""
    x, slope = args
    try:
        return call("nn.prelu", x, slope, span=node.name)
    except Exception:
        raise node.error(f"slope {list(slope.ty.shape)} does not broadcast to X {list(x.ty.shape)}") from None
