"""TFLite converters of the comparisons, logical ops, SELECT_V2, CAST and ZEROS_LIKE, with the types
TFLM's kernels take:

- EQUAL, NOT_EQUAL (also bool), GREATER, GREATER_EQUAL, LESS, LESS_EQUAL on float32, int32, int64 and
  quantized int8 (qnn.compare: TFLM rescales both operands, comparisons.cc); bool result;
- LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT on bool;
- SELECT_V2 (bool condition; float32, or int8 stored values copied as they are);
- CAST from float32, int8, int32, bool to float32, int8, int32 (C's conversion, as TFLM's
  static_cast: int8 values as stored, float → integer truncates);
- ZEROS_LIKE of float32, int8 (stored zeros), int32, int64.
"""
from __future__ import annotations

import numpy as np

from ...ir import Constant, call
from . import qparams
from .math import operands
from .registry import Graph, Op, converter, is_int8

@converter("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", max_version=2,
           types=("float32", "int8", "int32", "int64", "bool"))
def convert_compare(g: Graph, op: Op):
    a, b = operands(op, 2)
    kind = {"EQUAL": "equal", "NOT_EQUAL": "not_equal", "GREATER": "greater", "GREATER_EQUAL": "greater_equal",
            "LESS": "less", "LESS_EQUAL": "less_equal"}[op.name]
    if a.dtype == "bool" and op.name not in ("EQUAL", "NOT_EQUAL"):
        raise op.error("bool operands are compared by EQUAL and NOT_EQUAL only (TFLM)")
    if not is_int8(a):
        return call(kind, g.value(a), g.value(b), span=op.span)
    try:
        params = qparams.compare_params(a.q, b.q)
    except ValueError as e:
        raise op.error(str(e), "TFLM aborts on an int8 comparison of scale >= 1") from None
    return call("qnn.compare", g.value(a), g.value(b), kind=kind, span=op.span, **params)


@converter("LOGICAL_AND", "LOGICAL_OR", max_version=1, types=("bool",))
def convert_logical(g: Graph, op: Op):
    a, b = operands(op, 2)
    return call({"LOGICAL_AND": "logical_and", "LOGICAL_OR": "logical_or"}[op.name], g.value(a), g.value(b),
                span=op.span)


@converter("LOGICAL_NOT", max_version=1, types=("bool",))
def convert_logical_not(g: Graph, op: Op):
    return call("logical_not", g.value(op.inputs[0]), span=op.span)


@converter("SELECT_V2", max_version=1, types=("float32", "int8", "bool"), raw_int8=True)
def convert_select_v2(g: Graph, op: Op):
    """condition ? x : y with broadcasting; int8 bytes copied as they are (TFLM does not rescale)."""
    if len(op.inputs) < 3 or any(t is None for t in op.inputs[:3]):
        raise op.error("expects 3 input tensors (condition, x, y)")
    cond, x, y = op.inputs[:3]
    if cond.dtype != "bool" or x.dtype != y.dtype or x.dtype not in ("float32", "int8"):
        raise op.error(f"condition {cond.dtype}, x {x.dtype}, y {y.dtype}: SELECT_V2 needs a bool condition and "
                       "x, y of one type (float32, int8)")
    try:
        np.broadcast_shapes(cond.shape, x.shape, y.shape)
    except ValueError:
        raise op.error(f"shapes {[list(t.shape) for t in (cond, x, y)]} do not broadcast") from None
    return call("select", g.value(cond), g.value(x), g.value(y), span=op.span)


@converter("CAST", max_version=3, types=("float32", "int8", "int32", "bool"), raw_int8=True)
def convert_cast(g: Graph, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    if out.dtype == "bool":
        raise op.error("CAST to bool is not a TFLM kernel (outputs: float32, int8, int32)")
    if out.dtype == x.dtype:
        return g.value(x)
    return call("cast", g.value(x), dtype=out.dtype, span=op.span)


@converter("ZEROS_LIKE", max_version=1, types=("float32", "int8", "int32", "int64"), raw_int8=True)
def convert_zeros_like(g: Graph, op: Op):
    """Zeros of the input's shape and type (int8: the stored value 0, not the zero point)."""
    x = op.inputs[0]
    return call("broadcast_to", Constant(np.zeros((1,) * max(len(x.shape), 1), x.dtype)), shape=x.shape,
                span=op.span)
