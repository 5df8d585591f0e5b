"""nn.softmax over one axis (ONNX Softmax-13 semantics). Models of opset <= 12 reach the frontend
upgraded by onnx.version_converter, which writes Softmax-11's coerce-to-2D form as
Shape + Flatten(axis) → Softmax(axis=-1) → Reshape."""
import numpy as np

from ..ir.op import OpDef, OpPattern, register_op


@register_op
class Softmax(OpDef):
    name, pattern, num_inputs = "nn.softmax", OpPattern.OPAQUE, 1
    cost_family = "softmax"
    attrs = {"axis": -1}

    def infer(self, args, attrs):
        return args[0]

    def compute(self, x, axis):
        e = np.exp(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
        return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)
