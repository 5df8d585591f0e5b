"""Strided views and slice_axis.

A *view* ``(shape, strides, offset)`` (strides and offset in elements) reads a logical tensor of
``shape`` out of another tensor's flat buffer: ``t[i] = flat[offset + Σ_d i_d · strides_d]``. Reshape,
transpose and slice_axis of a view are views again (reshape only when the merged dims are
contiguous, as numpy's no-copy reshape); ``fold_views`` uses this to let a kernel read through a
chain of data-movement ops instead of running a copy kernel for each.

``slice_axis(x, axis, begin, end)`` (MXNet's name; ONNX Slice with one axis and step 1) is an op of
its own: a copy kernel when no consumer reads it as a view. It splits a horizontally fused kernel's
output into its branches.
"""
from __future__ import annotations

import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType

View = tuple  # (shape, strides, offset)


def contiguous(shape) -> View:
    shape = tuple(int(d) for d in shape)
    strides = tuple(int(s) for s in np.cumprod((1,) + shape[:0:-1])[::-1]) if shape else ()
    return shape, strides, 0


def transpose_view(v: View, axes) -> View:
    shape, strides, offset = v
    return tuple(shape[a] for a in axes), tuple(strides[a] for a in axes), offset


def slice_view(v: View, axis: int, begin: int, end: int) -> View:
    shape, strides, offset = v
    return shape[:axis] + (end - begin,) + shape[axis + 1:], strides, offset + begin * strides[axis]


def reshape_view(v: View, new_shape) -> View | None:
    """The view of ``v`` reshaped to ``new_shape`` without a copy, or None when the dims it merges are
    not contiguous in memory (numpy's _attempt_nocopy_reshape)."""
    shape, strides, offset = v
    new_shape = tuple(int(d) for d in new_shape)
    old = [(d, s) for d, s in zip(shape, strides) if d != 1]
    new = [i for i, d in enumerate(new_shape) if d != 1]
    out = [0] * len(new_shape)          # size-1 dims: stride 0 (their index is always 0)
    i = j = 0
    while i < len(old) and j < len(new):
        i0, j0 = i, j
        po, pn = old[i][0], new_shape[new[j]]
        while po != pn:
            if po < pn:
                i += 1
                po *= old[i][0]
            else:
                j += 1
                pn *= new_shape[new[j]]
        if any(old[k][1] != old[k + 1][1] * old[k + 1][0] for k in range(i0, i)):
            return None
        stride = old[i][1]
        for k in range(j, j0 - 1, -1):
            out[new[k]] = stride
            stride *= new_shape[new[k]]
        i, j = i + 1, j + 1
    return new_shape, tuple(out), offset


def view_extent(v: View) -> int:
    """1 + the largest flat index the view reads (0 for an empty view)."""
    shape, strides, offset = v
    if any(d == 0 for d in shape):
        return 0
    return offset + sum((d - 1) * s for d, s in zip(shape, strides)) + 1


def read_view(x: np.ndarray, v: View | None) -> np.ndarray:
    """The logical tensor ``v`` reads from ``x`` (x itself when v is None)."""
    if v is None:
        return x
    shape, strides, offset = v
    flat = np.ascontiguousarray(x).reshape(-1)[offset:]
    return np.lib.stride_tricks.as_strided(flat, shape, [s * flat.itemsize for s in strides], writeable=False)


def check_view(v: View | None, operand: TensorType, what: str) -> tuple[int, ...]:
    """The logical shape of operand ``what`` read through ``v``; raises if the view leaves the buffer."""
    if v is None:
        return operand.shape
    shape, strides, offset = v
    if len(shape) != len(strides) or offset < 0 or min(strides, default=0) < 0 or view_extent(v) > operand.size:
        raise TinyfuseError(f"{what}: view {v} does not fit in an operand of shape {list(operand.shape)}")
    return tuple(shape)


@register_op
class SliceAxis(OpDef):
    """x[..., begin:end, ...] along ``axis`` (non-negative; step 1)."""
    name, pattern, num_inputs = "slice_axis", OpPattern.INJECTIVE, 1
    strided_view, moves_data = True, True
    attrs = {"axis": 0, "begin": 0, "end": 0}

    def infer(self, args, attrs):
        (x,) = args
        axis, begin, end = attrs["axis"], attrs["begin"], attrs["end"]
        if not 0 <= axis < x.ndim or not 0 <= begin < end <= x.shape[axis]:
            raise TinyfuseError(f"slice_axis: [{begin}:{end}] on axis {axis} is outside shape {list(x.shape)}")
        return TensorType(x.shape[:axis] + (end - begin,) + x.shape[axis + 1:], x.dtype)

    def compute(self, x, axis, begin, end):
        return np.ascontiguousarray(np.take(x, np.arange(begin, end), axis=axis))
