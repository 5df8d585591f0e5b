"""Binary element-wise arithmetic beyond add/subtract/multiply/divide, with numpy (ONNX
multidirectional) broadcasting: power, maximum, minimum, floor_divide, floor_mod, trunc_mod,
squared_difference.

The result has the first operand's dtype (ONNX Pow-15: the type of X; the others take one type).
Integer tensors compute in integers (``compute`` in int64, wrapped to the dtype as C does), floats
in float64 then float32. Sources: ONNX Pow-15, Max-13, Min-13, Mod-13; TFLM maximum_minimum.cc
(el1 > el2 ? el1 : el2, every type), floor_div.h (floor of the double quotient), floor_mod.h
(fmod, then + divisor when the signs differ), squared_difference.cc.
"""
from __future__ import annotations

import numpy as np

from ..errors import TinyfuseError
from ..ir.op import register_op
from .elemwise import Binary, broadcast_type


def _is_int(a: np.ndarray) -> bool:
    return a.dtype.kind in "iub"


class SameType(Binary):
    """Both operands of one dtype (checked), the result of that dtype."""

    def infer(self, args, attrs):
        if args[0].dtype != args[1].dtype:
            raise TinyfuseError(f"{self.name}: operand dtypes differ ({args[0].dtype}, {args[1].dtype})")
        return broadcast_type(args, self.name)

    def compute(self, a, b):
        if _is_int(a):
            return self.f_int(a.astype(np.int64), b.astype(np.int64)).astype(a.dtype)
        return self.f(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)


@register_op
class Power(Binary):
    """a^b (ONNX Pow-15): the result has a's dtype, b may be of another type (an integer exponent of
    a float base, a float exponent of an integer base: computed in double, then truncated)."""
    name, c_expr = "power", "power"

    def infer(self, args, attrs):
        return broadcast_type(args, self.name)

    def compute(self, a, b):
        if _is_int(a) and _is_int(b):
            return np.power(a.astype(np.int64), b.astype(np.int64)).astype(a.dtype)
        return np.power(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)


@register_op
class Maximum(SameType):
    """a > b ? a : b (TFLM MAXIMUM on float32/int8/int32 alike: int8 compares the raw bytes; ONNX Max-13)."""
    name, c_expr = "maximum", "maximum"
    f = f_int = staticmethod(lambda a, b: np.where(a > b, a, b))


@register_op
class Minimum(SameType):
    """a < b ? a : b (TFLM MINIMUM; ONNX Min-13)."""
    name, c_expr = "minimum", "minimum"
    f = f_int = staticmethod(lambda a, b: np.where(a < b, a, b))


def _floor_div_int(a, b):
    return np.floor_divide(a, np.where(b == 0, 1, b))


@register_op
class FloorDivide(SameType):
    """⌊a / b⌋: float32 as TFLM FLOOR_DIV (std::floor of the double quotient), integers rounding
    toward −∞ (TFLite FLOOR_DIV int32)."""
    name, c_expr = "floor_divide", "floor_divide"
    f = staticmethod(lambda a, b: np.floor(a / b))
    f_int = staticmethod(_floor_div_int)


def _floor_mod(r, b):
    """A truncated remainder r of a by b moved to the sign of b (TFLM floor_mod.h)."""
    return np.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)


def _mod_int(a, b, floor: bool):
    """Integer remainders (a divisor 0, undefined in C, gives a here)."""
    safe = np.where(b == 0, 1, b)
    r = np.fmod(a, safe)
    return _floor_mod(r, safe) if floor else r


@register_op
class FloorMod(SameType):
    """a − ⌊a / b⌋·b, the sign of b (TFLM FLOOR_MOD: fmod, then + b where the signs differ; ONNX
    Mod-13 fmod=0)."""
    name, c_expr = "floor_mod", "floor_mod"
    f = staticmethod(lambda a, b: _floor_mod(np.fmod(a, b), b))
    f_int = staticmethod(lambda a, b: _mod_int(a, b, True))


@register_op
class TruncMod(SameType):
    """a − trunc(a / b)·b, the sign of a (C fmod / %; ONNX Mod-13 fmod=1)."""
    name, c_expr = "trunc_mod", "trunc_mod"
    f = staticmethod(np.fmod)
    f_int = staticmethod(lambda a, b: _mod_int(a, b, False))


@register_op
class SquaredDifference(SameType):
    """(a − b)² (TFLite SQUARED_DIFFERENCE float32 / int32; int32 wraps as C's unsigned product)."""
    name, c_expr = "squared_difference", "squared_difference"
    f = staticmethod(lambda a, b: (a - b) * (a - b))
    f_int = staticmethod(lambda a, b: ((a - b) * (a - b) + (1 << 31)) % (1 << 32) - (1 << 31))
