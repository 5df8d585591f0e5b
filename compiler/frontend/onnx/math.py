"""ONNX converters of the element-wise math, comparison and logic operators (ops/math.py, ops/arith.py,
ops/logic.py): one IR op each, numpy broadcasting; the variadic Max, Min, Sum and Mean fold their
inputs left to right. Operand types are checked here: float-only operators take float32, the logical
ones bool, comparisons and Max/Min/Sum/Mod any one tinyfuse type (ir.types.C_TYPES)."""
from __future__ import annotations

import numpy as np

from ...ir import Constant, Expr, call
from .registry import Node, converter, register_converters

INTEGER = ("int8", "uint8", "int16", "int32", "int64")
NUMERIC = ("float32", *INTEGER)
WIDE_UNSIGNED = ("uint16", "uint32", "uint64")
ORDERED = (*NUMERIC, *WIDE_UNSIGNED, "float64")    # comparisons, Max/Min/Sum, Mod, Pow's exponent
FLOATS = ("float32", "float64")                    # Exp, Log, Sqrt (C exp/log/sqrt on double)


def _check(node: Node, args: list[Expr], allowed: tuple[str, ...]) -> None:
    dtypes = [a.ty.dtype for a in args if a is not None]
    if any(d not in allowed for d in dtypes):
        raise node.error(f"inputs of type {', '.join(dtypes)} are not supported ({', '.join(allowed)})")


def _operands(node: Node, a: Expr, b: Expr, same_type: bool = True) -> tuple[Expr, Expr]:
    """``a, b`` checked to broadcast (and to share their type)."""
    try:
        np.broadcast_shapes(a.ty.shape, b.ty.shape)
    except ValueError:
        raise node.error(f"shapes {list(a.ty.shape)} and {list(b.ty.shape)} do not broadcast") from None
    if same_type and a.ty.dtype != b.ty.dtype:
        raise node.error(f"operand types differ: {a.ty.dtype} and {b.ty.dtype}")
    return a, b


def unary(op: str, allowed=("float32",), **defaults):
    """The converter of a one-input operator: attributes ``defaults`` (name: default) as floats
    (ints for the 0/1 flags of IsInf)."""
    def convert(node: Node, args):
        _check(node, args[:1], allowed)
        attrs = {k: type(v)(node.attr(k, v)) for k, v in defaults.items()}
        return call(op, args[0], span=node.name, **attrs)
    return convert


def binary(op: str, allowed=ORDERED):
    def convert(node: Node, args):
        _check(node, args, allowed)
        return call(op, *_operands(node, args[0], args[1]), span=node.name)
    return convert


register_converters({
    "Abs": unary("abs", (*NUMERIC, "float64")), "Neg": unary("negative", (*NUMERIC, "float64")), "Sign": unary("sign", NUMERIC),
    "Exp": unary("exp", FLOATS), "Log": unary("log", FLOATS), "Sqrt": unary("sqrt", FLOATS), "Reciprocal": unary("reciprocal"),
    "Sin": unary("sin"), "Cos": unary("cos"), "Floor": unary("floor"), "Ceil": unary("ceil"),
    "Round": unary("round"), "Softplus": unary("nn.softplus"), "Softsign": unary("nn.softsign"),
    "Mish": unary("nn.mish"), "Elu": unary("nn.elu", alpha=1.0), "Celu": unary("nn.celu", alpha=1.0),
    "Selu": unary("nn.selu", alpha=1.67326319217681884765625, gamma=1.05070102214813232421875),
    "ThresholdedRelu": unary("nn.thresholded_relu", alpha=1.0),
    "Shrink": unary("nn.shrink", bias=0.0, lambd=0.5),
    "IsNaN": unary("isnan"), "IsInf": unary("isinf", detect_negative=1, detect_positive=1),
    "Not": unary("logical_not", ("bool",)),
    "Equal": binary("equal", (*ORDERED, "bool")), "Greater": binary("greater"), "Less": binary("less"),
    "GreaterOrEqual": binary("greater_equal"), "LessOrEqual": binary("less_equal"),
    "And": binary("logical_and", ("bool",)), "Or": binary("logical_or", ("bool",)),
    "Xor": binary("logical_xor", ("bool",)),
})


@converter("Pow")
def convert_pow(node: Node, args):
    """Pow-15: the result has X's type; Y may be of another numeric type."""
    _check(node, args[:1], ("float32", "int32", "int64"))
    _check(node, args[1:], ORDERED)
    return call("power", *_operands(node, args[0], args[1], same_type=False), span=node.name)


@converter("Mod")
def convert_mod(node: Node, args):
    """Mod-13: fmod=0 the remainder with the divisor's sign (integers, and floats as numpy.mod),
    fmod=1 C's fmod / % (the dividend's sign)."""
    _check(node, args, ORDERED)
    fmod = int(node.attr("fmod", 0))
    if fmod not in (0, 1):
        raise node.error(f"fmod {fmod} is not 0 or 1")
    return call("trunc_mod" if fmod else "floor_mod", *_operands(node, args[0], args[1]), span=node.name)


@converter("Max", "Min", "Sum", "Mean")
def convert_variadic(node: Node, args):
    """Max-13 / Min-13 / Sum-13 / Mean-13 of one or more inputs with multidirectional broadcasting:
    the binary op folded left to right (Mean: the sum divided by the count); one input is itself."""
    inputs = [a for a in args if a is not None]
    if not inputs:
        raise node.error("needs at least one input")
    _check(node, inputs, ("float32",) if node.op_type == "Mean" else ORDERED)
    op = {"Max": "maximum", "Min": "minimum", "Sum": "add", "Mean": "add"}[node.op_type]
    y = inputs[0]
    for x in inputs[1:]:
        y = call(op, *_operands(node, y, x), span=node.name)
    if node.op_type == "Mean" and len(inputs) > 1:
        y = call("divide", y, Constant(np.array(len(inputs), np.float32)), span=node.name)
    return y
