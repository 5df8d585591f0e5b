"""Static arena planning for intermediate tensors (TFLM ``memory_planner`` style).

Every buffer has a byte size and a lifetime ``[first, last]`` (inclusive kernel indices;
``first == -1`` means live from the start, a huge ``last`` means live to the end). Two
buffers *conflict* iff their lifetimes intersect. A plan gives each buffer a byte offset
in one arena.

Invariant of every plan: offsets are multiples of ``alignment`` and conflicting buffers
occupy disjoint ranges ``[offset, offset + aligned_size)``. Zero-size buffers get offset 0
and are ignored. All sizes and offsets are in bytes.

In-place clusters: buffers with the same non-empty ``group`` are placed rigidly together, member
``rel`` bytes above the cluster's offset (an in-place kernel writes its output over its dying input:
both start at one offset). Members of a cluster never conflict with each other (the in-place proof
in ``tinyfuse.memory.inplace`` covers the one kernel where two of them are both live); each member
conflicts with other buffers over its own lifetime only, so a chain of in-place tensors costs the
largest live member at every moment, not the largest member over the whole chain.

Known limits: finding the smallest arena is NP-hard (dynamic storage allocation). The
greedy planners are fast but not optimal; ``best`` adds a short deterministic hill-climb,
which still may not reach ``lower_bound`` (a bound that is not always achievable).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Sequence

from ..targets import ARENA_ALIGN

LIVE_TO_END = 10**8      # a Buffer.last at or beyond this is "live to the end of the run" (arena.END is 10**9)


@dataclass(frozen=True)
class Buffer:
    name: str
    size: int        # bytes
    first: int       # first kernel using it (producer); -1 = live from the start
    last: int        # last kernel reading it; a large number = live to the end
    group: str = ""  # in-place cluster ("" = none): members are placed together
    rel: int = 0     # byte offset of this member inside its cluster (multiple of the alignment)


@dataclass(frozen=True)
class Plan:
    offsets: dict[str, int]  # name -> byte offset in the arena
    arena_bytes: int         # max(offset + aligned size), 0 for an empty plan
    lower_bound: int         # max over time of the live aligned bytes
    planner: str             # name of the planner that produced the offsets


def _align(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def _conflict(a: Buffer, b: Buffer) -> bool:
    if a.group and a.group == b.group:
        return False
    return a.first <= b.last and b.first <= a.last


def _units(buffers: Sequence[Buffer]) -> list[list[Buffer]]:
    """Placement units: each cluster as one unit (members in input order), other buffers alone."""
    units: list[list[Buffer]] = []
    where: dict[str, list[Buffer]] = {}
    for b in buffers:
        if b.group:
            if b.group not in where:
                where[b.group] = []
                units.append(where[b.group])
            where[b.group].append(b)
        else:
            units.append([b])
    return units


def _unit_size(unit: Sequence[Buffer], alignment: int) -> int:
    return max((m.rel + _align(m.size, alignment) for m in unit if m.size), default=0)


def _place(order: Sequence[Buffer], alignment: int) -> dict[str, int]:
    """Place buffers in ``order``, each at the lowest aligned offset that fits in a gap
    between already-placed conflicting buffers (first fit). A cluster is placed, rigidly, when its
    first member comes up: the lowest offset where every member fits."""
    offsets: dict[str, int] = {}
    placed: list[tuple[Buffer, int, int]] = []  # (buffer, start, end)
    members = {u[0].group: u for u in _units(order) if u[0].group}
    done: set[str] = set()
    for buf in order:
        if buf.group and buf.group in done:
            continue
        unit = members[buf.group] if buf.group else [buf]
        done.add(buf.group)
        live = [m for m in unit if m.size]
        offset = _first_fit(live, placed, alignment)
        for m in unit:
            offsets[m.name] = offset + m.rel if m.size else 0
        placed += [(m, offset + m.rel, offset + m.rel + _align(m.size, alignment)) for m in live]
    return offsets


def _first_fit(unit: Sequence[Buffer], placed: list[tuple[Buffer, int, int]], alignment: int) -> int:
    """Lowest aligned offset o with every member's [o + rel, o + rel + size) free of conflicts."""
    if not unit:
        return 0
    busy = [[(s - m.rel, e - m.rel) for b, s, e in placed if _conflict(b, m)] for m in unit]
    cands = sorted({0} | {e for spans in busy for _, e in spans if e >= 0})
    for offset in cands:
        if all(not any(offset + _align(m.size, alignment) > s and offset < e for s, e in spans)
               for m, spans in zip(unit, busy)):
            return offset
    raise AssertionError("unreachable: the end of every conflicting buffer is a candidate")


