"""TFLite operators over raw (unquantized) integer tensors, as audio front ends use them between the
signal ops and the network (TFLM micro_speech's audio_preprocessor: CAST uint32 ↔ int32, STRIDED_SLICE
and CONCATENATION of int32, MUL / ADD / DIV of int32, MINIMUM / MAXIMUM against a constant, CAST to int8).

TFLM computes these with C's integer rules (cast.cc: static_cast; div.cc int32: C division; add/mul:
int32 arithmetic), which ``cast`` / ``divide`` / ``add`` / ``multiply`` / ``clip`` compute in the
generated C. This module registers CAST, DIV, MINIMUM and MAXIMUM unless another module already did
(its converter is kept, its accepted element types widened by the raw integer ones), and widens the
element types the data-movement and add/sub/mul converters take by int16, int32 and uint32.
"""
from __future__ import annotations

from ...ir import Constant, call
from .registry import CONVERTERS, RAW_TYPES, TYPES, Graph, Op, activation, converter

RAW = ("int16", "int32", "uint32")
CAST_TYPES = ("float32", "int8", "int16", "int32", "uint32", "bool")
WIDENED = {"RESHAPE": RAW, "SQUEEZE": RAW, "STRIDED_SLICE": RAW, "CONCATENATION": RAW, "ADD": ("int32",),
           "SUB": ("int32",), "MUL": ("int32",)}


def _widen(name: str, extra: tuple[str, ...], raw_int8: bool = False) -> None:
    types, raw = TYPES.get(name, (("float32", "int8"), False))
    TYPES[name] = (tuple(dict.fromkeys((*types, *extra))), raw or raw_int8)
    RAW_TYPES[name] = tuple(dict.fromkeys((*RAW_TYPES.get(name, ()), *(t for t in extra if t in RAW))))


def _register(name: str, max_version: int, types: tuple[str, ...], fn, raw_int8: bool = False) -> None:
    if name in CONVERTERS:
        _widen(name, types, raw_int8)
    else:
        converter(name, max_version=max_version, types=types, raw_int8=raw_int8)(fn)


def convert_cast(g: Graph, op: Op):
    """CAST: C's conversion of every element (TFLM copyCast; quantization parameters are ignored)."""
    x, out = op.inputs[0], op.outputs[0]
    if out.dtype == "bool" or x.shape != out.shape:
        raise op.error(f"cast to {out} is not supported (TFLM casts to int8, int16, int32, uint32, float32 "
                       "of the input's shape)")
    v = g.value(x)
    return v if x.dtype == out.dtype else call("cast", v, dtype=out.dtype, span=op.span)


def _scalar(t) -> float | int | None:
    return t.data.reshape(-1)[0].item() if t is not None and t.data is not None and t.data.size == 1 else None


def convert_min_max(g: Graph, op: Op):
    """MINIMUM / MAXIMUM against a constant scalar: a clip of the other operand."""
    a, b, out = op.inputs[0], op.inputs[1], op.outputs[0]
    bound, x = (_scalar(b), a) if _scalar(b) is not None else (_scalar(a), b)
    if bound is None or a.dtype != b.dtype or x.shape != out.shape or (x.quantized and x.dtype == "int8"):
        raise op.error("needs one constant scalar operand of the other's type (raw, unquantized tensors)")
    key = "a_max" if op.name == "MINIMUM" else "a_min"
    return call("clip", g.value(x), span=op.span, **{key: bound})


def convert_div(g: Graph, op: Op):
    """DIV: float32, or int32 as C's truncating division (TFLM's reference Div for int32)."""
    a, b, out = op.inputs[0], op.inputs[1], op.outputs[0]
    if a.dtype != b.dtype or a.dtype not in ("float32", "int32") or any(t.quantized for t in (a, b)):
        raise op.error("DIV of unquantized float32 or int32 operands is supported (int8 DIV is not)")
    if out.dtype == "int32" and op.opt("fusedActivationFunction", 0):
        raise op.error("a fused activation on an int32 DIV is not supported")
    bv = g.value(b)
    if isinstance(bv, Constant) and a.dtype == "int32" and (bv.value == 0).any():
        raise op.error("integer division by a constant zero")
    return activation(call("divide", g.value(a), bv, span=op.span), out, op)


_register("CAST", 7, CAST_TYPES, convert_cast, raw_int8=True)
_register("MINIMUM", 4, ("float32", "int16", "int32"), convert_min_max)
_register("MAXIMUM", 4, ("float32", "int16", "int32"), convert_min_max)
_register("DIV", 2, ("float32", "int32"), convert_div)
for _name, _extra in WIDENED.items():
    _widen(_name, _extra)
