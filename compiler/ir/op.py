"""The op registry: one entry per op, holding everything the compiler knows about it.

An entry is a subclass of :class:`OpDef` decorated with :func:`register_op` (see ``compiler/ops/``):
its attributes and defaults, the type relation (``infer``), the fusion kind (``pattern``), the numpy
reference (``compute``, the interpreter's oracle), for element-wise ops the name of the C
expression macro in ``codegen_templates/expr/elemwise.c.j2``, and the facts passes and the cost model
ask about an op (class attributes below, e.g. ``lut``, ``is_view``, ``cost_family``). Passes derive
their op sets from these with ``tinyfuse.ops.ops_where`` instead of keeping lists of op names.
The kernel of an op is registered by anchor op name in ``tinyfuse.lower.registry.LOWERINGS``.
"""
from __future__ import annotations

from enum import IntEnum

import numpy as np

from ..errors import TinyfuseError
from .expr import Call, Expr
from .types import TensorType


class OpPattern(IntEnum):
    """Fusion kind, ordered as TVM's OpPattern: a group may absorb ops of lower kind."""

    ELEMWISE = 0              # out[i] = f(in[i])
    BROADCAST = 1             # element-wise with numpy broadcasting of the operands
    INJECTIVE = 2             # each output element reads one input element (transpose, reshape)
    COMM_REDUCE = 3           # reductions
    OUT_ELEMWISE_FUSABLE = 4  # anchors: conv2d, matmul, pool; element-wise epilogue may follow
    OPAQUE = 8                # never fused (softmax)


class OpDef:
    """Base of all op entries. Subclasses set ``name``, ``pattern``, ``attrs`` (defaults) and
    implement ``infer(arg_types, attrs) -> TensorType`` and ``compute(*arrays, **attrs)``."""

    name: str = ""
    pattern: OpPattern = OpPattern.OPAQUE
    attrs: dict = {}
    num_inputs: int | None = None   # None: variadic
    c_expr: str | None = None       # element-wise ops: macro name in expr/elemwise.c.j2

    # Facts other modules read (each names its reader); the defaults are "no".
    is_view: bool = False           # same bytes, new shape (reshape): no kernel, no buffer (fuse_ops, memory)
    strided_view: bool = False      # a no-copy strided index map of its input (ops/view.py); fold_views
                                    # folds chains of them into the reader's index map
    reads_views: bool = False       # reads its operands through such index maps (a_view/b_view; fold_views)
    clamps: bool = False            # clamps its input (relu, clip): legalize_qdq makes it the output clamp
    moves_data: bool = False        # selects/moves elements without arithmetic and legalize_qdq runs it on
                                    # the int8 tensor unchanged (reshape, transpose, max pool)
    lut: bool = False               # unary float op whose int8 form is a 256-entry table (legalize_qdq → qnn.lut)
    accumulates: bool = False       # int8 products summed in an int32 accumulator (check_overflow)
    horizontal: str | None = None   # sibling kind fuse_horizontal merges over a shared input ("conv", "matmul")
    cost_feature: bool = False      # has its own count column ``op=<name>`` in cost.features (else ``op=other``)
    cost_family: str | None = None  # the kernel family cost.features names for a group holding it

    def infer(self, args: list[TensorType], attrs: dict) -> TensorType:
        raise NotImplementedError

    def compute(self, *args: np.ndarray, **attrs) -> np.ndarray:
        raise NotImplementedError

    def view_offset(self, node: Call) -> int:
        """Views (``is_view``): the byte offset in its operand's buffer where ``node``'s bytes start
        (0 for a reshape; a contiguous slice starts further in). The memory plan adds it."""
        return 0

    def is_identity(self, node: Call) -> bool:
        """True when ``node`` (a Call of this op) returns its first operand unchanged, so
        eliminate_dead_code may drop it (a clip without bounds, a reshape to the same shape)."""
        return False


OPS: dict[str, OpDef] = {}


def register_op(cls):
    """Class decorator: instantiate the OpDef and register it under ``cls.name``."""
    assert cls.name and cls.name not in OPS, cls.name
    OPS[cls.name] = cls()
    return cls


def get_op(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"op '{name}' is not registered") from None


def call(op: str, *args: Expr, span: str = "", **attrs) -> Call:
    """Build a typed Call of a registered op; unspecified attributes take the op's defaults."""
    opdef = get_op(op)
    unknown = set(attrs) - set(opdef.attrs)
    assert not unknown, f"{op}: unknown attributes {unknown}"
    if opdef.num_inputs is not None and len(args) != opdef.num_inputs:
        raise TypeError(f"{op} takes {opdef.num_inputs} inputs, got {len(args)}")
    full = {**opdef.attrs, **attrs}
    ty = opdef.infer([a.ty for a in args], full)
    return Call(op, tuple(args), full, ty, span)


def rebuild_call(node: Call, args: tuple[Expr, ...]) -> Call:
    """The same Call with new operands (re-typed)."""
    if isinstance(node.op, str):
        return call(node.op, *args, span=node.span, **node.attrs)
    return Call(node.op, args, node.attrs, node.ty, node.span)


def shape_error(node: Call | str, msg: str) -> TinyfuseError:
    return TinyfuseError(f"{node}: {msg}")
