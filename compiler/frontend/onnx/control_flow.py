"""ONNX control flow resolved at compile time: If inlined, Loop and Scan unrolled.

tinyfuse emits straight-line C, so a control-flow node becomes the nodes of its subgraph:

- ``If`` (If-13..21) whose condition is a constant after ``--bind`` and constant folding: the branch it
  takes is converted in place (its own initializers, outer-scope references to the enclosing graph).
  A condition computed at run time converts both branches and selects each output (ONNX Where), with
  one warning: both run on every inference; branch outputs of different shapes or dtypes are one error.
- ``Loop`` (Loop-13..21) with a constant trip count ``M`` and a constant condition (absent, or a constant
  ``cond`` input and a body condition that folds to a constant each iteration): the body converted
  once per iteration, at most MAX_UNROLL times; loop-carried values thread through, scan outputs are
  stacked along a new axis 0 (ONNX Loop semantics).
- ``Scan`` (Scan-9..21): the trip count is the scan inputs' length along ``scan_input_axes``; each
  iteration reads one slice (``scan_input_directions`` 1: from the end), scan outputs are stacked along
  ``scan_output_axes`` (reversed for direction 1).

Anything else (a run-time trip count or condition, more than MAX_UNROLL iterations) is one
TinyfuseError naming the node and what is not known.
"""
from __future__ import annotations

import warnings
from typing import Callable

import numpy as np
import onnx

from ...errors import TinyfuseError
from ...ir import Constant, Expr, call
from .binding import compile_time_value, runtime_inputs
from .misc import slice_expr
from .registry import Node, shown

MAX_UNROLL = 64          # iterations a Loop or Scan may unroll into


def _constant(node: Node, e: Expr, what: str, hint: str) -> np.ndarray:
    """The value of ``e`` (a Constant), or the one error (NeedsBinding) saying it is computed at run
    time and from which graph inputs."""
    return compile_time_value(node, e, what, hint)


def _flag(node: Node, e: Expr, what: str, hint: str) -> bool:
    v = _constant(node, e, what, hint)
    if v.size != 1:
        raise node.error(f"{what} has {v.size} elements; it must be a single boolean")
    return bool(v.reshape(-1)[0])


def inline_if(node: Node, env, run_graph: Callable) -> list[Expr]:
    """If: the outputs of the branch a compile-time condition selects; a run-time condition selects
    between both branches' outputs (``_select_branches``)."""
    cond_name = node.proto.input[0]
    if not isinstance(env[cond_name], Constant):
        return _select_branches(node, env[cond_name], run_graph)
    cond = _flag(node, env[cond_name], f"the condition '{shown(cond_name)}'", "")
    branch = _graph(node, "then_branch" if cond else "else_branch")
    outs = run_graph(branch, {})
    if len(outs) != len(node.proto.output):
        raise node.error(f"the {'then' if cond else 'else'} branch has {len(outs)} outputs, the node "
                         f"{len(node.proto.output)}")
    return outs


def _select_branches(node: Node, cond: Expr, run_graph: Callable) -> list[Expr]:
    """If on a condition computed at run time (a wake-word model's verifier run when the score passes a
    threshold): both branches are computed and each output is ``select(cond, then, else)`` (ONNX Where),
    so the C stays straight-line and costs both branches. Outputs of different shapes or dtypes in the
    two branches are the one error."""
    hint = "bind the input it depends on (--bind NAME=VALUE) so the If is inlined"
    what = f"the condition '{shown(node.proto.input[0])}'"
    if cond.ty.size != 1 or cond.ty.dtype != "bool":
        raise node.error(f"{what} is {cond.ty.dtype} of shape {list(cond.ty.shape)}; it must be a single boolean")
    deps = runtime_inputs(cond)
    src = f" (it depends on input {', '.join(repr(shown(d)) for d in deps)})" if deps else ""
    outs = []
    for b in ("then_branch", "else_branch"):
        try:
            outs.append(run_graph(_graph(node, b), {}))
        except TinyfuseError as e:     # a branch built for other inputs (a VAD's 8 kHz one at 16 kHz shapes)
            raise node.error(f"{what} is computed at run time{src}, so both branches are converted, and the "
                             f"{b.split('_')[0]} branch stops: {e}", hint) from None
    for b, o in zip(("then", "else"), outs):
        if len(o) != len(node.proto.output):
            raise node.error(f"the {b} branch has {len(o)} outputs, the node {len(node.proto.output)}")
    flag = call("reshape", cond, newshape=(), span=node.name) if cond.ty.shape else cond
    selected = []
    for name, t, e in zip(node.proto.output, *outs):
        if t.ty.shape != e.ty.shape or t.ty.dtype != e.ty.dtype:
            raise node.error(f"{what} is computed at run time and output '{shown(name)}' differs between the "
                             f"branches ({t.ty.dtype} {list(t.ty.shape)} and {e.ty.dtype} {list(e.ty.shape)})", hint)
        selected.append(call("select", flag, t, e, span=node.name))
    src = f" from input {', '.join(repr(shown(d)) for d in deps)}" if deps else ""
    warnings.warn(f"If '{shown(node.name or node.proto.output[0])}': its condition is computed at run time{src}, "
                  "so both branches are computed and their outputs selected (--bind NAME=VALUE on a configuration "
                  "input inlines one branch)", stacklevel=2)
    return selected


