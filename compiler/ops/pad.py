"""nn.pad: constant padding (ONNX Pad-13/18/19 with mode='constant').

``pad_width`` is one (before, after) pair per axis. A negative amount crops, as ONNX allows, so an
output element either copies the input element at ``out - before`` or is ``pad_value``.
"""
import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType


@register_op
class Pad(OpDef):
    name, pattern, num_inputs = "nn.pad", OpPattern.INJECTIVE, 1
    attrs = {"pad_width": (), "pad_value": 0.0}

    def infer(self, args, attrs):
        (x,) = args
        pw = attrs["pad_width"]
        if len(pw) != x.ndim:
            raise TinyfuseError(f"nn.pad: {len(pw)} (before, after) pairs for a rank-{x.ndim} input")
        shape = tuple(d + b + a for d, (b, a) in zip(x.shape, pw))
        if min(shape, default=1) <= 0:
            raise TinyfuseError(f"nn.pad: pads {[list(p) for p in pw]} leave an empty output {list(shape)} "
                                f"from input {list(x.shape)}")
        return TensorType(shape, x.dtype)

    def compute(self, x, pad_width, pad_value):
        crop = tuple(slice(max(-b, 0), d - max(-a, 0)) for d, (b, a) in zip(x.shape, pad_width))
        grow = [(max(b, 0), max(a, 0)) for b, a in pad_width]
        return np.pad(x[crop], grow, constant_values=np.asarray(pad_value).astype(x.dtype))
