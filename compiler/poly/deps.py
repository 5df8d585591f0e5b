"""Memory-level dependence checks for in-place kernels, line buffers and scratch reuse (ISLPY.md §2,
§3b, ex5b/ex5c).

A kernel is described for a proof as a list of :class:`Access` statements: an isl domain, a
schedule (time vector, same length for all statements) and read/write relations to named arrays,
e.g. ``X[h, w + s - 1, c]``. :class:`Layout` places arrays in one flat byte space ``Mem`` (an input
and the output an in-place kernel writes over it share ``Mem`` at a byte ``delta``), so two arrays
alias exactly where their bytes do.

Checks (all return isl objects; empty / equal means proven):

- :func:`clobbered_reads`: pairs (write instance → later read instance) that touch the same byte of
  ``Mem``, where the read wants the array's *original* value (a live-in): the read would see the
  kernel's own write. Empty ⇒ the in-place layout is legal for this schedule.
- :func:`flow_mismatch`: value-based flow (``compute_flow``) of the reads of scratch arrays (line
  buffers, tiles, pixel buffers) compared with the intended producer of each read: every read must
  see exactly the write that computed its value, not one clobbered by a later reuse of the slot.

An instance reads its operands before it writes (a statement instance is atomic); only strictly
earlier writes can clobber a read.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl


@dataclass(frozen=True)
class Access:
    """One statement of a proof model. ``reads``/``writes``: access relations as isl range strings
    over ``dims`` (``"X[h, w, c]"``; extra constraints after ``:``, existential variables allowed as
    ``"P[a, b] : exists r: a = h + r and 0 <= r < 3"``-style text inside the range)."""

    name: str
    dims: tuple[str, ...]
    constraints: str
    time: tuple[str, ...]
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()

    @property
    def head(self) -> str:
        return f"{self.name}[{', '.join(self.dims)}]"


def _umap(parts: list[str]) -> isl.UnionMap:
    return isl.UnionMap("{ " + "; ".join(parts) + " }") if parts else isl.UnionMap("{ }")


def _relation(a: Access, target: str) -> str:
    rng, _, extra = target.partition(":")
    cond = f"{a.constraints} and {extra}" if extra.strip() else a.constraints
    return f"{a.head} -> {rng.strip()} : {cond}"


class Model:
    """Domains, schedule and accesses of a kernel (or fused group) as isl union objects: from a list
    of :class:`Access` (strings), or given directly as isl objects (schedules computed by isl)."""

    def __init__(self, accesses: list[Access] | None = None, *, domain=None, schedule=None, reads=None,
                 writes=None):
        if accesses is None:
            self.domain, self.schedule = domain, schedule.intersect_domain(domain)
            self.reads = reads.intersect_domain(domain).coalesce()
            self.writes = writes.intersect_domain(domain).coalesce()
            return
        lengths = {len(a.time) for a in accesses}
        if len(lengths) != 1:
            raise ValueError(f"schedules of different lengths: {[(a.name, len(a.time)) for a in accesses]}")
        self.domain = isl.UnionSet("{ " + "; ".join(f"{a.head} : {a.constraints}" for a in accesses) + " }")
        self.schedule = _umap([f"{a.head} -> [{', '.join(a.time)}] : {a.constraints}" for a in accesses])
        self.reads = _umap([_relation(a, r) for a in accesses for r in a.reads]).coalesce()
        self.writes = _umap([_relation(a, w) for a in accesses for w in a.writes]).coalesce()


@dataclass(frozen=True)
class Layout:
    """Arrays in one flat byte space: ``arrays[name] = (shape, element bytes, byte offset)``. An
    array not listed keeps its own space (it aliases nothing)."""

    arrays: dict

    def to_memory(self) -> isl.UnionMap:
        parts = []
        for name, (shape, esize, base) in self.arrays.items():
            idx = [f"i{d}" for d in range(len(shape))]
            flat, stride = "0", 1
            for d in reversed(range(len(shape))):
                flat = f"{flat} + {stride} * {idx[d]}"
                stride *= shape[d]
            bounds = " and ".join(f"0 <= {i} < {n}" for i, n in zip(idx, shape)) or "true"
            byte = f"{esize} * ({flat}) + {base}"
            parts.append(f"{name}[{', '.join(idx)}] -> Mem[m] : {bounds} and {byte} <= m < {byte} + {esize}")
        return _umap(parts)

    def apply(self, accesses: isl.UnionMap) -> isl.UnionMap:
        """Accesses to listed arrays rewritten as accesses to ``Mem`` bytes; others unchanged."""
        mem = self.to_memory()
        listed = mem.domain()
        return accesses.subtract_range(listed).union(accesses.apply_range(mem)).coalesce()


def _before(schedule: isl.UnionMap) -> isl.UnionMap:
    return schedule.lex_lt_union_map(schedule)


def clobbered_reads(model: Model, layout: Layout, live_in: tuple[str, ...]) -> isl.UnionMap:
    """{ write instance -> read instance } where a read of a ``live_in`` array (it wants the value
    from before the kernel) runs after a write of the kernel to one of its bytes. Empty = legal."""
    want = isl.UnionSet("{ " + "; ".join(f"{n}[{', '.join(f'i{d}' for d in range(len(layout.arrays[n][0])))}]"
                                         for n in live_in) + " }")
    reads = layout.apply(model.reads.intersect_range(want))
    writes = layout.apply(model.writes)
    return writes.apply_range(reads.reverse()).intersect(_before(model.schedule)).coalesce()


def conflicts(model: Model, layout: Layout, written: str, read: str) -> isl.UnionMap:
    """{ write instance -> read instance } pairs (any order) whose bytes of ``written`` and ``read``
    overlap: the schedule-free form of the in-place check. A kernel whose output element is written
    once, by the instance that read the aliased input element, is legal in any loop order iff every
    pair is an instance with itself."""
    def of(umap, name):
        return layout.apply(umap.intersect_range(isl.UnionSet(
            "{ " + f"{name}[{', '.join(f'i{d}' for d in range(len(layout.arrays[name][0])))}]" + " }")))
    return of(model.writes, written).apply_range(of(model.reads, read).reverse()).coalesce()


def only_self_conflicts(model: Model, layout: Layout, written: str, read: str) -> bool:
    return conflicts(model, layout, written, read).is_subset(model.domain.identity())


def flow_mismatch(model: Model, scratch: tuple[tuple[str, int], ...], intended: isl.UnionMap) -> isl.UnionMap:
    """Value-based flow of the reads of ``scratch`` arrays vs ``intended`` ({ producer instance ->
    reader instance }); ``scratch`` = ((array name, rank), ...). Returns the symmetric difference (empty = every read sees its producer's
    value and nothing else) plus the reads with no producer at all."""
    names = isl.UnionSet("{ " + "; ".join(f"{n}[{', '.join(f'i{d}' for d in range(dims))}]"
                                           for n, dims in scratch) + " }")
    sink = model.reads.intersect_range(names)
    src = model.writes.intersect_range(names)
    flow = (isl.UnionAccessInfo.from_sink(sink).set_must_source(src)
            .set_schedule_map(model.schedule).compute_flow())
    got = flow.get_must_dependence()
    orphan = flow.get_must_no_source()
    diff = got.subtract(intended).union(intended.subtract(got))
    if not orphan.is_empty():
        diff = diff.union(orphan)
    return diff.coalesce()


def intended_flow(model: Model, relation: str, same_cell: bool = False) -> isl.UnionMap:
    """The intended { producer instance -> reader instance } relation for :func:`flow_mismatch`, from
    ``relation`` (isl union-map text over the model's statement names), restricted to the model's
    instances. ``same_cell``: keep only the pairs in which the producer writes an array element the
    reader reads (the relation then only needs to say which producer, e.g. ``k2 = k``)."""
    rel = isl.UnionMap(relation)
    if same_cell:
        return model.writes.apply_range(model.reads.reverse()).intersect(rel)
    return rel.intersect_domain(model.domain).intersect_range(model.domain)
