"""Ops that index with a tensor computed at run time, and scatters with constant indices.

- ``gather_index`` (x, indices): ``mode`` "take" (ONNX Gather-13 / TFLite GATHER and EMBEDDING_LOOKUP
  with run-time indices, batch_dims 0), "nd" (ONNX GatherND-13 with ``batch_dims``, TFLite GATHER_ND)
  or "elements" (ONNX GatherElements-13). A negative index counts from the end (ONNX); an index still
  outside the axis is clamped into it (ONNX and TFLM reject such inputs at run time; a C kernel may not
  read outside its buffer).
- ``one_hot`` (indices): ONNX OneHot-11 with a constant depth and values: y = on where the (wrapped)
  index equals the position along the new ``axis``, else off; indices outside [−depth, depth) give a
  row of off.
- ``topk`` (x): ONNX TopK-11 with a constant k: the k largest (smallest) along ``axis``, sorted, ties
  by the lower index; ``output`` "values" or "indices" (each output its own op and kernel).
- ``scatter`` (data, updates): ONNX ScatterND-18 / ScatterElements-18 with constant indices, resolved by
  the frontend to ``table``: the flat destination of every update element in its row-major order; the
  updates apply in that order with ``reduction`` none (the last write wins), add, mul, max or min.
- ``dynamic_update_slice`` (operand, update, start): TFLite DYNAMIC_UPDATE_SLICE: operand with update
  written from run-time start indices, each clamped to [0, dim − update dim] (TFLM's clamp).

Data movement on int8 needs no arithmetic; legalize_qdq's rules for them (passes/indexing_qdq.py) keep
the indices operand as it is.
"""
from __future__ import annotations

import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType

INDEX_DTYPES = ("int32", "int64")
GATHER_MODES = ("take", "nd", "elements")
SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")


def _wrap(idx, n):
    idx = np.asarray(idx, np.int64)
    return np.clip(np.where(idx < 0, idx + n, idx), 0, n - 1)


@register_op
class GatherIndex(OpDef):
    """Gather with run-time indices (module doc)."""
    name, pattern, num_inputs = "gather_index", OpPattern.OPAQUE, 2
    attrs = {"mode": "take", "axis": 0, "batch_dims": 0}

    def infer(self, args, attrs):
        x, idx = args
        mode, axis, b = attrs["mode"], attrs["axis"], attrs["batch_dims"]
        bad = mode not in GATHER_MODES or idx.dtype not in INDEX_DTYPES
        if mode == "take":
            bad = bad or not 0 <= axis < x.ndim
            shape = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
        elif mode == "elements":
            bad = bad or not 0 <= axis < x.ndim or idx.ndim != x.ndim
            shape = idx.shape
        else:
            k = idx.shape[-1] if idx.ndim else 0
            bad = bad or idx.ndim < 1 or not 1 <= k <= x.ndim - b or x.shape[:b] != idx.shape[:b]
            shape = idx.shape[:-1] + x.shape[b + k:]
        if bad:
            raise TinyfuseError(f"gather_index: {mode} of {x} by {idx} (axis {axis}, batch_dims {b}) is invalid")
        return TensorType(shape, x.dtype)

    def compute(self, x, idx, mode, axis, batch_dims):
        if mode == "take":
            return np.take(x, _wrap(idx, x.shape[axis]), axis=axis)
        if mode == "elements":
            return np.take_along_axis(x, _wrap(idx, x.shape[axis]), axis=axis)
        b, k = batch_dims, idx.shape[-1]
        wrapped = np.stack([_wrap(idx[..., j], x.shape[b + j]) for j in range(k)], -1)
        bshape = x.shape[:b]
        out = np.empty(idx.shape[:-1] + x.shape[b + k:], x.dtype)
        for pos in np.ndindex(*idx.shape[:-1]):
            out[pos] = x[pos[:b] + tuple(wrapped[pos])] if bshape else x[tuple(wrapped[pos])]
        return out


