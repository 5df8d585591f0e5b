"""TFLite converters of the element-wise math builtins, with the types TFLM's kernels take:

- float32 only (TFLM): CEIL, FLOOR, ROUND, EXP, LOG, SIN, COS, SQRT, SQUARE, NEG, FLOOR_DIV, FLOOR_MOD;
- float32 and int8: ABS, RSQRT, ELU (int8: TFLM's per-value arithmetic as a 256-entry table,
  qparams.py), ADD_N (int8: qnn.add_n); SQUARED_DIFFERENCE also int32 (int8: qnn.squared_difference);
- DIV float32, int32 (C's truncating division) and int8 (qnn.div) with its fused activation;
- MAXIMUM / MINIMUM float32, int32, int64 and int8, whose values TFLM compares as they are (no
  rescaling, quantized or not).

int16 (16x8 quantization) is refused with the other types TFLM has no kernel of here.
"""
from __future__ import annotations

import numpy as np

from ...ir import Expr, call
from . import qparams
from .registry import Graph, Op, activation, converter, is_int8

def operands(op: Op, n: int) -> list:
    """The first ``n`` inputs, present and of one element type."""
    ins = op.inputs[:n]
    if len(ins) < n or any(t is None for t in ins):
        raise op.error(f"expects {n} input tensors, got {sum(t is not None for t in ins)}")
    if len({t.dtype for t in ins}) > 1:
        raise op.error(f"operand types differ: {', '.join(t.dtype for t in ins)}")
    try:
        np.broadcast_shapes(*(t.shape for t in ins))
    except ValueError:
        raise op.error(f"shapes {[list(t.shape) for t in ins]} do not broadcast") from None
    return ins


def table(g: Graph, op: Op, fn, float_op: str, **attrs) -> Expr:
    """An int8 unary op as qnn.lut of TFLM's table ``fn(in_q, out_q)``."""
    x, out = op.inputs[0], op.outputs[0]
    try:
        tab = fn(x.q, out.q)
    except ValueError as e:
        raise op.error(str(e)) from None
    return call("qnn.lut", g.value(x), table=tab, span=op.span,
                real_fn=(float_op, tuple(sorted(attrs.items())), float(np.float32(x.q[0])), x.q[1],
                         float(np.float32(out.q[0])), out.q[1]))


@converter("CEIL", "FLOOR", "ROUND", "EXP", "LOG", "SIN", "COS", "SQRT", "SQUARE", "NEG", max_version=1,
           types=("float32",))
def convert_float_unary(g: Graph, op: Op):
    """The ops TFLM runs on float32 only."""
    kind = {"CEIL": "ceil", "FLOOR": "floor", "ROUND": "round", "EXP": "exp", "LOG": "log", "SIN": "sin", "COS": "cos",
            "SQRT": "sqrt", "SQUARE": "square", "NEG": "negative"}[op.name]
    return call(kind, g.value(op.inputs[0]), span=op.span)


@converter("ABS", max_version=2)
def convert_abs(g: Graph, op: Op):
    x = op.inputs[0]
    return table(g, op, qparams.abs_table, "abs") if is_int8(x) else call("abs", g.value(x), span=op.span)


@converter("RSQRT", max_version=2)
def convert_rsqrt(g: Graph, op: Op):
    x = op.inputs[0]
    return table(g, op, qparams.rsqrt_table, "rsqrt") if is_int8(x) else call("rsqrt", g.value(x), span=op.span)


@converter("ELU", max_version=1)
def convert_elu(g: Graph, op: Op):
    x = op.inputs[0]
    if is_int8(x):
        return table(g, op, qparams.elu_table, "nn.elu", alpha=1.0)
    return call("nn.elu", g.value(x), alpha=1.0, span=op.span)


@converter("FLOOR_DIV", max_version=2, types=("float32",))
def convert_floor_div(g: Graph, op: Op):
    a, b = operands(op, 2)
    return call("floor_divide", g.value(a), g.value(b), span=op.span)


@converter("FLOOR_MOD", max_version=1, types=("float32",))
def convert_floor_mod(g: Graph, op: Op):
    a, b = operands(op, 2)
    return call("floor_mod", g.value(a), g.value(b), span=op.span)


@converter("DIV", max_version=2, types=("float32", "int8", "int32"))
def convert_div(g: Graph, op: Op):
    """DIV float32, int32 (C division, truncating) and int8 (qnn.div), then the fused activation's clamp."""
    a, b = operands(op, 2)
    out = op.outputs[0]
    if not is_int8(a):
        return activation(call("divide", g.value(a), g.value(b), span=op.span), out, op)
    return activation(call("qnn.div", g.value(a), g.value(b), span=op.span, **qparams.div_params(a.q, b.q, out.q)),
                      out, op)


@converter("SQUARED_DIFFERENCE", max_version=2, types=("float32", "int8", "int32"))
def convert_squared_difference(g: Graph, op: Op):
    a, b = operands(op, 2)
    if not is_int8(a):
        return call("squared_difference", g.value(a), g.value(b), span=op.span)
    try:
        params = qparams.squared_difference_params(a.q, b.q, op.outputs[0].q)
    except ValueError as e:
        raise op.error(str(e)) from None
    return call("qnn.squared_difference", g.value(a), g.value(b), span=op.span, **params)


@converter("MAXIMUM", "MINIMUM", max_version=3, types=("float32", "int8", "int32", "int64"), raw_int8=True)
def convert_maximum(g: Graph, op: Op):
    """TFLM compares the stored values (int8 bytes without rescaling, as the output's too)."""
    a, b = operands(op, 2)
    return call({"MAXIMUM": "maximum", "MINIMUM": "minimum"}[op.name], g.value(a), g.value(b), span=op.span)


@converter("ADD_N", max_version=1)
def convert_add_n(g: Graph, op: Op):
    """ADD_N of n ≥ 2 tensors of one shape: float32 summed left to right from the first (TFLM's AddN
    adds to 0, the same sums); int8 all of one quantization, qnn.add_n."""
    xs = operands(op, max(len(op.inputs), 2))
    if any(t.shape != xs[0].shape for t in xs):
        raise op.error(f"inputs of shapes {[list(t.shape) for t in xs]}; TFLM needs one shape")
    if not is_int8(xs[0]):
        y = g.value(xs[0])
        for t in xs[1:]:
            y = call("add", y, g.value(t), span=op.span)
        return y
    if any(t.q[1] != xs[0].q[1] or np.float32(t.q[0]) != np.float32(xs[0].q[0]) for t in xs):
        raise op.error("int8 inputs of different quantization; TFLM's ADD_N needs one scale and zero point")
    if len(xs) > 15:
        raise op.error(f"{len(xs)} int8 inputs: TFLM's int32 sum overflows beyond 15")
    try:
        params = qparams.add_n_params(xs[0].q, op.outputs[0].q)
    except ValueError as e:
        raise op.error(str(e)) from None
    return call("qnn.add_n", *(g.value(t) for t in xs), span=op.span, **params)
