"""ONNX indexing converters: GatherElements and GatherND (run-time or constant indices), ScatterND and
ScatterElements with constant indices (every reduction), OneHot with a constant depth and values, and
Trilu (a constant mask). Registered by importing this module."""
from __future__ import annotations

import numpy as np

from ...ir import Constant, Expr, call
from .registry import Node, const_value, converter, node_axis, optional_arg


def _indices(node: Node, e: Expr, what: str = "indices") -> Expr:
    if e.ty.dtype not in ("int32", "int64"):
        raise node.error(f"{what} are {e.ty.dtype}; int32 or int64 expected")
    return e


def _wrapped(node: Node, idx: np.ndarray, n, what: str = "indices") -> np.ndarray:
    """Constant indices with negative ones counted from the end; an index outside [-n, n) is an error."""
    idx = np.asarray(idx, np.int64)
    n = np.asarray(n, np.int64)
    if idx.size and (np.any(idx < -n) or np.any(idx >= n)):
        raise node.error(f"{what} {idx.reshape(-1)[:8].tolist()} out of range for dims {np.unique(n).tolist()}")
    return np.where(idx < 0, idx + n, idx)


@converter("GatherElements")
def convert_gather_elements(node: Node, args):
    """GatherElements-13: out[i] = x[i with i[axis] = indices[i]]."""
    x, idx = args[0], _indices(node, args[1])
    axis = node_axis(node, x, 0)
    if idx.ty.ndim != x.ty.ndim or any(i > d for k, (i, d) in enumerate(zip(idx.ty.shape, x.ty.shape)) if k != axis):
        raise node.error(f"indices {list(idx.ty.shape)} do not fit data {list(x.ty.shape)} on axis {axis}")
    return call("gather_index", x, idx, mode="elements", axis=axis, span=node.name)


@converter("GatherND")
def convert_gather_nd(node: Node, args):
    """GatherND-13 with ``batch_dims``: the last indices axis indexes the first dims after the batch."""
    x, idx = args[0], _indices(node, args[1])
    b = node.attr("batch_dims", 0)
    if idx.ty.ndim < 1 or not 0 <= b < min(x.ty.ndim, idx.ty.ndim) or idx.ty.shape[:b] != x.ty.shape[:b] \
            or not 1 <= idx.ty.shape[-1] <= x.ty.ndim - b:
        raise node.error(f"indices {list(idx.ty.shape)} with batch_dims {b} do not fit data {list(x.ty.shape)}")
    return call("gather_index", x, idx, mode="nd", batch_dims=b, span=node.name)


def _scatter(node: Node, data: Expr, updates: Expr, table: np.ndarray):
    reduction = node.attr("reduction", "none")
    if reduction not in ("none", "add", "mul", "max", "min"):
        raise node.error(f"reduction '{reduction}' is not supported")
    if isinstance(data, Constant):
        raise node.error("data is a constant and updates are computed; tinyfuse scatters into a computed tensor")
    if updates.ty.dtype != data.ty.dtype:
        raise node.error(f"updates are {updates.ty.dtype}, data {data.ty.dtype}")
    return call("scatter", data, updates, table=tuple(int(t) for t in table.reshape(-1)), reduction=reduction,
                span=node.name)


@converter("ScatterND")
def convert_scatter_nd(node: Node, args):
    """ScatterND-18 with constant indices [..., K]: each index tuple selects a slice data[i0..iK-1]."""
    data, updates = args[0], args[2]
    idx = const_value(node, args[1], "indices").astype(np.int64)
    shape = data.ty.shape
    k = idx.shape[-1] if idx.ndim else 0
    if idx.ndim < 1 or not 1 <= k <= len(shape) or updates.ty.shape != idx.shape[:-1] + shape[k:]:
        raise node.error(f"indices {list(idx.shape)} and updates {list(updates.ty.shape)} do not fit data {list(shape)}")
    idx = _wrapped(node, idx, np.array(shape[:k]))
    strides = np.array([int(np.prod(shape[i + 1:])) for i in range(len(shape))], np.int64)
    base = (idx * strides[:k]).sum(-1).reshape(-1, 1)
    inner = np.arange(int(np.prod(shape[k:])), dtype=np.int64).reshape(1, -1)
    return _scatter(node, data, updates, base + inner)


@converter("ScatterElements")
def convert_scatter_elements(node: Node, args):
    """ScatterElements-18 with constant indices: update i goes to data[i with i[axis] = indices[i]]."""
    data, updates = args[0], args[2]
    idx = const_value(node, args[1], "indices").astype(np.int64)
    axis = node_axis(node, data, 0)
    shape = data.ty.shape
    if idx.shape != updates.ty.shape or idx.ndim != len(shape):
        raise node.error(f"indices {list(idx.shape)} and updates {list(updates.ty.shape)} do not fit data {list(shape)}")
    idx = _wrapped(node, idx, shape[axis])
    coords = list(np.indices(idx.shape, np.int64))
    coords[axis] = idx
    return _scatter(node, data, updates, np.ravel_multi_index(coords, shape))


@converter("OneHot")
def convert_one_hot(node: Node, args):
    """OneHot-11 with a constant depth and values [off, on]; indices may be float (truncated)."""
    idx = args[0]
    depth = int(np.asarray(const_value(node, args[1], "depth")).reshape(-1)[0])
    values = const_value(node, args[2], "values").reshape(-1)
    rank = idx.ty.ndim + 1
    axis = node.attr("axis", -1)
    if depth < 1 or values.size != 2 or not -rank <= axis < rank:
        raise node.error(f"depth {depth}, values {values.tolist()} or axis {axis} invalid")
    dtype = str(values.dtype)
    if dtype not in ("float32", "int32", "int64", "int8") or idx.ty.dtype not in ("int32", "int64", "float32"):
        raise node.error(f"values {dtype} / indices {idx.ty.dtype} are not supported")
    return call("one_hot", idx, depth=depth, axis=axis % rank, off=values[0].item(), on=values[1].item(), dtype=dtype,
                span=node.name)


@converter("Trilu")
def convert_trilu(node: Node, args):
    """Trilu-14: keep the upper (lower) triangle of the last two axes from diagonal k, zero the rest:
    a select with a constant mask."""
    x = args[0]
    if x.ty.ndim < 2:
        raise node.error(f"input {list(x.ty.shape)} needs rank >= 2")
    k_arg = optional_arg(args, 1)
    k = int(const_value(node, k_arg, "k").reshape(-1)[0]) if k_arg is not None else 0
    n, m = x.ty.shape[-2:]
    diff = np.arange(m)[None, :] - np.arange(n)[:, None]
    mask = diff >= k if node.attr("upper", 1) else diff <= k
    if mask.all():
        return x
    zero = Constant(np.zeros((1,) * x.ty.ndim, x.ty.dtype))
    return call("select", Constant(mask.astype(np.uint8)), x, zero, span=node.name)
