"""The persistent state region of a stateful model (``IRModule.states``), apart from the arena.

Layout (``<NAME>_STATE_SIZE`` bytes, every part at a multiple of ``ARENA_ALIGN``):

1. when some state is a ring buffer (passes/ring_buffer.py): one ``uint32_t`` head per ring, the
   byte offset of its current window inside its buffer;
2. every state in ``IRModule.states`` order: a plain state takes its bytes; a ring buffer takes
   ``capacity`` bytes, room for its window (state + one step) plus ``slack`` more steps, so the
   live state moves back to the buffer start once every ``slack + 1`` frames (the ``memmove`` of
   ``<name>_run``): on average ``|S| / (slack + 1)`` bytes a frame, with ``slack = ceil(|S| / (2 step))``,
   about two steps.

Where a kernel finds a value (:func:`locator`): a state parameter (and its views) in the state
region, read in place (a plain state is stored back only after the last kernel: no kernel sees
a state written in the same frame); a ring's concatenation (and its views) in the ring's window
``rw<i>``; the new bytes x of a ring, when a kernel computes them for the concatenation alone, in
the window right behind the state (its kernel writes them there: nothing is copied); everything
else in the arena.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import Call, Function, IRModule, post_order
from ..targets import ARENA_ALIGN


def _aligned(n: int) -> int:
    return -(-n // ARENA_ALIGN) * ARENA_ALIGN


@dataclass
class StateInfo:
    """One persistent state as the C API sees it (``ir.State``): its byte ``offset`` in the state
    region; how ``<name>_reset`` sets it (``init``: a weights array name, else every byte ``fill``).
    A plain state: its new value is computed in the arena at ``out_offset`` and stored back after
    the last kernel. A ring buffer (``ring_step`` > 0): ``capacity`` bytes at ``offset``, its head
    (``uint32_t`` number ``head``) at the region start, the window ``rw<head>`` holding the state
    then the step's new bytes."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    offset: int
    out_offset: int
    init: str | None = None
    fill: int = 0
    ring_step: int = 0
    capacity: int = 0
    head: int = -1

    @property
    def window(self) -> int:
        return self.nbytes + self.ring_step


