"""The TFLite converter registry and what a converter sees: :class:`Tensor`, :class:`Op`,
:class:`Graph` (the IR value of every tensor) and the helpers converters share (layout transposes,
QDQ dequantize / quantize, fused activations).

Converters (``ops.py`` and its siblings) register here with ``@converter``; ``reader.py`` reads the flatbuffer,
imports the converters and runs them operator by operator. Kept apart from ``tflite.py`` so that no
module imports one that imports it back.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...errors import TinyfuseError
from ...ir import Constant, Expr, call
from .state import StateTable
from . import int8 as i8
from ..onnx.reader import check_size, sanitize
from .schema import S

TO_NCHW, TO_NHWC = (0, 3, 1, 2), (0, 2, 3, 1)


def _names(enum) -> dict[int, str]:
    return {v: k for k, v in vars(enum).items() if not k.startswith("_")}


# ----------------------------------------------------------------------------------------- tensors and operators

@dataclass
class Tensor:
    """One subgraph tensor: static shape, dtype (numpy name), quantization, constant data."""

    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str
    scale: np.ndarray | None = None        # float32, one per tensor or per channel along ``axis``
    zero_point: np.ndarray | None = None   # int64
    axis: int = 0
    data: np.ndarray | None = None         # constant value (numpy, dtype and shape of the tensor)
    variable: bool = False                 # ``is_variable``: state that persists between invocations

    @property
    def quantized(self) -> bool:
        return self.scale is not None

    @property
    def q(self) -> tuple[float, int]:
        """(scale, zero_point) of a per-tensor quantized tensor."""
        return float(self.scale[0]), int(self.zero_point[0])

    def __str__(self) -> str:
        return f"{list(self.shape)} {self.dtype}"


@dataclass
class Op:
    """What a converter sees of one TFLite operator."""

    index: int
    name: str                 # BuiltinOperator name, e.g. CONV_2D
    version: int
    options: object           # the builtin options table (object API) or None; CUSTOM ops: the custom options bytes
    inputs: list[Tensor | None]
    outputs: list[Tensor]

    @property
    def span(self) -> str:
        return f"{self.name.lower()}_{self.index}"

    def error(self, problem: str, hint: str = "") -> TinyfuseError:
        ins = ", ".join(str(t) for t in self.inputs if t is not None)
        msg = f"operator {self.index} ({self.name} v{self.version}, inputs {ins or 'none'}): {problem}"
        return TinyfuseError(msg + (f"; {hint}" if hint else ""))

    def opt(self, key: str, default=None):
        return getattr(self.options, key, default) if self.options is not None else default


CONVERTERS: dict[str, tuple[int, Callable]] = {}
EFFECTS: dict[str, tuple[int, Callable]] = {}    # ops with no data input or output: state, CALL_ONCE
#: op → (element types its tensors may have, int8 tensors may lack quantization): ops declaring more than
#: float32 and quantized int8 (``converter(types=..., raw_int8=...)``)
TYPES: dict[str, tuple[tuple[str, ...], bool]] = {}


def converter(*names: str, max_version: int, types: tuple[str, ...] | None = None, raw_int8: bool = False):
    """Register a converter for TFLite builtin ops up to ``max_version`` (TFLite's op_version.cc
    numbering; later versions mean semantics this converter does not know). ``types``: the element
    types the op's activation tensors may have (default float32 and int8); ``raw_int8``: int8 tensors
    need no quantization (TFLM reads their values as they are: CAST, MAXIMUM, SELECT_V2, ...)."""
    def deco(fn):
        for n in names:
            assert n not in CONVERTERS and n not in EFFECTS, f"TFLite converter of {n!r} registered twice"
            CONVERTERS[n] = (max_version, fn)
            if types is not None or raw_int8:
                TYPES[n] = (tuple(types or ("float32", "int8")), raw_int8)
        return fn
    return deco


def effect(*names: str, max_version: int):
    """Register a converter of an op that only routes state (``state_ops.py``): it gets the
    Graph and the Op unchecked (no data inputs or outputs needed) and returns nothing."""
    def deco(fn):
        for n in names:
            assert n not in CONVERTERS and n not in EFFECTS, f"TFLite converter of {n!r} registered twice"
            EFFECTS[n] = (max_version, fn)
        return fn
    return deco


#: ops with several outputs whose converters return a list, one value per output (beside reader.MULTI_OUTPUT)
MULTI_OUTPUTS: set[str] = set()


# ----------------------------------------------------------------------------------------- the graph

class Graph:
    """The IR value of every tensor (in TFLite layout and dtype) while the operators are converted."""

    def __init__(self, tensors: list[Tensor], states: StateTable | None = None):
        self.tensors = tensors
        self.env: dict[int, Expr] = {}
        self.states = states if states is not None else StateTable()
        self.handles: dict[int, str] = {}      # VAR_HANDLE output tensor index → resource key
        self.subgraph: Callable | None = None  # subgraph(index, states): converts another subgraph (CALL_ONCE)
        #: call(index, values, op) -> output values: subgraph ``index`` converted with its inputs bound to
        #: ``values`` (IF's taken branch, one WHILE iteration; control.py)
        self.call: Callable | None = None
        self.gates: dict[int, Expr] = {}       # tensor index → StateTable.gate when an operator wrote it

    def value(self, t: Tensor) -> Expr:
        """The tensor as it is: int8 stays int8, NHWC stays NHWC; constants become Constants; a
        variable tensor (``is_variable``) is its state's value at this point of the invocation."""
        if t.variable:
            return self.states.read(("tensor", t.index), t, None)
        if t.index in self.env:
            return self.env[t.index]
        if t.data is not None:
            data = t.data.astype(np.float32) if t.dtype == "float16" else t.data
            self.env[t.index] = Constant(data, sanitize(t.name))
            return self.env[t.index]
        raise TinyfuseError(f"tensor {t.index} '{t.name}' {t} is read before any operator writes it "
                            "(operators not in execution order?)")

    def assign_variable(self, t: Tensor, value: Expr, op: Op) -> None:
        """Make ``value`` (shape and dtype of ``t``) the new state of variable tensor ``t``: what
        later ``value(t)`` calls of this invocation return and what the next invocation starts from
        (an op that updates its state tensor in place: UNIDIRECTIONAL_SEQUENCE_LSTM, SVDF).
        Raises ``op.error`` when ``t`` is not a variable tensor or the value does not fit it."""
        if not t.variable:
            raise op.error(f"tensor {t.index} '{t.name}' {t} is not a variable tensor; only state is assigned")
        self.states.assign(("tensor", t.index), t, value, op)

    def set(self, t: Tensor, e: Expr, op: Op) -> None:
        if tuple(e.ty.shape) != t.shape or e.ty.dtype != t.dtype:
            raise op.error(f"tinyfuse computes {list(e.ty.shape)} {e.ty.dtype} for output '{t.name}' {t}")
        check_size(e.ty, f"tensor '{t.name}'")
        self.env[t.index] = e
        if self.states.gate is not None:
            self.gates[t.index] = self.states.gate