def _arena(buffers: Sequence[Buffer], offsets: dict[str, int], alignment: int) -> int:
    return max((offsets[b.name] + _align(b.size, alignment) for b in buffers if b.size), default=0)


def _size_order(buffers: Sequence[Buffer]) -> list[Buffer]:
    # a cluster sorts by its largest member (its first member placed brings the whole cluster)
    big = {}
    for b in buffers:
        if b.group:
            big[b.group] = max(big.get(b.group, 0), b.size)
    return sorted(buffers, key=lambda b: (-(big[b.group] if b.group else b.size), b.first, b.name))


def _conflict_order(buffers: Sequence[Buffer], alignment: int) -> list[Buffer]:
    def pressure(b: Buffer) -> int:
        return sum(_align(o.size, alignment) for o in buffers if o is not b and _conflict(o, b))
    return sorted(buffers, key=lambda b: (-pressure(b), -b.size, b.first, b.name))


def greedy_by_size(buffers: Sequence[Buffer], alignment: int) -> dict[str, int]:
    """Largest buffer first (ties: earlier ``first``, then name), first-fit placement."""
    return _place(_size_order(buffers), alignment)


def greedy_by_conflicts(buffers: Sequence[Buffer], alignment: int) -> dict[str, int]:
    """Buffers with the most conflicting bytes first, then first-fit placement."""
    return _place(_conflict_order(buffers, alignment), alignment)


def linear(buffers: Sequence[Buffer], alignment: int) -> dict[str, int]:
    """Naive baseline: every buffer (cluster) after the previous one, no reuse at all."""
    offsets, cursor = {}, 0
    for unit in _units(buffers):
        for m in unit:
            offsets[m.name] = cursor + m.rel if m.size else 0
        cursor += _unit_size(unit, alignment)
    return offsets


def _choose_best(buffers: Sequence[Buffer], alignment: int, iterations: int = 200) -> tuple[str, dict[str, int]]:
    """Run every basic planner, then hill-climb over placement orders.

    Steps: (1) run greedy_by_size, greedy_by_conflicts, linear; keep the smallest arena
    (earlier planner wins ties). (2) Unless that already equals the lower bound, start from
    the better greedy order and, ``iterations`` times, swap two random positions
    (``random.Random(0)``, so deterministic), re-place, and keep the swap if the arena does
    not grow; stop early at the lower bound. The hill-climb wins only if strictly smaller.
    """
    bound = _lower_bound(buffers, alignment)
    results = [(name, PLANNERS[name](buffers, alignment)) for name in ("greedy_by_size", "greedy_by_conflicts", "linear")]
    name, offsets = min(results, key=lambda r: _arena(buffers, r[1], alignment))
    best = _arena(buffers, offsets, alignment)
    live = [b for b in buffers if b.size]
    if best == bound or len(live) < 3:
        return name, offsets
    orders = [_size_order(live), _conflict_order(live, alignment)]
    order = min(orders, key=lambda o: _arena(live, _place(o, alignment), alignment))
    current = _arena(live, _place(order, alignment), alignment)
    rng = random.Random(0)
    for _ in range(iterations):
        i, j = rng.sample(range(len(order)), 2)
        order[i], order[j] = order[j], order[i]
        arena = _arena(live, _place(order, alignment), alignment)
        if arena <= current:
            current = arena
            if current == bound:
                break
        else:
            order[i], order[j] = order[j], order[i]
    if current < best:
        name, offsets = "hill_climb", _place(order + [b for b in buffers if not b.size], alignment)
    return name, offsets


