"""``take_runtime``: ONNX Gather-13 with indices computed at run time (a graph input or a tensor another
op computes); constant indices are ``take`` (ops/movement.py).

Operands, indices first (always a run-time tensor, while x may be a constant table): ``indices``
int32 or int64 of any shape, ``x`` [d0, .., dn−1] of any element type; attribute
``axis`` (0 <= axis < rank of x). Output: x.shape[:axis] + indices.shape + x.shape[axis + 1:], x's
element type; out[a, j, b] = x[a, k(indices[j]), b] over the flattened outer (a), index (j) and inner
(b) positions, N = x.shape[axis].

Index rule k(i): a negative index counts from the end (i + N, ONNX Gather-13); an index still outside
[0, N) after that — undefined in ONNX, an error in onnxruntime — is clamped to [0, N − 1] (k = 0 below,
N − 1 above), so the generated C never reads outside x whatever the input holds. No error is raised at
run time (the generated C has no error path); a model that needs one checks its indices before.
"""
from __future__ import annotations

import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType


def wrap_and_clamp(indices: np.ndarray, n: int) -> np.ndarray:
    """k(i) of the module docstring, int64, same shape as ``indices``."""
    i = np.asarray(indices, np.int64)
    return np.clip(np.where(i < 0, i + n, i), 0, n - 1)


@register_op
class TakeRuntime(OpDef):
    """Gather with run-time indices (module docstring): indices, x → x.shape[:axis] + indices.shape + ..."""
    name, pattern, num_inputs = "take_runtime", OpPattern.OPAQUE, 2
    attrs = {"axis": 0}

    def infer(self, args, attrs):
        idx, x = args
        axis = attrs["axis"]
        if not 0 <= axis < x.ndim or idx.dtype not in ("int32", "int64") or x.shape[axis] == 0:
            raise TinyfuseError(f"take_runtime: indices {idx} do not index axis {axis} of {x} (int32 or int64 "
                                "indices, a non-empty axis)")
        shape = x.shape[:axis] + tuple(idx.shape) + x.shape[axis + 1:]
        if not shape:
            raise TinyfuseError("take_runtime: a gather to a scalar is not supported (tinyfuse tensors have rank >= 1)")
        return TensorType(shape, x.dtype)

    def compute(self, indices, x, axis):
        return np.take(x, wrap_and_clamp(indices, x.shape[axis]), axis=axis)