def _stack(node: Node, values: list[Expr], axis: int, what: str) -> Expr:
    """``values`` (one per iteration, equal shapes) stacked along a new ``axis``."""
    if not values:
        raise node.error(f"{what} has no iteration, so its shape is unknown", "give the loop at least one iteration")
    if all(isinstance(v, Constant) for v in values):
        return Constant(np.stack([v.value for v in values], axis=axis), node.name)
    shape = values[0].ty.shape
    if any(v.ty.shape != shape for v in values):
        raise node.error(f"{what} changes shape between iterations ({list(shape)}, ...); ONNX requires one shape")
    axis = axis % (len(shape) + 1)
    expanded = tuple(shape[:axis]) + (1,) + tuple(shape[axis:])
    parts = [call("reshape", v, newshape=expanded, span=node.name) for v in values]
    return parts[0] if len(parts) == 1 else call("concatenate", *parts, axis=axis, span=node.name)


def _too_many(node: Node, trip: int | str) -> None:
    raise node.error(f"trip count {trip} is over the unroll bound of {MAX_UNROLL} iterations",
                     "tinyfuse unrolls loops at compile time: shorten the loop or export it unrolled")


def unroll_loop(node: Node, env, run_graph: Callable) -> list[Expr]:
    """Loop: the body converted once per iteration (module doc)."""
    ins = list(node.proto.input) + [""] * (2 - len(node.proto.input))
    body = _graph(node, "body")
    hint = "tinyfuse unrolls a Loop whose trip count and condition are known at compile time (--bind NAME=VALUE)"
    trip = int(_constant(node, env[ins[0]], f"the trip count '{shown(ins[0])}'", hint).reshape(-1)[0]) \
        if ins[0] else None
    going = _flag(node, env[ins[1]], f"the condition '{shown(ins[1])}'", hint) if ins[1] else True
    carried = [env[n] for n in ins[2:]]
    n_carried = len(carried)
    if len(body.input) != 2 + n_carried or len(body.output) < 1 + n_carried:
        raise node.error(f"the body has {len(body.input)} inputs and {len(body.output)} outputs for "
                         f"{n_carried} loop-carried values")
    if trip is not None and trip > MAX_UNROLL:
        _too_many(node, trip)
    scans: list[list[Expr]] = [[] for _ in range(len(body.output) - 1 - n_carried)]
    i = 0
    while going and (trip is None or i < trip):
        if i == MAX_UNROLL:
            _too_many(node, f"unknown (the condition is still true after {MAX_UNROLL} iterations)")
        local = {body.input[0].name: Constant(np.array(i, np.int64), body.input[0].name),
                 body.input[1].name: Constant(np.array(going), body.input[1].name)}
        local.update({vi.name: v for vi, v in zip(body.input[2:], carried)})
        outs = run_graph(body, local)
        going = _flag(node, outs[0], f"the body's condition '{shown(body.output[0].name)}'", hint)
        carried = outs[1:1 + n_carried]
        for k, v in enumerate(outs[1 + n_carried:]):
            scans[k].append(v)
        i += 1
    stacked = [_stack(node, vs, 0, f"scan output '{shown(body.output[1 + n_carried + k].name)}'")
               for k, vs in enumerate(scans)]
    return [*carried, *stacked][:len(node.proto.output)]


def _slice_at(node: Node, x: Expr, axis: int, index: int) -> Expr:
    """``x[..., index, ...]`` along ``axis``, that axis removed."""
    if isinstance(x, Constant):
        return Constant(np.take(x.value, index, axis=axis), node.name)
    shape = x.ty.shape
    begin, end = [0] * len(shape), list(shape)
    begin[axis], end[axis] = index, index + 1
    cut = slice_expr(x, begin, end, [1] * len(shape), node.name)
    return call("reshape", cut, newshape=tuple(shape[:axis]) + tuple(shape[axis + 1:]), span=node.name)


def _graph(node: Node, key: str):
    """The subgraph attribute ``key`` of an If / Loop / Scan node; TinyfuseError when the node has none
    (a damaged or hand-edited file)."""
    g = node.attrs.get(key)
    if not isinstance(g, onnx.GraphProto):
        raise node.error(f"has no '{key}' graph attribute (damaged file?)")
    return g