def ring_capacity(nbytes: int, step: int) -> int:
    """Bytes of a ring buffer for a state of ``nbytes`` advancing ``step`` bytes a frame."""
    return nbytes + step + step * max(1, -(-nbytes // (2 * step)))


def state_split(mod: IRModule):
    """(state parameters, state values, ring concatenations by state index) of ``mod``."""
    func, n = mod.main, len(mod.states)
    if not n:
        return (), (), {}
    params, outs = func.params[len(func.params) - n:], list(func.outputs)[len(func.outputs) - n:]
    rings = {k: o.args[0] for k, (st, o) in enumerate(zip(mod.states, outs)) if st.ring_step}
    return params, outs, rings


def _roots(exprs) -> set[int]:
    return {i for e in exprs for i in (id(e), id(_root(e)))}


def appended_in_place(mod: IRModule) -> dict[int, Call]:
    """Ring index -> its new bytes x when x is a kernel's output read by the concatenation alone
    and no model output: that kernel writes x into the window (no arena bytes, no copy)."""
    _, _, rings = state_split(mod)
    if not rings:
        return {}
    uses: dict[int, int] = {}
    for node in post_order(mod.main.body):
        if isinstance(node, Call):
            for a in node.args:
                uses[id(a)] = uses.get(id(a), 0) + 1
    outputs = _roots(mod.main.outputs)
    return {k: c.args[1] for k, c in rings.items()
            if isinstance(c.args[1], Call) and isinstance(c.args[1].op, Function)
            and uses.get(id(c.args[1])) == 1 and id(c.args[1]) not in outputs}


def layout_states(mod: IRModule, offset, ref) -> list[StateInfo]:
    """The StateInfo of every state (module doc). ``offset(value)``: its arena byte offset;
    ``ref(array, key)``: the weights array name of an init value."""
    _, outs, rings = state_split(mod)
    at = _aligned(4 * len(rings)) if rings else 0
    infos = []
    for k, (st, o) in enumerate(zip(mod.states, outs)):
        init = ref(st.init.reshape(-1), ("state init", st.name)) if st.init is not None else None
        info = StateInfo(st.name, st.shape, st.dtype, st.nbytes, at, -1 if st.ring_step else offset(o), init,
                         st.fill)
        if st.ring_step:
            info.ring_step, info.head = st.ring_step, sorted(rings).index(k)
            info.capacity = ring_capacity(st.nbytes, st.ring_step)
        infos.append(info)
        at += _aligned(info.capacity or st.nbytes)
    return infos


def _root(e):
    while isinstance(e, Call) and not isinstance(e.op, Function):   # views share their operand's memory
        e = e.args[0]
    return e


def locator(mod: IRModule, offset, states: list[StateInfo]):
    """value -> (C base pointer, byte offset from it) where a kernel reads or writes it (module doc)."""
    params, _, rings = state_split(mod)
    home = {id(p): (p, "st", s.offset) for p, s in zip(params, states)}
    home |= {id(c): (c, f"rw{states[k].head}", 0) for k, c in rings.items()}
    home |= {id(x): (x, f"rw{states[k].head}", states[k].nbytes) for k, x in appended_in_place(mod).items()}

    def where(e):
        root = _root(e)
        if id(root) in home:
            v, base, at = home[id(root)]
            return base, at + offset(e) - offset(v)
        return "a", offset(e)
    return where


def external_values(mod: IRModule) -> frozenset:
    """ids of the values that take no arena bytes: state parameters and ring concatenations."""
    params, _, rings = state_split(mod)
    return frozenset(map(id, [*params, *rings.values(), *appended_in_place(mod).values()]))


def ring_copies(mod: IRModule, where, states: list[StateInfo]) -> dict[int, str]:
    """id(ring concatenation call) -> the C statement that replaces its kernel: the copy of the
    frame's new bytes behind the state in the window."""
    _, _, rings = state_split(mod)
    direct = appended_in_place(mod)
    out = {}
    for k, c in rings.items():
        x, s = c.args[1], states[k]
        base, off = where(x)
        out[id(c)] = (f"/* rw{s.head} + {s.nbytes}: written there by its producer */" if k in direct else
                      f"memcpy(rw{s.head} + {s.nbytes}, {base} + {off}, {s.ring_step});")
    return out


def copied_per_frame(states: list[StateInfo], steps) -> dict[str, float]:
    """Bytes a frame moves only to keep the state (a figure of the generated ``<name>_run``):

    - ``store_back``: plain states copied from the arena into the state region;
    - ``concat``: the output bytes of concatenation kernels that read a state (the shift's copy);
    - ``ring_append``: the new bytes copied behind a ring buffer's state (0 where their kernel
      writes them there);
    - ``ring_compaction``: the ring buffers' ``memmove`` averaged over its period;
    - ``total``: their sum. ``steps``: the compiled ``driver.Step`` list."""
    out = {"store_back": 0.0, "concat": 0.0, "ring_append": 0.0, "ring_compaction": 0.0}
    appends = " ".join(t.copy for t in steps if t.copy)
    for s in states:
        if s.ring_step:
            out["ring_append"] += s.ring_step if f"memcpy(rw{s.head} +" in appends else 0
            out["ring_compaction"] += s.nbytes / ((s.capacity - s.window) // s.ring_step + 1)
        else:
            out["store_back"] += s.nbytes
    for step in steps:
        if not step.copy and set(step.kernel.ops) == {"concatenate"} and "st" in step.in_bases:
            out["concat"] += step.call.ty.nbytes
    out["total"] = sum(out.values())
    return out
