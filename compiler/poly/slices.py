"""Step fission (``--max-step-instructions``): loop nests that run one slice of their schedule.

Given a :class:`SliceRequest` (``tinyfuse.lower.slicing``, through the lowering context),
``isl_helpers.schedule_to_c`` generates each loop nest for the statement instances whose time lies in
a slice ``[tf_lo, tf_hi)`` (two int parameters of the kernel) of a linear index L of the schedule:

- depth 1: L is the first time dimension that takes more than one value (``split_dimension``); every
  earlier dimension is constant, so consecutive slices run the instances in the original order. A
  dimension that only orders the statements (constant within each one: S_init before S_mac before
  S_out of the same output point) is never split at depth 1: kernels hand values from one statement to
  the next in local variables (accumulators, tap pointers), which do not survive from one step to the
  next; such a nest is not sliced (one step) unless its family asks for a deeper L below;
- depth k > 1: L linearises that dimension and the k - 1 after it (row-major over their value
  ranges), still the lexicographic order of the schedule, so still the original order; the kernel must
  keep no state in local variables across those dimensions (the SIMD blocked kernels, whose
  accumulators live inside one block and whose im2col column and pixel buffer are arena scratch; the
  portable conv over its output dimensions only, ``SliceRequest.limit``).

Each call appends a :class:`Slice` (or None: nothing varies) to the request's ``found``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl


@dataclass
class Slice:
    """The range [lo, hi) of L, and (depth > 1) the sorted values L takes (one per instance time
    prefix), so pieces can hold equal numbers of them."""

    lo: int
    hi: int
    points: list[int] | None = None


@dataclass
class SliceRequest:
    """``depth``: how many time dimensions L spans; ``limit``: L never reaches time dimension ``limit``
    or beyond (the portable reduction nests keep their accumulator in a register from the first
    dimension after the output ones: conv2d's (n, h, w, g, m) -> limit 5)."""

    depth: int = 1
    limit: int = 1 << 30
    found: list = field(default_factory=list)


def _bounds(times: isl.Set, d: int) -> tuple[int, int] | None:
    """[lo, hi) of time dimension d over ``times``; None when it takes a single value."""
    n = times.dim(isl.dim_type.set)
    proj = times.project_out(isl.dim_type.set, d + 1, n - d - 1).project_out(isl.dim_type.set, 0, d)
    if proj.is_singleton():
        return None
    lo = proj.lexmin().sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python()
    hi = proj.lexmax().sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python()
    return lo, hi + 1


def split_dimension(schedule: isl.UnionMap) -> tuple[int, int, int] | None:
    """(d, lo, hi): the first time dimension of ``schedule`` that takes more than one value, and its
    values' range [lo, hi). None: a single instance time, or times in more than one space."""
    rng = schedule.range()
    if rng.n_set() != 1:
        return None
    times = isl.Set.from_union_set(rng)
    for d in range(times.dim(isl.dim_type.set)):
        b = _bounds(times, d)
        if b is not None:
            return d, b[0], b[1]
    return None


def _linear(times: isl.Set, d: int, depth: int) -> tuple[str, int, list[int]]:
    """(C/isl text of L over dims d..d+depth-1, its extent, the sorted values it takes)."""
    n = times.dim(isl.dim_type.set)
    dims = list(range(d, min(n, d + depth)))
    ranges = [(_bounds(times, i) or (_value(times, i), _value(times, i) + 1)) for i in dims]
    strides, stride = [], 1
    for lo, hi in reversed(ranges):
        strides.insert(0, stride)
        stride *= hi - lo
    text = " + ".join(f"{s} * (t{i} - ({lo}))" for i, s, (lo, _) in zip(dims, strides, ranges))
    prefix = times.project_out(isl.dim_type.set, dims[-1] + 1, n - dims[-1] - 1).project_out(isl.dim_type.set, 0, d)
    points: list[int] = []
    prefix.foreach_point(lambda p: points.append(sum(
        s * (p.get_coordinate_val(isl.dim_type.set, j).to_python() - lo)
        for j, (s, (lo, _)) in enumerate(zip(strides, ranges)))))
    return text, stride, sorted(points)


def _value(times: isl.Set, d: int) -> int:
    n = times.dim(isl.dim_type.set)
    proj = times.project_out(isl.dim_type.set, d + 1, n - d - 1).project_out(isl.dim_type.set, 0, d)
    return proj.lexmin().sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python()


def orders_statements(schedule: isl.UnionMap, d: int) -> bool:
    """Whether time dimension ``d`` is constant within every statement of ``schedule``: it only puts
    the statements of one instance in order."""
    constant = []

    def one(m: isl.Map) -> None:
        r = m.range()
        n = r.dim(isl.dim_type.set)
        constant.append(r.project_out(isl.dim_type.set, d + 1, n - d - 1).project_out(isl.dim_type.set, 0, d)
                        .is_singleton())

    schedule.foreach_map(one)
    return all(constant)


def sliced(schedule: isl.UnionMap, request: SliceRequest) -> tuple[isl.UnionMap, isl.Set]:
    """``schedule`` restricted to tf_lo <= L < tf_hi (module doc; the Slice appended to
    ``request.found``) and the AST build context; unchanged with an empty context when nothing varies
    or when L would be a dimension at or past ``request.limit`` or, at depth 1, one that only orders
    the statements."""
    found = split_dimension(schedule)
    d = found[0] if found is not None else 0
    if found is None or d >= request.limit:
        request.found.append(None)
        return schedule, isl.Set("{ : }")
    d, lo, hi = found
    times = isl.Set.from_union_set(schedule.range())
    n = times.dim(isl.dim_type.set)
    depth = min(request.depth, n - d, request.limit - d)
    if depth <= 1 and orders_statements(schedule, d):
        request.found.append(None)
        return schedule, isl.Set("{ : }")
    if depth > 1:
        text, extent, points = _linear(times, d, depth)
        request.found.append(Slice(0, extent, points))
        lo, hi = 0, extent
    else:
        text = f"t{d}"
        request.found.append(Slice(lo, hi))
    t = ", ".join(f"t{i}" for i in range(n))
    part = isl.Set(f"[tf_lo, tf_hi] -> {{ [{t}] : tf_lo <= {text} < tf_hi }}")
    return (schedule.intersect_range(isl.UnionSet.from_set(part)),
            isl.Set(f"[tf_lo, tf_hi] -> {{ : {lo} <= tf_lo < tf_hi <= {hi} }}"))


__all__ = ["orders_statements", "Slice", "SliceRequest", "sliced", "split_dimension"]