def _axes(node: Node, key: str, n: int, ranks: list[int]) -> list[int]:
    axes = list(node.attr(key) or [0] * n)
    if len(axes) != n or any(not -r <= a < r for a, r in zip(axes, ranks)):
        raise node.error(f"{key} {axes} do not fit {n} tensors of rank {ranks}")
    return [a % r for a, r in zip(axes, ranks)]


def unroll_scan(node: Node, env, run_graph: Callable) -> list[Expr]:
    """Scan: the body converted once per slice of the scan inputs (module doc). Scan-8 (batch axis,
    sequence_lens) is refused: onnx.version_converter rewrites it without its batch axis."""
    body = _graph(node, "body")
    n_in = int(node.attr("num_scan_inputs"))
    args = [env[n] for n in node.proto.input]
    n_state = len(args) - n_in
    if node.declared_opset < 9:
        raise node.error("Scan-8 (a batch axis and sequence_lens) is not supported; onnx.version_converter "
                         "drops its batch axis", "export the model with opset 9 or newer")
    if n_in < 1 or len(body.input) != len(args):
        raise node.error(f"{n_in} scan inputs and {n_state} states do not fit a body of {len(body.input)} inputs")
    return _scan(node, args[:n_state], args[n_state:], run_graph)


def _scan(node: Node, states: list[Expr], xs: list[Expr], run_graph: Callable) -> list[Expr]:
    body, n_state, n_in = _graph(node, "body"), len(states), len(xs)
    in_axes = _axes(node, "scan_input_axes", n_in, [x.ty.ndim for x in xs])
    in_dirs = list(node.attr("scan_input_directions") or [0] * n_in)
    lengths = {x.ty.shape[a] for x, a in zip(xs, in_axes)}
    if len(lengths) != 1:
        raise node.error(f"the scan inputs have lengths {sorted(lengths)} along their scan axes; they must agree")
    steps = lengths.pop()
    if steps > MAX_UNROLL:
        _too_many(node, steps)
    n_out = len(body.output) - n_state
    outs_dirs = list(node.attr("scan_output_directions") or [0] * n_out)
    scans: list[list[Expr]] = [[] for _ in range(n_out)]
    for t in range(steps):
        local = {vi.name: v for vi, v in zip(body.input[:n_state], states)}
        for vi, x, a, d in zip(body.input[n_state:], xs, in_axes, in_dirs):
            local[vi.name] = _slice_at(node, x, a, steps - 1 - t if d else t)
        outs = run_graph(body, local)
        states = outs[:n_state]
        for k, v in enumerate(outs[n_state:]):
            scans[k].append(v)
    out_axes = list(node.attr("scan_output_axes") or [0] * n_out)
    stacked = [_stack(node, vs[::-1] if d else vs, a, f"scan output '{shown(body.output[n_state + k].name)}'")
               for k, (vs, a, d) in enumerate(zip(scans, out_axes, outs_dirs))]
    return [*states, *stacked]


def condition_feeders(nodes) -> dict[str, str]:
    """Value name → 'If 'name'' / 'Loop 'name'' for every value the condition (or trip count) of a
    control-flow node is computed from, walking producers back from it."""
    producer = {o: n for n in nodes for o in n.output if o}
    out: dict[str, str] = {}
    for n in nodes:
        starts = [n.input[0]] if n.op_type == "If" else [i for i in n.input[:2] if i] if n.op_type == "Loop" else []
        stack = [i for i in starts if i]
        while stack:
            v = stack.pop()
            if v in out or v not in producer:
                continue
            out[v] = f"{n.op_type} '{shown(n.name or n.output[0])}'"
            stack += [i for i in producer[v].input if i]
    return out


def unsupported_condition(node: Node, args: list, feeders: dict[str, str]):
    """The error for an unsupported node that computes a control-flow condition at run time (bind its
    inputs and it folds), or None."""
    user = next((feeders[o] for o in node.proto.output if o in feeders), None)
    if user is None:
        return None
    deps = list(dict.fromkeys(d for a in args if a is not None for d in runtime_inputs(a)))
    src = f" from input {', '.join(repr(shown(d)) for d in deps)}" if deps else ""
    return node.error(f"operator not supported by tinyfuse; it computes the condition of {user}{src} at run time",
                      "bind the inputs it depends on (--bind NAME=VALUE) so it folds at compile time")


CONTROL_FLOW: dict[str, Callable] = {"If": inline_if, "Loop": unroll_loop, "Scan": unroll_scan}

__all__ = ["CONTROL_FLOW", "MAX_UNROLL", "condition_feeders", "inline_if", "unroll_loop", "unroll_scan",
           "unsupported_condition"]
