"""Element-wise ops: unary activations and numpy-broadcasting binary arithmetic.

Every op here has numpy broadcasting semantics over all its operands (ONNX "multidirectional
broadcasting", ONNX Operators: Add-14 etc.), so lowering can index any operand from the output index.
``c_expr`` names the macro in ``codegen_templates/expr/elemwise.c.j2`` that prints the C expression.
"""
from __future__ import annotations

import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType


def broadcast_type(args: list[TensorType], name: str) -> TensorType:
    try:
        shape = np.broadcast_shapes(*(a.shape for a in args))
    except ValueError:
        raise TinyfuseError(f"{name}: operand shapes {[a.shape for a in args]} do not broadcast") from None
    return TensorType(shape, args[0].dtype)


class Unary(OpDef):
    pattern = OpPattern.ELEMWISE
    num_inputs = 1

    def infer(self, args, attrs):
        return args[0]

    def compute(self, x, **attrs):
        return self.f(x.astype(np.float64), **attrs).astype(x.dtype)


class Binary(OpDef):
    pattern = OpPattern.BROADCAST
    num_inputs = 2

    def infer(self, args, attrs):
        return broadcast_type(args, self.name)

    def compute(self, a, b):
        return self.f(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)


@register_op
class Copy(Unary):
    """y = x, materialised: the frontend puts it on a graph output that would otherwise share its
    memory with a model input or another output (ONNX Identity on an output, a reshaped input)."""
    name, c_expr = "copy", "copy"
    f = staticmethod(lambda x: x)


@register_op
class Relu(Unary):
    name, c_expr = "nn.relu", "relu"
    clamps = True
    f = staticmethod(lambda x: np.maximum(x, 0))


@register_op
class Clip(Unary):
    """clip(x, a_min, a_max); a bound of None is absent (ONNX Clip-13 with an empty input)."""
    name, c_expr = "clip", "clip"
    clamps, cost_feature, cost_family = True, True, "elemwise"
    attrs = {"a_min": None, "a_max": None}

    @staticmethod
    def f(x, a_min, a_max):
        return np.clip(x, -np.inf if a_min is None else a_min, np.inf if a_max is None else a_max)

    def is_identity(self, node):
        return node.attrs["a_min"] is None and node.attrs["a_max"] is None


@register_op
class LeakyRelu(Unary):
    name, c_expr = "nn.leaky_relu", "leaky_relu"
    lut = True
    attrs = {"alpha": 0.01}
    f = staticmethod(lambda x, alpha: np.where(x >= 0, x, x * alpha))


@register_op
class Sigmoid(Unary):
    name, c_expr = "sigmoid", "sigmoid"
    lut = True
    f = staticmethod(lambda x: 1.0 / (1.0 + np.exp(-x)))


@register_op
class Tanh(Unary):
    name, c_expr = "tanh", "tanh"
    lut = True
    f = staticmethod(np.tanh)


@register_op
class HardSigmoid(Unary):
    """max(0, min(1, alpha*x + beta)) (ONNX HardSigmoid-6)."""
    name, c_expr = "hard_sigmoid", "hard_sigmoid"
    lut = True
    attrs = {"alpha": 0.2, "beta": 0.5}
    f = staticmethod(lambda x, alpha, beta: np.clip(alpha * x + beta, 0, 1))


@register_op
class HardSwish(Unary):
    """x * max(0, min(1, x/6 + 1/2)) (ONNX HardSwish-14)."""
    name, c_expr = "hard_swish", "hard_swish"
    lut = True
    f = staticmethod(lambda x: x * np.clip(x / 6.0 + 0.5, 0, 1))


@register_op
class Add(Binary):
    name, c_expr = "add", "add"
    cost_feature, cost_family = True, "elemwise"
    f = staticmethod(np.add)


@register_op
class Subtract(Binary):
    name, c_expr = "subtract", "subtract"
    f = staticmethod(np.subtract)


@register_op
class Multiply(Binary):
    name, c_expr = "multiply", "multiply"
    cost_family = "elemwise"
    f = staticmethod(np.multiply)


@register_op
class Divide(Binary):
    name, c_expr = "divide", "divide"
    f = staticmethod(np.divide)


@register_op
class BatchNorm(OpDef):
    """Inference batch norm: (x - mean) / sqrt(var + epsilon) * gamma + beta (ONNX
    BatchNormalization-15). The four parameters are broadcastable to x (the frontend reshapes
    them from [C] to [1, C, 1, 1]); ``fold_batchnorm`` normally removes this op."""
    name, c_expr = "nn.batch_norm", "batch_norm"
    pattern = OpPattern.BROADCAST
    num_inputs = 5
    attrs = {"epsilon": 1e-5}

    def infer(self, args, attrs):
        return broadcast_type(args, self.name)

    def compute(self, x, gamma, beta, mean, var, epsilon):
        y = (x.astype(np.float64) - mean) / np.sqrt(var.astype(np.float64) + epsilon) * gamma + beta
        return y.astype(x.dtype)
