"""float16 / bfloat16 tensors of ONNX models: storage types, computed in float32.

A model input or output of element type float16 or bfloat16 keeps its type at the C API (``uint16_t``
bit patterns; the header and metadata.json name the type), and the graph computes in float32, as
onnxruntime's CPU provider does for the operators it has no half kernel for, and as an MCU without
half-precision arithmetic must: each such input is converted to float32 (exact), each such output is
rounded from float32 to nearest even (ops/half.py). Constants of those types become float32 at compile
time (exact), and Cast / CastLike to FLOAT16 / BFLOAT16 inside the graph is float32 rounded through
the type (``round_half``): the values are those a float16 / bfloat16 tensor holds. Arithmetic between
two roundings is float32, so results can differ from a float16 kernel's in the last half-precision bit.
"""
from __future__ import annotations

import numpy as np
from onnx import helper

from ...ir import Constant, Expr, Var, call
from ...ir.types import STORAGE_TYPES


def storage_dtype(elem_type: int) -> str | None:
    """'float16' / 'bfloat16' for those ONNX element types, else None."""
    try:
        name = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)).name
    except (KeyError, TypeError):
        return None
    return name if name in STORAGE_TYPES else None


def widen(e: Expr) -> Expr:
    """A float16 / bfloat16 constant as the float32 constant of the same values; anything else as it is."""
    if isinstance(e, Constant) and e.ty.dtype in STORAGE_TYPES:
        return Constant(np.asarray(e.value).astype(np.float32), getattr(e, "name", ""))
    return e


def widen_array(arr: np.ndarray) -> np.ndarray:
    """float16 / bfloat16 initializer values as float32 (exact)."""
    return arr.astype(np.float32) if arr.dtype.name in STORAGE_TYPES else arr


def input_value(v: Var) -> Expr:
    """The float32 value the graph reads for model input ``v`` of a storage type (or ``v``)."""
    if v.ty.dtype not in STORAGE_TYPES:
        return v
    if v.ty.size == 0:
        return Constant(np.zeros(v.ty.shape, np.float32), v.name)
    return call("half_to_float", v, fmt=v.ty.dtype, span=f"input {v.name}")


def output_value(e: Expr, elem_type: int, name: str) -> Expr:
    """Graph output ``e`` (float32) rounded to the output's declared float16 / bfloat16 type (or ``e``)."""
    fmt = storage_dtype(elem_type)
    if fmt is None or e.ty.dtype in STORAGE_TYPES:
        return e
    if isinstance(e, Constant):      # a constant output: its copy kernel rounds
        e = call("copy", e, span="output copy")
    if e.ty.dtype != "float32":
        e = call("cast", e, dtype="float32", span=f"output {name}")
    return call("float_to_half", e, fmt=fmt, span=f"output {name}")


def cast_to_storage(x: Expr, fmt: str, span: str) -> Expr:
    """ONNX Cast-19 / CastLike to FLOAT16 / BFLOAT16 of ``x`` (any numeric type) in a float32 graph: the
    float32 value rounded to nearest even through ``fmt``; a constant folds."""
    if isinstance(x, Constant):
        return Constant(np.asarray(x.value).astype(np.float32).astype(fmt).astype(np.float32),
                        getattr(x, "name", ""))
    if x.ty.dtype != "float32":
        x = call("cast", x, dtype="float32", span=span)
    return call("round_half", x, fmt=fmt, span=span)