def is_int8(t: Tensor) -> bool:
    return t.dtype == "int8"


#: activation dtypes quantized per tensor: the TFLite int8 spec, and 16x8 (int16 activations, int8 weights)
QUANTIZED = ("int8", "int16")


def is_quantized(t: Tensor) -> bool:
    """An int8 or int16 activation (its real value is a dequantize)."""
    return t.dtype in QUANTIZED


def transpose(e: Expr, perm, span: str = "") -> Expr:
    """transpose, or a reshape when only size-1 axes move (as the ONNX frontend does)."""
    perm = tuple(perm)
    moved = [a for a in perm if e.ty.shape[a] != 1]
    if moved == sorted(moved):
        return reshape(e, [e.ty.shape[a] for a in perm], span)
    return call("transpose", e, axes=perm, span=span)


def reshape(e: Expr, shape, span: str = "") -> Expr:
    shape = tuple(int(d) for d in shape)
    return e if shape == e.ty.shape else call("reshape", e, newshape=shape, span=span)


def dequantize(e: Expr, t: Tensor, axis: int | None = None, op: Op | None = None) -> Expr:
    """The real value of ``e`` (holding tensor ``t``, maybe transposed): ``qnn.dequantize`` for
    quantized tensors, ``e`` itself for float ones."""
    if not t.quantized or t.dtype in ("float32", "float16"):
        return e
    if t.scale.size > 1 and axis is None:
        raise op.error(f"tensor '{t.name}' {t} is quantized per axis; tinyfuse needs per-tensor "
                       "quantization of activations")
    if t.scale.size > 1:
        return call("qnn.dequantize", e, scale=t.scale.copy(), zero_point=t.zero_point.copy(), axis=axis)
    return call("qnn.dequantize", e, scale=float(t.scale[0]), zero_point=int(t.zero_point[0]), axis=axis or 0)


