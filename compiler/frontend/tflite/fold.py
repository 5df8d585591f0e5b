"""Static shape folding of TFLite graphs: an operator whose inputs are all constants (weights, or
tensors folded before it) is evaluated at compile time and its outputs become constants, whatever
their element type (int32 shape arithmetic, bool conditions), so the shape chains Keras and the TF
converter leave behind (SHAPE → STRIDED_SLICE → PACK → RESHAPE, FILL of a computed shape, the counter
and condition of a WHILE loop) take no kernel. SHAPE, RANK and BROADCAST_ARGS of static shapes are
constants too. Registered as SHAPE / FILL / BROADCAST_ARGS converters, and called by reader.convert_op
for every operator (:func:`fold_op`).

The arithmetic is numpy's on the constants' own dtypes (TFLite's kernels compute int32 shape math
and float32 in the same types); an operator with no numpy form here folds through its converter and
the IR interpreter (the ops' numpy references). Quantized constants fold only through converters.
"""
from __future__ import annotations

import numpy as np

from ...ir import Constant, Function, call
from ...ir.interpreter import evaluate
from .registry import Graph, Op, Tensor, constant, converter

STATIC = ("SHAPE", "RANK", "BROADCAST_ARGS")          # outputs known from static shapes alone
_NUMPY_TYPES = ("float16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                "uint64", "bool")


def _floor_div(a, b):
    return np.floor_divide(a, b) if a.dtype.kind in "iu" else np.floor(a / b).astype(a.dtype)


BINARY = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "MAXIMUM": np.maximum, "MINIMUM": np.minimum,
          "FLOOR_DIV": _floor_div, "FLOOR_MOD": np.mod, "LESS": np.less, "LESS_EQUAL": np.less_equal,
          "GREATER": np.greater, "GREATER_EQUAL": np.greater_equal, "EQUAL": np.equal, "NOT_EQUAL": np.not_equal,
          "LOGICAL_AND": np.logical_and, "LOGICAL_OR": np.logical_or}


def _numpy_op(op: Op, v: list):
    """Outputs of ``op`` on constant inputs ``v`` by numpy, or None when it has no numpy form here."""
    out = op.outputs[0]
    if op.name in BINARY:
        if op.name in ("ADD", "SUB", "MUL") and op.opt("fusedActivationFunction", 0):
            return None
        return [BINARY[op.name](v[0], v[1])]
    if op.name == "DIV" and out.dtype.startswith("float"):
        return [np.divide(v[0], v[1])]
    simple = {"LOGICAL_NOT": lambda: np.logical_not(v[0]), "CAST": lambda: v[0],
              "RANGE": lambda: np.arange(v[0].item(), v[1].item(), v[2].item()),
              "REDUCE_PROD": lambda: np.prod(v[0], axis=tuple(int(a) for a in v[1].reshape(-1)),
                                             keepdims=bool(op.opt("keepDims", False))),
              "SELECT": lambda: np.where(v[0], v[1], v[2]), "SELECT_V2": lambda: np.where(v[0], v[1], v[2]),
              "ZEROS_LIKE": lambda: np.zeros_like(v[0]), "SQUARE": lambda: v[0] * v[0],
              "FILL": lambda: np.full(out.shape, v[1].reshape(-1)[0])}
    if op.name in simple:
        return [simple[op.name]()]
    return None


def _constant_inputs(g: Graph, op: Op) -> list | None:
    values = []
    for t in op.inputs:
        if t is None:
            values.append(None)
        elif t.data is not None and not t.variable:
            values.append(t.data)
        else:
            return None
    return values


def _quantized(op: Op) -> bool:
    """A quantized tensor the fold would read or write (SHAPE, RANK, BROADCAST_ARGS read only shapes:
    they fold on an int8 tensor too)."""
    seen = op.outputs if op.name in STATIC else [*op.inputs, *op.outputs]
    return any(t is not None and t.quantized for t in seen)


def fold_op(g: Graph, op: Op, convert) -> bool:
    """Fold ``op`` when its outputs are compile-time constants (module doc): record them as the
    output tensors' data and values and return True; False leaves it to its converter. ``convert``
    runs the op's converter (an IR value, or a list of them), None for an op without one."""
    if not op.outputs or op.name.startswith("CUSTOM"):
        return False
    values = _constant_inputs(g, op)
    if values is None and op.name not in STATIC:
        return False
    if _quantized(op):
        return False
    try:
        outs = _numpy_op(op, values) if values is not None and all(v is not None for v in values[:1]) else None
    except (IndexError, ValueError, TypeError):
        return False
    if outs is None:
        if convert is None:
            return False
        try:
            exprs = convert(g, op)
        except Exception:  # noqa: BLE001 - refused or not foldable: the normal path reports it
            return False
        exprs = exprs if isinstance(exprs, list) else [exprs]
        try:
            outs = [np.asarray(v) for v in evaluate(Function((), _tuple(exprs)), [])]
        except Exception:  # noqa: BLE001 - a value that needs a run-time input: not a constant
            return False
    for t, v in zip(op.outputs, outs):
        v = np.asarray(v)
        if v.size != int(np.prod(t.shape, dtype=np.int64)):
            raise op.error(f"folds to {list(v.shape)}, but output '{t.name}' is {list(t.shape)}")
        if t.dtype not in _NUMPY_TYPES:
            raise op.error(f"output '{t.name}' {t} has element type {t.dtype}")
        set_constant(g, t, v.astype(t.dtype).reshape(t.shape))
    return True


def _tuple(exprs):
    from ...ir import Tuple
    return exprs[0] if len(exprs) == 1 else Tuple(tuple(exprs))


def set_constant(g: Graph, t: Tensor, value: np.ndarray) -> None:
    """Tensor ``t`` is the constant ``value`` from here on (converters read it with ``constant``)."""
    t.data = value
    g.env[t.index] = Constant(value, t.name)


@converter("SHAPE", max_version=1)
def convert_shape(g: Graph, op: Op):
    """SHAPE of a static shape: a constant (int32 or int64 as the output says)."""
    return Constant(np.array(op.inputs[0].shape, op.outputs[0].dtype), op.outputs[0].name)


@converter("BROADCAST_ARGS", max_version=1)
def convert_broadcast_args(g: Graph, op: Op):
    """BROADCAST_ARGS of two constant shapes: the broadcast shape."""
    a, b = (constant(op, t, "shape").reshape(-1) for t in op.inputs[:2])
    try:
        shape = np.broadcast_shapes(tuple(int(d) for d in a), tuple(int(d) for d in b))
    except ValueError:
        raise op.error(f"shapes {a.tolist()} and {b.tolist()} do not broadcast") from None
    return Constant(np.array(shape, op.outputs[0].dtype), op.outputs[0].name)


@converter("FILL", max_version=3)
def convert_fill(g: Graph, op: Op):
    """FILL(dims, value): a constant value folds (fold_op); a computed scalar is broadcast to the
    output's static shape (int8: the value's bytes, TFLM's copy)."""
    value, out = op.inputs[1], op.outputs[0]
    if int(np.prod(value.shape, dtype=np.int64)) != 1:
        raise op.error(f"value {value} must hold one element")
    if value.dtype != out.dtype:
        raise op.error(f"value {value.dtype} and output {out.dtype} differ")
    v = g.value(value)
    v = v if v.ty.ndim == len(out.shape) else call("reshape", v, newshape=(1,) * len(out.shape), span=op.span)
    return v if tuple(v.ty.shape) == tuple(out.shape) else call("broadcast_to", v, shape=tuple(out.shape), span=op.span)
