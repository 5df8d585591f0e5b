"""ring_buffer: streaming state updated by a shift (slice + concat + assign) becomes a ring buffer
with a moving head, so no frame copies the whole state.

A streaming convolution (microWakeWord, TFLite ``stream`` layers) keeps the last T frames of its
input as state S and per frame computes ``c = concat(S, x)`` (x: the new frames) for its kernel,
then stores ``S' = c[len(x):]``. As bytes: c is S followed by x, and S' is the last |S| bytes of c.
If c lives in the state region as a window that moves by |x| bytes per frame, then

- the concatenation is only the copy of x behind S (S is already there, where the last frame left it),
- the new state is already where the next window starts: nothing is stored back,

and every reader of c reads the same bytes as before. The window reaches the end of the region
every few frames; then the |S| live bytes move to its start (codegen, ``<name>_run``). The pass
only marks the state (``State.ring_step``: |x|); the memory plan keeps c out of the arena and the
code generator emits the window. It applies where it is provably the same computation:

- the state's new value is a ``slice_view`` of a kernel whose body is a single two-input
  ``concatenate`` of (the state parameter, x) with all axes before the concatenation axis of size 1
  (so c's bytes are S's bytes then x's), and the view is c's last |S| bytes;
- the state parameter has no other reader, and c is no model output nor another state's value;
- |x| is a multiple of the arena alignment (16 bytes), so every window start stays aligned for
  the kernels that read it.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..ir import Call, Function, IRModule, Var, post_order

ALIGN = 16      # targets.ARENA_ALIGN (passes may not import targets)


def _single_concat(fn: Function) -> bool:
    body = fn.body
    if not (isinstance(body, Call) and body.op == "concatenate" and len(body.args) == 2):
        return False
    if tuple(body.args) != tuple(fn.params):
        return False
    axis = body.attrs["axis"] % len(body.ty.shape)
    return all(d == 1 for d in body.ty.shape[:axis])


def ring_step(func: Function, param: Var, out, users: dict[int, int], others: set[int]) -> int:
    """|x| in bytes when state ``param`` with new value ``out`` is a ring buffer (module doc), else 0.
    ``users``: id(expr) -> number of uses; ``others``: ids of the other outputs."""
    if not (isinstance(out, Call) and out.op == "slice_view"):
        return 0
    c = out.args[0]
    if not (isinstance(c, Call) and isinstance(c.op, Function) and _single_concat(c.op)):
        return 0
    s, x = c.args
    if s is not param or users.get(id(param), 0) != 1 or id(c) in others:
        return 0
    step = x.ty.nbytes
    if out.ty.nbytes != param.ty.nbytes or c.ty.nbytes != param.ty.nbytes + step:
        return 0
    if out.attrs["offset"] * np.dtype(out.ty.dtype).itemsize != step or step % ALIGN:
        return 0
    return step


def ring_buffer(mod: IRModule) -> IRModule:
    """Mark the states of ``mod`` that are ring-buffer shifts (``State.ring_step``)."""
    if not mod.states:
        return mod
    func, n = mod.main, len(mod.states)
    users: dict[int, int] = {}
    for node in post_order(func.body):
        if isinstance(node, Call):
            for a in node.args:
                users[id(a)] = users.get(id(a), 0) + 1
    outputs = list(func.outputs)
    params = func.params[len(func.params) - n:]
    states = []
    for k, (st, p) in enumerate(zip(mod.states, params)):
        out = outputs[len(outputs) - n + k]
        others = _roots([o for i, o in enumerate(outputs) if i != len(outputs) - n + k])
        states.append(dataclasses.replace(st, ring_step=ring_step(func, p, out, users, others)))
    return dataclasses.replace(mod, states=tuple(states))


def _roots(exprs) -> set[int]:
    """ids of ``exprs`` and of everything they are views of."""
    out = set()
    for e in exprs:
        out.add(id(e))
        while isinstance(e, Call) and not isinstance(e.op, Function):
            e = e.args[0]
            out.add(id(e))
    return out