def real(g: Graph, t: Tensor, op: Op, perm=None) -> Expr:
    """The float view of an activation, transposed by ``perm`` first (so the dequantize sits right
    on the op it feeds, where legalize_qdq looks for it)."""
    e = g.value(t)
    if perm is not None:
        e = transpose(e, perm, op.span)
    return dequantize(e, t, op=op)


def activation(y: Expr, out: Tensor, op: Op) -> Expr:
    """The fused activation of ``op`` on its result ``y`` (float, or int8 after quantize)."""
    act = _names(S.ActivationFunctionType).get(op.opt("fusedActivationFunction", 0), "?")
    if act == "NONE":
        return y
    if is_quantized(out):
        if act not in i8.ACTIVATION_BOUNDS:
            raise op.error(f"fused activation {act} on an {out.dtype} output is not supported")
        lo, hi = i8.activation_range(act, *out.q, dtype=out.dtype)
        info = np.iinfo(out.dtype)
        return call("clip", y, a_min=lo, a_max=hi, span=op.span) if (lo, hi) != (info.min, info.max) else y
    if act == "RELU":
        return call("nn.relu", y, span=op.span)
    if act in i8.ACTIVATION_BOUNDS:
        a_min, a_max = i8.ACTIVATION_BOUNDS[act]
        return call("clip", y, a_min=a_min, a_max=a_max, span=op.span)
    if act == "TANH":
        return call("tanh", y, span=op.span)
    raise op.error(f"fused activation {act} is not supported")


def finish(y: Expr, op: Op, perm=None) -> Expr:
    """Quantize a float result to the int8 / int16 output (nothing for float outputs), apply the fused
    activation, transpose back by ``perm``."""
    out = op.outputs[0]
    if is_quantized(out):
        y = call("qnn.quantize", y, scale=out.q[0], zero_point=out.q[1], axis=1, out_dtype=out.dtype, span=op.span)
    y = activation(y, out, op)
    return transpose(y, perm, op.span) if perm is not None else y


def check_types(op: Op, allowed=("float32", "int8"), raw_int8: bool | tuple[str, ...] = False,
                raw: tuple[str, ...] = ()) -> None:
    """Every non-constant tensor of ``op`` has an ``allowed`` element type and an int8 / int16 tensor has
    quantization parameters, unless its type is raw: ``raw_int8`` True (int8 and int16) or a tuple of
    element types, and ``raw`` (the int16 a converter declares itself takes as plain integers);
    activations are quantized per tensor."""
    raw = (*raw, *(raw_int8 if isinstance(raw_int8, tuple) else QUANTIZED if raw_int8 else ()))
    for t in [*op.inputs, *op.outputs]:
        if t is None or t.data is not None:
            continue
        if t.dtype not in allowed:
            hint = "tinyfuse runs int8 (TFLite int8 spec), int16x8 and float32 models" + (
                f"; {op.name} has no int16 (16x8) kernel" if t.dtype == "int16" else "")
            raise op.error(f"tensor '{t.name}' {t} has element type {t.dtype}", hint)
        if t.dtype in QUANTIZED and not t.quantized and t.dtype not in raw:
            raise op.error(f"{t.dtype} tensor '{t.name}' {t} has no quantization parameters")
        if t.quantized and t.scale.size > 1:
            raise op.error(f"activation tensor '{t.name}' {t} is quantized per axis; tinyfuse needs per-tensor "
                           "quantization of activations")


def constant(op: Op, t: Tensor | None, what: str) -> np.ndarray:
    if t is None or t.data is None:
        raise op.error(f"{what} must be a constant tensor")
    return t.data
