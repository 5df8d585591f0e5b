"""Relay-like expressions: Var, Constant, Call(op, args, attrs), Tuple, Function.

Nodes are immutable and compared by identity (as Relay nodes are); a DAG is shared sub-expressions.
Every Call carries its checked type, inferred from the op registry when the Call is built, so a
pass that builds an ill-typed Call fails at the line that built it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from .types import TensorType, TupleType


class Expr:
    """Base class of IR expressions; ``ty`` is the checked type."""

    ty: TensorType | TupleType


@dataclass(frozen=True, eq=False)
class Var(Expr):
    """A function parameter (a model input)."""

    name: str
    ty: TensorType


@dataclass(frozen=True, eq=False)
class Constant(Expr):
    """A compile-time tensor (weights, bias, shapes); ends up as a ``const`` array in flash."""

    value: np.ndarray
    name: str = ""

    def __post_init__(self):
        v = np.require(self.value, requirements="C")     # keeps a 0-d value 0-d (ascontiguousarray does not)
        v.setflags(write=False)
        object.__setattr__(self, "value", v)

    @property
    def ty(self) -> TensorType:  # type: ignore[override]
        return TensorType(self.value.shape, str(self.value.dtype))


@dataclass(frozen=True, eq=False)
class Call(Expr):
    """``op(args..., **attrs)``. ``op`` is a registered op name, or a primitive Function (a fused group)."""

    op: "str | Function"
    args: tuple[Expr, ...]
    attrs: dict = field(default_factory=dict)
    ty: TensorType | TupleType | None = None
    span: str = ""  # name of the source (ONNX) node, for error messages and comments

    @property
    def op_name(self) -> str:
        return self.op if isinstance(self.op, str) else self.op.attrs.get("name", "fn")


@dataclass(frozen=True, eq=False)
class Tuple(Expr):
    """Several outputs of a Function."""

    fields: tuple[Expr, ...]

    @property
    def ty(self) -> TupleType:  # type: ignore[override]
        return TupleType(tuple(f.ty for f in self.fields))


@dataclass(frozen=True, eq=False)
class Function:
    """``fn(params) { body }``. ``attrs['Primitive']`` marks a fused group (one kernel)."""

    params: tuple[Var, ...]
    body: Expr
    attrs: dict = field(default_factory=dict)

    @property
    def outputs(self) -> tuple[Expr, ...]:
        return self.body.fields if isinstance(self.body, Tuple) else (self.body,)

    def source_spans(self) -> list[str]:
        """The source layer names (``Call.span``: ONNX node names, TFLite ``<op>_<index>``) of every
        call this function covers, nested fused groups (a poly-fused chain) included; each once, in
        topological order, empty spans left out."""
        spans: list[str] = []
        for node in post_order(self.body):
            if isinstance(node, Call):
                inner = node.op.source_spans() if isinstance(node.op, Function) else []
                for s in [*inner, node.span]:
                    if s and s not in spans:
                        spans.append(s)
        return spans


@dataclass(frozen=True)
class IRModule:
    """A model: its ``main`` Function plus the names the user sees at the C API.

    ``input_names``/``output_names`` are the model's own tensor names; ``name`` is a C identifier.
    ``io_quant`` is (inputs, outputs): a ``passes.io_quant.QParams`` or None per model input and
    output, read from the frontend's IR by ``run_pipeline`` before legalize_qdq folds the scales.
    """

    main: Function
    name: str
    output_names: tuple[str, ...]
    io_quant: tuple = ((), ())
    states: tuple["State", ...] = ()

    def with_main(self, main: Function) -> "IRModule":
        return IRModule(main, self.name, self.output_names, self.io_quant, self.states)


@dataclass(frozen=True, eq=False)
class State:
    """Persistent model state (a TFLite resource or variable tensor, an RNN's hidden state): a value
    that survives between two runs of the model.

    A stateful module's ``main`` carries state functionally, so reads and writes keep their program
    order by construction: state ``k`` of ``IRModule.states`` (n of them) is the parameter
    ``main.params[len(params) - n + k]`` (its value when the run starts) and the output
    ``main.outputs[len(outputs) - n + k]`` (its value when the run ends, stored back after every
    kernel ran). ``init`` is the value ``<name>_reset`` writes (numpy, ``shape`` and ``dtype``); None
    means every byte ``fill`` (TFLM's ResetVariableTensors: an int8 tensor's zero point, else 0).
    ``ring_step`` is set by the ring_buffer pass (passes/ring_buffer.py).
    """

    name: str                      # C identifier, unique in the model
    shape: tuple[int, ...]
    dtype: str                     # numpy name
    init: np.ndarray | None = None
    fill: int = 0                  # the byte value of a reset without ``init``
    ring_step: int = 0             # > 0: a ring buffer whose window moves by this many bytes a frame

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize

    def initial(self) -> np.ndarray:
        """The value ``<name>_reset`` gives the state (``init``, or every byte ``fill``)."""
        if self.init is not None:
            return np.asarray(self.init, self.dtype).reshape(self.shape)
        return np.full(self.nbytes, self.fill, np.uint8).view(self.dtype).reshape(self.shape)


def post_order(roots) -> list[Expr]:
    """All expressions reachable from ``roots`` (an Expr or a list), each once, operands first."""
    if isinstance(roots, Expr):
        roots = [roots]
    order, seen = [], set()
    stack = [(r, False) for r in reversed(list(roots))]
    while stack:
        node, expanded = stack.pop()
        if id(node) in seen:
            continue
        if expanded:
            seen.add(id(node))
            order.append(node)
            continue
        stack.append((node, True))
        kids = node.args if isinstance(node, Call) else node.fields if isinstance(node, Tuple) else ()
        for k in reversed(kids):
            if id(k) not in seen:
                stack.append((k, False))
    return order


def users(roots) -> dict[int, list[Expr]]:
    """id(expr) -> list of the Calls/Tuples that use it (with repetition if used twice)."""
    out: dict[int, list[Expr]] = {}
    for node in post_order(roots):
        kids = node.args if isinstance(node, Call) else node.fields if isinstance(node, Tuple) else ()
        for k in kids:
            out.setdefault(id(k), []).append(node)
    return out


def iter_calls(func: Function) -> Iterator[Call]:
    """The Calls of ``func`` in a topological (operands first) order."""
    return (n for n in post_order(func.body) if isinstance(n, Call))
