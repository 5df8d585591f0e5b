"""Conversions between float32 and the 16-bit float storage types (``float16`` = IEEE 754 binary16,
``bfloat16`` = the upper 16 bits of a binary32), which tinyfuse keeps at the model's inputs and
outputs only (C ``uint16_t`` bit patterns; ir.types.STORAGE_TYPES): the graph computes in float32.

Rounding is to nearest, ties to even (ONNX Cast-19 to FLOAT16 / BFLOAT16, numpy ``astype``); the C
is runtime_c/include/tinyfuse/half_io.h (tf_h2f, tf_f2h, tf_bf2f, tf_f2bf).
"""
from __future__ import annotations

import ml_dtypes  # noqa: F401  (registers numpy's 'bfloat16' dtype)
import numpy as np

from ..errors import TinyfuseError
from ..ir.op import register_op
from ..ir.types import STORAGE_TYPES, TensorType
from .elemwise import Unary


def _check(name: str, fmt: str, x: TensorType, want: str | None) -> None:
    if fmt not in STORAGE_TYPES:
        raise TinyfuseError(f"{name}: fmt {fmt} is not one of {', '.join(STORAGE_TYPES)}")
    if x.dtype != (want or fmt):
        raise TinyfuseError(f"{name}: input is {x.dtype}, not {want or fmt}")


@register_op
class HalfToFloat(Unary):
    """y (float32) = x (float16 / bfloat16 bits), exact: every such value is a float32 value."""
    name, c_expr = "half_to_float", "half_to_float"
    attrs = {"fmt": "float16"}

    def infer(self, args, attrs):
        _check(self.name, attrs["fmt"], args[0], None)
        return TensorType(args[0].shape, "float32")

    def compute(self, x, fmt):
        return np.asarray(x).astype(fmt).astype(np.float32)


@register_op
class FloatToHalf(Unary):
    """y (float16 / bfloat16 bits) = x (float32) rounded to nearest even (ONNX Cast-19, saturate
    does not apply: out-of-range values become infinity)."""
    name, c_expr = "float_to_half", "float_to_half"
    attrs = {"fmt": "float16"}

    def infer(self, args, attrs):
        _check(self.name, attrs["fmt"], args[0], "float32")
        return TensorType(args[0].shape, attrs["fmt"])

    def compute(self, x, fmt):
        return np.asarray(x, np.float32).astype(fmt)


@register_op
class RoundHalf(Unary):
    """y (float32) = x rounded to the nearest float16 / bfloat16 value (ties to even): ONNX Cast to
    FLOAT16 / BFLOAT16 inside a graph that computes in float32."""
    name, c_expr = "round_half", "round_half"
    attrs = {"fmt": "float16"}

    def infer(self, args, attrs):
        _check(self.name, attrs["fmt"], args[0], "float32")
        return args[0]

    def compute(self, x, fmt):
        return np.asarray(x, np.float32).astype(fmt).astype(np.float32)
