"""Model state while a TFLite model is converted: resource variables (VAR_HANDLE / READ_VARIABLE /
ASSIGN_VARIABLE, initialized by the CALL_ONCE init subgraph) and variable tensors (``is_variable``,
the state of UNIDIRECTIONAL_SEQUENCE_LSTM and SVDF).

The IR carries state functionally (``ir.State``): every state is a parameter of ``main`` (its value
when the invocation starts) and an output (its value when it ends). :class:`StateTable` turns the
model's reads and writes into that form in program order: a read returns the last value assigned
in this invocation, or the parameter before any assignment, so a read can never move past a write
of the same state (it is a data dependence). What TFLM does that this follows:

- ASSIGN_VARIABLE and READ_VARIABLE copy raw bytes (no requantization), so the state holds the
  assigned tensor's bytes and a read gives them to the reading tensor as they are;
- ``MicroAllocator::ResetVariableTensors``: a variable tensor starts as every byte its zero point
  (int8) or 0 (other types); a resource variable starts as the value its CALL_ONCE init subgraph
  assigns, or zeros when none does;
- an operator that ends the invocation early (TFLM's CIRCULAR_BUFFER returns kTfLiteAbort between
  its strides, micro_interpreter_graph.cc stops there) sets :attr:`StateTable.gate`, the bool scalar
  "the invocation goes on past it": every later state write keeps the old value where it is false,
  and so does every model output computed after it (:meth:`StateTable.hold`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import TinyfuseError
from ...ir import Constant, Expr, State, TensorType, Var, call
from ..onnx.reader import sanitize


STATE_TYPES = ("float32", "int8", "int16", "int32", "uint32")


@dataclass
class _Slot:
    name: str
    var: Var                       # the state's value when the invocation starts
    value: Expr                    # its value at this point of the invocation
    init: np.ndarray | None = None
    fill: int = 0


class StateTable:
    """Every state of the model by key: ``("resource", shared_name)`` or ``("tensor", index)``."""

    def __init__(self):
        self.slots: dict[tuple, _Slot] = {}
        self.initializing = False      # True while the CALL_ONCE init subgraph is converted
        self.gate: Expr | None = None  # bool [1]: the invocation runs past the operators seen so far
        self.scope = 0                 # the subgraph being converted: its kernel and tensor states are its own
        self.calls: list[int] = []     # the subgraphs being inlined (IF / WHILE), outermost first
        self._ends: Expr | None = None  # bool [1]: the invocation runs past the operator being converted

    def end_unless(self, goes_on: Expr) -> None:
        """The operator being converted ends the invocation where ``goes_on`` (bool [1]) is false;
        :meth:`advance` makes that the gate once its outputs are set (they are written before it ends)."""
        self._ends = goes_on

    def advance(self) -> None:
        if self._ends is not None:
            self.gate = self._ends if self.gate is None else call("logical_and", self.gate, self._ends)
            self._ends = None

    def _key(self, key: tuple) -> tuple:
        """``key`` in the current subgraph (resource variables are shared by name across subgraphs; an
        operator's own state and variable tensors belong to their subgraph, as TFLM allocates them)."""
        return key if key[0] == "resource" or not self.scope else ("subgraph", self.scope, *key)

    def _slot(self, key: tuple, name: str, shape, dtype: str, fill: int, op=None) -> _Slot:
        key = self._key(key)
        if key not in self.slots:
            if dtype not in STATE_TYPES or any(int(d) <= 0 for d in shape):
                problem = (f"state '{name}' is {list(shape)} {dtype}; tinyfuse keeps static, non-empty "
                           f"{', '.join(STATE_TYPES)} state")
                raise op.error(problem) if op is not None else TinyfuseError(problem)
            taken = {s.name for s in self.slots.values()}
            base = name = sanitize(name) or "state"
            k = 1
            while name in taken:
                name, k = f"{base}_{k}", k + 1
            v = Var(name, TensorType(tuple(int(d) for d in shape), dtype))
            self.slots[key] = _Slot(name, v, v, fill=fill)
        return self.slots[key]

    @staticmethod
    def _fill(t) -> int:
        return int(t.zero_point[0]) & 0xFF if t.dtype == "int8" and t.quantized else 0

    @staticmethod
    def _check(slot: _Slot, shape, dtype: str, what: str, op) -> None:
        if tuple(shape) != tuple(slot.var.ty.shape) or dtype != slot.var.ty.dtype:
            problem = (f"{what} is {list(shape)} {dtype} but state '{slot.name}' is "
                       f"{list(slot.var.ty.shape)} {slot.var.ty.dtype}")
            raise op.error(problem) if op is not None else TinyfuseError(problem)

    def read(self, key: tuple, t, op) -> Expr:
        """The value of state ``key`` read into tensor ``t`` (its shape and dtype)."""
        slot = self._slot(key, _name(key, t), t.shape, t.dtype, self._fill(t), op)
        self._check(slot, t.shape, t.dtype, f"tensor '{t.name}'", op)
        if self.initializing:
            if slot.init is None:
                raise op.error(f"the init subgraph reads state '{slot.name}' before assigning it")
            return Constant(slot.init, slot.name + "_init")
        return slot.value

    def assign(self, key: tuple, t, value: Expr, op) -> None:
        """Make ``value`` (held by tensor ``t``) the state's value from here on."""
        slot = self._slot(key, _name(key, t), t.shape, t.dtype, self._fill(t), op)
        self._check(slot, value.ty.shape, value.ty.dtype, f"the value assigned from '{t.name}'", op)
        if not self.initializing:
            slot.value = self._gated(value, slot.value)
        elif isinstance(value, Constant):
            slot.init = np.ascontiguousarray(value.value).reshape(slot.var.ty.shape).copy()
        else:
            raise op.error(f"the init subgraph assigns state '{slot.name}' a computed value; tinyfuse needs "
                           "constant initial values")

    def kernel_state(self, key: tuple, name: str, shape, dtype: str, op, init: np.ndarray | None = None) -> Expr:
        """The value (this far in the invocation) of the state a kernel keeps for itself (TFLM's
        persistent buffers: a framer's samples, a noise estimate): created on first use, reset to
        ``init`` (default zeros). ``assign_kernel_state`` gives it its new value."""
        fresh = self._key(key) not in self.slots
        slot = self._slot(key, name, shape, dtype, 0, op)
        self._check(slot, shape, dtype, f"kernel state '{name}'", op)
        if fresh and init is not None:
            slot.init = np.asarray(init, dtype).reshape(slot.var.ty.shape).copy()
        return slot.value

    def assign_kernel_state(self, key: tuple, value: Expr, op) -> None:
        slot = self.slots[self._key(key)]
        self._check(slot, value.ty.shape, value.ty.dtype, "the value assigned", op)
        slot.value = self._gated(value, slot.value)

    def _gated(self, value: Expr, old: Expr) -> Expr:
        """``value`` where the invocation runs this far (:attr:`gate`), else ``old``."""
        return value if self.gate is None else call("select", self.gate, value, old)

    def hold(self, key: tuple, name: str, value: Expr, gate: Expr) -> Expr:
        """Model output ``value`` computed after an early end (``gate`` false): the output keeps its
        last computed value then, as TFLM's output tensor keeps its bytes (a state of its own, zeros
        before the first value)."""
        slot = self._slot(key, name, value.ty.shape, value.ty.dtype, 0)
        slot.value = call("select", gate, value, slot.var)
        return slot.value

    def states(self) -> tuple[State, ...]:
        return tuple(State(s.name, tuple(s.var.ty.shape), s.var.ty.dtype, s.init, s.fill)
                     for s in self.slots.values())

    def params(self) -> list[Var]:
        return [s.var for s in self.slots.values()]

    def outputs(self) -> list[Expr]:
        return [s.value for s in self.slots.values()]


def _name(key: tuple, t) -> str:
    return key[1] if key[0] == "resource" else t.name
