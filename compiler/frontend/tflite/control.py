"""TFLite control flow folded at compile time: IF and WHILE (TFLM kernels if.cc, while.cc).

tinyfuse compiles one straight-line graph, so a subgraph call is inlined where the choice it makes is
a compile-time constant (a constant tensor, or one fold.py folds: shape arithmetic, a loop counter):

- IF(cond, inputs...) with a constant bool ``cond``: the taken branch (then_subgraph_index when
  true, else_subgraph_index otherwise) is converted with its inputs bound to the operator's inputs
  1..n, and its outputs are the operator's outputs;
- WHILE(vars...): the cond subgraph is converted on the loop variables; while its bool output is a
  constant true, the body subgraph is converted on them and gives the next loop variables (at most
  :data:`MAX_ITERATIONS` times); the loop variables when cond is false are the outputs. A counter
  loop (``i < n`` with constant ``i`` and ``n``) unrolls; the variables the body computes from
  run-time inputs are ordinary IR.

A condition (or a trip count) that depends on a run-time input is one error line naming the
operator. Both register as EFFECTS: their converters bind the outputs themselves (reader.call_subgraph
does the inlining).
"""
from __future__ import annotations

import numpy as np

from ...ir import Constant, Expr
from .fold import set_constant
from .registry import Graph, Op, effect

#: the most WHILE iterations unrolled (each is a copy of the body's kernels)
MAX_ITERATIONS = 64


def _bind(g: Graph, op: Op, values: list[Expr], what: str) -> None:
    """The operator's outputs are ``values`` (a Constant stays one: later folds see it)."""
    if len(values) != len(op.outputs):
        raise op.error(f"{what} gives {len(values)} values for {len(op.outputs)} outputs")
    for t, v in zip(op.outputs, values):
        if isinstance(v, Constant) and tuple(v.ty.shape) == t.shape and v.ty.dtype == t.dtype:
            set_constant(g, t, np.asarray(v.value).reshape(t.shape))
        else:
            g.set(t, v, op)


def _flag(op: Op, v: Expr, what: str, runtime: str) -> bool:
    """The value of bool scalar ``v`` (``what``), or ``op.error`` when it is not a compile-time constant."""
    if v.ty.dtype != "bool" or int(np.prod(v.ty.shape)) != 1:
        raise op.error(f"{what} is {list(v.ty.shape)} {v.ty.dtype}; TFLM needs a bool with one element")
    if not isinstance(v, Constant):
        raise op.error(f"{what} depends on a run-time input; tinyfuse inlines {op.name} only when {runtime} "
                       "is known at compile time")
    return bool(np.asarray(v.value).reshape(-1)[0])


def _index(op: Op, key: str) -> int:
    index = op.opt(key, None)
    if index is None:
        raise op.error(f"no {key} in its options")
    return int(index)


@effect("IF", max_version=1)
def convert_if(g: Graph, op: Op):
    """IF with a compile-time condition: the taken branch inlined (module doc)."""
    if not op.inputs or op.inputs[0] is None or any(t is None for t in op.inputs[1:]):
        raise op.error("expects a condition and the branch inputs")
    take = _flag(op, g.value(op.inputs[0]), "the condition", "its condition")
    index = _index(op, "thenSubgraphIndex" if take else "elseSubgraphIndex")
    outs = g.call(index, [g.value(t) for t in op.inputs[1:]], op)
    _bind(g, op, outs, f"the {'then' if take else 'else'} branch (subgraph {index})")


@effect("WHILE", max_version=1)
def convert_while(g: Graph, op: Op):
    """WHILE with a compile-time trip count: the body unrolled (module doc)."""
    if any(t is None for t in op.inputs) or len(op.inputs) != len(op.outputs):
        raise op.error(f"expects as many loop variables as outputs, got {len(op.inputs)} and {len(op.outputs)}")
    cond, body = _index(op, "condSubgraphIndex"), _index(op, "bodySubgraphIndex")
    values = [g.value(t) for t in op.inputs]
    for k in range(MAX_ITERATIONS + 1):
        flags = g.call(cond, values, op)
        if not flags:
            raise op.error(f"the cond subgraph {cond} has no output")
        if not _flag(op, flags[0], f"the loop condition (iteration {k})", "its trip count"):
            break
        if k == MAX_ITERATIONS:
            raise op.error(f"the loop runs more than {MAX_ITERATIONS} iterations; tinyfuse unrolls at most "
                           f"{MAX_ITERATIONS}")
        values = g.call(body, values, op)
        if len(values) != len(op.inputs):
            raise op.error(f"the body subgraph {body} gives {len(values)} values for {len(op.inputs)} loop variables")
    _bind(g, op, values, f"the loop (body subgraph {body})")
