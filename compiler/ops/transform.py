"""Injective data movement: reshape (a view: no kernel, no copy), transpose and concatenate."""
import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType


@register_op
class Reshape(OpDef):
    """reshape(x, newshape): ``newshape`` fully resolved (the frontend handles ONNX 0 / -1)."""
    name, pattern, num_inputs = "reshape", OpPattern.INJECTIVE, 1
    is_view, strided_view, moves_data = True, True, True
    attrs = {"newshape": ()}

    def infer(self, args, attrs):
        (x,) = args
        new = tuple(attrs["newshape"])
        if int(np.prod(new, dtype=np.int64)) != x.size:
            raise TinyfuseError(f"reshape: cannot reshape {x.shape} ({x.size} elements) to {new}")
        return TensorType(new, x.dtype)

    def compute(self, x, newshape):
        return x.reshape(newshape)

    def is_identity(self, node):
        return node.args[0].ty.shape == node.ty.shape


@register_op
class Transpose(OpDef):
    name, pattern, num_inputs = "transpose", OpPattern.INJECTIVE, 1
    strided_view, moves_data = True, True
    attrs = {"axes": ()}

    def infer(self, args, attrs):
        (x,) = args
        axes = tuple(attrs["axes"])
        if sorted(axes) != list(range(x.ndim)):
            raise TinyfuseError(f"transpose: perm {axes} is not a permutation of {x.ndim} axes")
        return TensorType(tuple(x.shape[a] for a in axes), x.dtype)

    def compute(self, x, axes):
        return np.ascontiguousarray(x.transpose(axes))

    def is_identity(self, node):
        return tuple(node.attrs["axes"]) == tuple(range(node.ty.ndim))


@register_op
class Concatenate(OpDef):
    """concatenate(x0, x1, ..., axis): ONNX Concat-13. All operands have the same rank and dtype
    and agree on every dim but ``axis`` (non-negative). A standalone kernel: each operand is
    copied into its slab of the output."""
    name, pattern, num_inputs = "concatenate", OpPattern.INJECTIVE, None
    attrs = {"axis": 0}

    def infer(self, args, attrs):
        axis = attrs["axis"]
        first = args[0]
        if not 0 <= axis < first.ndim:
            raise TinyfuseError(f"concatenate: axis {axis} out of range for rank {first.ndim}")
        for a in args[1:]:
            same = a.ndim == first.ndim and all(d == e for i, (d, e) in enumerate(zip(a.shape, first.shape))
                                                 if i != axis)
            if not same or a.dtype != first.dtype:
                raise TinyfuseError(f"concatenate: operands {[(list(t.shape), t.dtype) for t in args]} "
                                    f"disagree outside axis {axis}")
        shape = list(first.shape)
        shape[axis] = sum(a.shape[axis] for a in args)
        return TensorType(tuple(shape), first.dtype)

    def compute(self, *xs, axis):
        return np.concatenate(xs, axis=axis)
