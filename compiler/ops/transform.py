"""Injective data movement: reshape (a view: no kernel, no copy) and transpose."""
import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType


@register_op
class Reshape(OpDef):
    """reshape(x, newshape): ``newshape`` fully resolved (the frontend handles ONNX 0 / -1)."""
    name, pattern, num_inputs = "reshape", OpPattern.INJECTIVE, 1
    attrs = {"newshape": ()}

    def infer(self, args, attrs):
        (x,) = args
        new = tuple(attrs["newshape"])
        if int(np.prod(new, dtype=np.int64)) != x.size:
            raise TinyfuseError(f"reshape: cannot reshape {x.shape} ({x.size} elements) to {new}")
        return TensorType(new, x.dtype)

    def compute(self, x, newshape):
        return x.reshape(newshape)


@register_op
class Transpose(OpDef):
    name, pattern, num_inputs = "transpose", OpPattern.INJECTIVE, 1
    attrs = {"axes": ()}

    def infer(self, args, attrs):
        (x,) = args
        axes = tuple(attrs["axes"])
        if sorted(axes) != list(range(x.ndim)):
            raise TinyfuseError(f"transpose: perm {axes} is not a permutation of {x.ndim} axes")
        return TensorType(tuple(x.shape[a] for a in axes), x.dtype)

    def compute(self, x, axes):
        return np.ascontiguousarray(x.transpose(axes))
