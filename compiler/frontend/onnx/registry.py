"""The ONNX converter registry and what a converter sees: :class:`Node`, the operand helpers.

Converters (``ops.py``, ``quant.py``, ...) register here with ``@converter``; ``reader.py``
imports them and runs them node by node. Kept apart from ``onnx.py`` so that no module imports one
that imports it back.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import onnx
from onnx import helper

from ...errors import TinyfuseError, node_error
from ...ir import Call, Constant, Expr, call, get_op


class Node:
    """What a converter sees of one ONNX node: name, op type, attributes, opset, and errors.

    ``opset`` is the ai.onnx opset the converter works at (13 or more: older models arrive
    upgraded); errors name ``declared_opset``, the one the model itself declares. A node without a
    name is named by its first present output (LSTM/GRU may omit ``Y`` and keep ``Y_h``)."""

    def __init__(self, proto: onnx.NodeProto, opset: int, declared_opset: int | None = None):
        self.proto, self.opset = proto, opset
        self.declared_opset = declared_opset if declared_opset is not None else opset
        self.name = shown(proto.name or next((o for o in proto.output if o), "") or proto.op_type)
        self.op_type = proto.op_type
        self.attrs = {a.name: helper.get_attribute_value(a) for a in proto.attribute}

    def attr(self, key, default=None):
        v = self.attrs.get(key, default)
        if not isinstance(v, bytes):
            return v
        try:
            return v.decode()
        except UnicodeDecodeError:
            raise self.error(f"attribute '{shown(key)}' is not valid UTF-8 text (damaged file?)") from None

    def error(self, problem: str, hint: str = "") -> TinyfuseError:
        return node_error(self.name, shown(self.op_type), self.declared_opset, problem, hint)


CONVERTERS: dict[str, Callable] = {}


def converter(*op_types: str):
    """Register ``fn(node, args)`` as the converter of ``op_types`` (a type registered twice is refused)."""
    def deco(fn):
        for t in op_types:
            assert t not in CONVERTERS, f"ONNX converter of {t!r} registered twice"
            CONVERTERS[t] = fn
        return fn
    return deco


def register_converters(table: dict[str, Callable]) -> None:
    """Register each ``op_type: converter`` of ``table`` (a module's simple converters as one table)."""
    for t, fn in table.items():
        converter(t)(fn)


def weight_value(node: Node, e: Expr | None, what: str) -> np.ndarray:
    """The stored array of a weight that is a constant or ``qnn.dequantize(constant)`` (QDQ int8)."""
    if isinstance(e, Call) and e.op == "qnn.dequantize" and isinstance(e.args[0], Constant):
        return e.args[0].value
    return const_value(node, e, what)


def with_weight_value(e: Expr, value: np.ndarray, dtype=np.float32) -> Expr:
    """``e`` (as accepted by weight_value) holding ``value`` instead: a float Constant, or the same
    dequantize around the new int8 constant."""
    if isinstance(e, Call) and e.op == "qnn.dequantize":
        return call("qnn.dequantize", Constant(value, e.args[0].name), span=e.span, **e.attrs)
    return Constant(value.astype(dtype) if value.dtype != dtype else value, getattr(e, "name", ""))


def const_value(node: Node, e: Expr | None, what: str) -> np.ndarray:
    if isinstance(e, Call) and e.op == "qnn.dequantize" and isinstance(e.args[0], Constant):
        return get_op(e.op).compute(e.args[0].value, **e.attrs)   # a parameter QDQ-quantized as a weight
    if not isinstance(e, Constant):
        raise node.error(f"{what} must be a constant (initializer), got a computed tensor",
                         "fold it before export or feed it as an initializer")
    return e.value


def scalar_value(node: Node, e: Expr | None, what: str) -> np.ndarray:
    """const_value of a one-element constant, as a 0-d array; TinyfuseError for any other size."""
    v = const_value(node, e, what)
    if v.size != 1:
        raise node.error(f"{what} must be a scalar, got shape {list(v.shape)}")
    return v.reshape(())


def optional_arg(args: list, i: int) -> Expr | None:
    """The i-th input, or None when it is absent or given as the empty name."""
    return args[i] if len(args) > i else None


def shown(name: str) -> str:
    """A model-supplied name as it may appear in a one-line message (control characters escaped)."""
    return name if name.isprintable() else name.encode("unicode_escape").decode("ascii")


def node_axis(node: Node, x: Expr, default: int) -> int:
    """The node's ``axis`` attribute (``default`` when absent) as a non-negative axis of ``x``;
    node.error when it is outside [-rank, rank)."""
    axis = node.attr("axis", default)
    if not -x.ty.ndim <= axis < x.ty.ndim:
        raise node.error(f"axis {axis} out of range for shape {list(x.ty.shape)}")
    return axis % x.ty.ndim
