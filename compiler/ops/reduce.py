"""mean: average over ``axes`` (ONNX ReduceMean-13 with an ``axes`` attribute, ReduceMean-18 with an
``axes`` input; the frontend resolves both to sorted non-negative axes). ``keepdims`` keeps each
reduced axis as size 1."""
import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType


@register_op
class Mean(OpDef):
    name, pattern, num_inputs = "mean", OpPattern.COMM_REDUCE, 1
    attrs = {"axes": (), "keepdims": True}

    def infer(self, args, attrs):
        (x,) = args
        axes = tuple(attrs["axes"])
        if not axes or sorted(set(axes)) != list(axes) or axes[0] < 0 or axes[-1] >= x.ndim:
            raise TinyfuseError(f"mean: axes {list(axes)} must be sorted, distinct and within rank {x.ndim}")
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)
                      if attrs["keepdims"] or i not in axes)
        return TensorType(shape, x.dtype)

    def compute(self, x, axes, keepdims):
        return np.mean(x.astype(np.float64), axis=tuple(axes), keepdims=bool(keepdims)).astype(x.dtype)