@register_op
class OneHot(OpDef):
    """ONNX OneHot with constant depth and (off, on) values (module doc)."""
    name, pattern, num_inputs = "one_hot", OpPattern.OPAQUE, 1
    attrs = {"depth": 1, "axis": -1, "on": 1.0, "off": 0.0, "dtype": "float32"}

    def infer(self, args, attrs):
        (idx,) = args
        if idx.dtype not in (*INDEX_DTYPES, "float32") or attrs["depth"] < 1 or not 0 <= attrs["axis"] <= idx.ndim:
            raise TinyfuseError(f"one_hot: indices {idx}, depth {attrs['depth']}, axis {attrs['axis']} invalid")
        a = attrs["axis"]
        return TensorType(idx.shape[:a] + (attrs["depth"],) + idx.shape[a:], attrs["dtype"])

    def compute(self, idx, depth, axis, on, off, dtype):
        i = np.trunc(np.asarray(idx, np.float64)).astype(np.int64)
        i = np.where(i < 0, i + depth, i)
        pos = np.arange(depth).reshape((depth,) + (1,) * (idx.ndim - axis))
        return np.where(np.expand_dims(i, axis) == pos, on, off).astype(dtype)


@register_op
class TopK(OpDef):
    """ONNX TopK with a constant k (module doc); ``dtype`` of the indices output (int64)."""
    name, pattern, num_inputs = "topk", OpPattern.OPAQUE, 1
    attrs = {"k": 1, "axis": -1, "largest": True, "output": "values", "dtype": "int64"}

    def infer(self, args, attrs):
        (x,) = args
        a = attrs["axis"]
        if not 0 <= a < x.ndim or not 1 <= attrs["k"] <= x.shape[a] or attrs["output"] not in ("values", "indices"):
            raise TinyfuseError(f"topk: k {attrs['k']} / axis {a} invalid for {x}")
        shape = x.shape[:a] + (attrs["k"],) + x.shape[a + 1:]
        return TensorType(shape, x.dtype if attrs["output"] == "values" else attrs["dtype"])

    def compute(self, x, k, axis, largest, output, dtype):
        v = np.moveaxis(x, axis, -1)
        key = -v.astype(np.float64) if largest else v.astype(np.float64)
        order = np.argsort(key, axis=-1, kind="stable")[..., :k]
        if output == "indices":
            return np.ascontiguousarray(np.moveaxis(order, -1, axis)).astype(dtype)
        return np.ascontiguousarray(np.moveaxis(np.take_along_axis(v, order, -1), -1, axis))


@register_op
class Scatter(OpDef):
    """data with the update elements written at constant flat positions ``table`` (module doc)."""
    name, pattern, num_inputs = "scatter", OpPattern.OPAQUE, 2
    attrs = {"table": (), "reduction": "none"}

    def infer(self, args, attrs):
        data, upd = args
        t = attrs["table"]
        if (attrs["reduction"] not in SCATTER_REDUCTIONS or len(t) != upd.size or upd.dtype != data.dtype
                or any(not 0 <= i < data.size for i in t)):
            raise TinyfuseError(f"scatter: {len(t)} positions / reduction {attrs['reduction']} do not fit data {data} "
                                f"and updates {upd}")
        return data

    def compute(self, data, upd, table, reduction):
        out = np.array(data, copy=True).reshape(-1)
        for pos, u in zip(table, np.asarray(upd).reshape(-1)):
            out[pos] = {"none": lambda a, b: b, "add": lambda a, b: a + b, "mul": lambda a, b: a * b,
                        "max": max, "min": min}[reduction](out[pos], u)
        return out.reshape(data.shape)


@register_op
class DynamicUpdateSlice(OpDef):
    """TFLite DYNAMIC_UPDATE_SLICE with run-time start indices (module doc)."""
    name, pattern, num_inputs = "dynamic_update_slice", OpPattern.OPAQUE, 3
    attrs: dict = {}

    def infer(self, args, attrs):
        x, upd, start = args
        if (upd.ndim != x.ndim or upd.dtype != x.dtype or start.dtype not in INDEX_DTYPES or start.size != x.ndim
                or any(u > d for u, d in zip(upd.shape, x.shape))):
            raise TinyfuseError(f"dynamic_update_slice: update {upd} / start {start} do not fit operand {x}")
        return x

    def compute(self, x, upd, start):
        out = np.array(x, copy=True)
        s = [int(min(max(int(b), 0), d - u)) for b, d, u in zip(np.asarray(start).reshape(-1), x.shape, upd.shape)]
        out[tuple(slice(b, b + u) for b, u in zip(s, upd.shape))] = upd
        return out