PLANNERS: dict[str, Callable[[Sequence[Buffer], int], dict[str, int]]] = {
    "greedy_by_size": greedy_by_size,
    "greedy_by_conflicts": greedy_by_conflicts,
    "linear": linear,
    "best": lambda buffers, alignment: _choose_best(buffers, alignment)[1],
}


def _lower_bound(buffers: Sequence[Buffer], alignment: int) -> int:
    # The live total only rises at some buffer's ``first``, so checking those steps suffices.
    # A cluster counts the union of its live members' byte ranges.
    def live(t: int) -> int:
        total, spans = 0, {}
        for b in buffers:
            if b.first <= t <= b.last and b.size:
                if b.group:
                    spans.setdefault(b.group, []).append((b.rel, b.rel + _align(b.size, alignment)))
                else:
                    total += _align(b.size, alignment)
        for ivs in spans.values():      # length of the union of the intervals
            reach = None
            for s, e in sorted(ivs):
                start = s if reach is None else max(s, reach)
                total += max(0, e - start)
                reach = e if reach is None else max(reach, e)
        return total
    return max((live(t) for t in {b.first for b in buffers}), default=0)


def plan_memory(buffers: Sequence[Buffer], alignment: int = ARENA_ALIGN, planner: str = "best") -> Plan:
    """Assign arena offsets (bytes) to ``buffers`` with the named planner; see module doc."""
    if planner not in PLANNERS:
        raise ValueError(f"unknown memory planner {planner!r}; choose one of {sorted(PLANNERS)}")
    if not isinstance(alignment, int) or alignment < 1:
        raise ValueError(f"alignment must be a positive integer number of bytes, got {alignment!r}")
    names = set()
    for b in buffers:
        if b.size < 0:
            raise ValueError(f"buffer {b.name!r} has negative size {b.size} bytes")
        if b.last < b.first:
            raise ValueError(f"buffer {b.name!r} has last={b.last} before first={b.first}")
        if b.name in names:
            raise ValueError(f"duplicate buffer name {b.name!r}")
        if b.rel % alignment or b.rel < 0:
            raise ValueError(f"buffer {b.name!r}: cluster offset {b.rel} is not a non-negative multiple of {alignment}")
        names.add(b.name)
    if planner == "best":
        planner, offsets = _choose_best(buffers, alignment)
    else:
        offsets = PLANNERS[planner](buffers, alignment)
    return Plan(offsets, _arena(buffers, offsets, alignment), _lower_bound(buffers, alignment), planner)


def format_plan(plan: Plan, buffers: Sequence[Buffer]) -> str:
    """Fixed-width table (buffer, size, offset, first, last) sorted by offset then first; a ``last`` of
    LIVE_TO_END or more (a model output, live to the end) prints as ``end``."""
    rows = sorted(buffers, key=lambda b: (plan.offsets[b.name], b.first, b.name))
    width = max([len("buffer")] + [len(b.name) for b in rows])

    def last(b: Buffer) -> str:
        return "end" if b.last >= LIVE_TO_END else str(b.last)
    lines = [f"{'buffer':<{width}}  {'size':>10}  {'offset':>10}  {'first':>6}  {'last':>6}"]
    lines += [f"{b.name:<{width}}  {b.size:>10}  {plan.offsets[b.name]:>10}  {b.first:>6}  {last(b):>6}" for b in rows]
    lines.append(f"arena {plan.arena_bytes} bytes, lower bound {plan.lower_bound} bytes, planner {plan.planner}")
    return "\n".join(lines)
