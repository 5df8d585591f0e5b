"""Comparisons, logical ops and float classification: element-wise ops with a bool result (C type
uint8_t, 0 or 1), numpy (ONNX multidirectional) broadcasting.

Sources: ONNX Equal-19, Greater-13, Less-13, GreaterOrEqual-16, LessOrEqual-16, And-7, Or-7, Xor-7,
Not-1, IsNaN-20, IsInf-20; TFLM comparisons.cc (float32, int32, int8 without quantization, bool:
the values compared as they are; a quantized int8 comparison is qnn.compare, ops/qcompare.py),
logical.cc, elementwise.cc LOGICAL_NOT. Comparisons take operands of one dtype, the logical ops
bool operands (a nonzero byte is true).
"""
from __future__ import annotations

import numpy as np

from ..errors import TinyfuseError
from ..ir.op import register_op
from ..ir.types import TensorType
from .elemwise import Binary, Unary, broadcast_type


class Predicate(Binary):
    """A bool result of two operands of one dtype."""

    def infer(self, args, attrs):
        if args[0].dtype != args[1].dtype:
            raise TinyfuseError(f"{self.name}: operand dtypes differ ({args[0].dtype}, {args[1].dtype})")
        return TensorType(broadcast_type(args, self.name).shape, "bool")

    def compute(self, a, b):
        return self.f(a, b).astype(bool)


COMPARISONS = {"equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
               "greater_equal": np.greater_equal, "less": np.less, "less_equal": np.less_equal}
LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}

for _name, _f in {**COMPARISONS, **LOGICAL}.items():
    register_op(type(_name.title().replace("_", ""), (Predicate,),
                     {"name": _name, "c_expr": _name, "f": staticmethod(_f),
                      "__doc__": f"{_name} of the two operands, a bool tensor (module doc)."}))


class Classify(Unary):
    """A bool result of one operand."""

    def infer(self, args, attrs):
        return TensorType(args[0].shape, "bool")

    def compute(self, x, **attrs):
        return self.f(x, **attrs).astype(bool)


@register_op
class LogicalNot(Classify):
    """!x (ONNX Not-1, TFLite LOGICAL_NOT)."""
    name, c_expr = "logical_not", "logical_not"
    f = staticmethod(lambda x: np.logical_not(x))


@register_op
class IsNaN(Classify):
    """x is NaN (ONNX IsNaN-20)."""
    name, c_expr = "isnan", "isnan"
    f = staticmethod(np.isnan)


@register_op
class IsInf(Classify):
    """x is +inf (detect_positive) or −inf (detect_negative) (ONNX IsInf-20)."""
    name, c_expr = "isinf", "isinf"
    attrs = {"detect_negative": 1, "detect_positive": 1}
    f = staticmethod(lambda x, detect_negative, detect_positive:
                     (np.isposinf(x) & bool(detect_positive)) | (np.isneginf(x) & bool(detect_negative)))
