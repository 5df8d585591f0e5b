"""Kernel order and in-place choices that minimise the arena peak (before offsets are assigned).

A :class:`KernelGraph` is what the planner needs to know about a model: tensor values with byte
sizes, kernels (inputs, output, scratch bytes) and, per kernel, the in-place options its lowering
offers (:class:`InPlace`: write the output over an input whose memory dies at this kernel, proven
legal by isl in ``tinyfuse.memory.inplace``). Every in-place output starts at its input's offset
(``delta`` = 0): the kernels that need it run their pixels in the direction that makes this legal
(shrinking outputs ascending, growing ones descending), so a chain of in-place tensors shares one
offset and the planner places it as one rigid cluster.

:func:`best_schedule` searches the kernel orders of a branching graph (residual blocks: shortcut
before or after the main path) and the in-place choices together:

1. Exact dynamic programming over the *done sets* (downsets of the DAG; a chain has n+1, a residual
   block adds a handful): ``peak(S) = min over ready k of max(mem(k | S), peak(S ∪ {k}))``, where
   ``mem(k | S)`` = every live value + k's output + scratch, the best in-place option of k applied
   when its input dies at k (16-byte aligned sizes, as the planner counts).
2. With that minimal peak P* fixed, a second pass over the same states minimises the summed cost
   (estimated extra instructions of in-place kernels; 0 for ones that reuse the normal kernel) among
   the orders that never exceed P*. Ties keep the original topological order.

Beyond ``max_states`` done sets (very wide graphs) the search falls back to the given order with the
in-place options chosen greedily. The peak is the live-bytes lower bound of the plan; the offsets
(``plan_memory``) may need more when fragmentation forces it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ..targets import ARENA_ALIGN

ALIGN = ARENA_ALIGN           # live bytes counted as the planner places them


def aligned(n: int, alignment: int = ALIGN) -> int:
    return -(-n // alignment) * alignment


@dataclass(frozen=True)
class InPlace:
    """The output may be written over ``args[arg]`` (same start offset, or ``rel`` bytes above it), if
    that input dies here.

    ``rule``: elementwise | residual_add | dw_plane | pixel_buffer | fused_chain; ``scratch``: bytes
    the in-place kernel needs instead of the normal kernel's scratch; ``cost``: estimated extra
    instructions against the normal kernel (0 when the same kernel code runs, only the pointers
    alias); ``proof``: what isl checked."""

    arg: int
    rule: str
    scratch: int = 0
    cost: float = 0.0
    proof: str = ""
    order: str = "ascending"      # pixel order of the in-place kernel
    rel: int = 0                  # the output starts this many bytes above the input (rule transpose; < 0:
                                  # the input starts -rel bytes above the output, rule conv_offset)


@dataclass
class Node:
    """One kernel: ``args`` are value names in call order, ``out`` its output value."""

    name: str
    args: list[str]
    out: str
    scratch: int = 0
    inplace: list[InPlace] = field(default_factory=list)
    ref: object = None            # the IR call (or anything the caller wants back)


@dataclass
class KernelGraph:
    sizes: dict[str, int]         # value -> bytes
    nodes: list[Node]             # a topological order (the fallback order)
    inputs: list[str]             # model inputs (live from the start)
    outputs: list[str]            # model outputs (live to the end)
    root: dict[int, str] = field(default_factory=dict)   # id(expr) -> value name, views resolved (memory.arena)


@dataclass
class Schedule:
    order: list[int]              # node indices in execution order
    inplace: dict[int, InPlace]   # node index -> chosen option (absent: out of place)
    peak: int                     # max over steps of live aligned bytes
    cost: float
    per_step: list[int]           # live bytes during each step of ``order``
    exact: bool = True            # False when the search fell back to the given order


def _consumers(g: KernelGraph) -> dict[str, list[int]]:
    cons: dict[str, list[int]] = {}
    for i, n in enumerate(g.nodes):
        for a in n.args:
            cons.setdefault(a, []).append(i)
    return cons


class _Model:
    """Live-bytes arithmetic over done sets (bitmasks of node indices)."""

    def __init__(self, g: KernelGraph):
        self.g = g
        self.n = len(g.nodes)
        self.cons = _consumers(g)
        self.size = {v: aligned(s) for v, s in g.sizes.items()}
        self.producer = {nd.out: i for i, nd in enumerate(g.nodes)}
        self.preds = [0] * self.n
        for i, nd in enumerate(g.nodes):
            for a in nd.args:
                if a in self.producer:
                    self.preds[i] |= 1 << self.producer[a]
        self.cons_mask = {v: sum(1 << c for c in cs) for v, cs in self.cons.items()}
        self.outputs = set(g.outputs)
        inputs = set(g.inputs)
        # per value: (producer bit or 0 for a model input, consumers mask or -1 for an output, bytes)
        self.table = [(0 if v in inputs else 1 << self.producer[v], -1 if v in self.outputs else
                       self.cons_mask.get(v, 0), s) for v, s in self.size.items() if v in inputs or v in self.producer]
        self._live: dict[int, int] = {}

    def live(self, done: int) -> int:
        """Bytes of the values alive between steps, once the kernels in ``done`` ran."""
        hit = self._live.get(done)
        if hit is None:
            hit = sum(s for bit, cons, s in self.table if (bit == 0 or done & bit) and cons & ~done)
            self._live[done] = hit
        return hit

    def step(self, k: int, done: int) -> list[tuple[int, InPlace | None]]:
        """(bytes live during kernel k, choice) for each way to run k after ``done``."""
        nd = self.g.nodes[k]
        base = self.live(done)
        out = self.size[nd.out]
        options = [(base + out + aligned(nd.scratch), None)]
        for opt in nd.inplace:
            v = nd.args[opt.arg]
            if nd.args.count(v) != 1 or v in self.outputs:
                continue
            if self.cons_mask.get(v, 0) & ~(done | 1 << k):    # read again later: not dead here
                continue
            iv = self.size[v]
            union = max(iv, opt.rel + out) if opt.rel >= 0 else max(out, iv - opt.rel)
            options.append((base - iv + union + aligned(opt.scratch), opt))
        return options

    def ready(self, done: int) -> list[int]:
        return [k for k in range(self.n) if not done >> k & 1 and self.preds[k] & done == self.preds[k]]


def best_schedule(g: KernelGraph, max_states: int = 20000) -> Schedule:
    """Order + in-place choices with the smallest live peak, then the smallest cost (module doc)."""
    m = _Model(g)
    full = (1 << m.n) - 1
    states = [0]

    @lru_cache(maxsize=None)
    def peak(done: int) -> int:
        if done == full:
            return m.live(done)
        states[0] += 1
        if states[0] > max_states:
            raise _TooWide
        best = None
        for k in m.ready(done):
            here = min(b for b, _ in m.step(k, done))
            p = max(here, peak(done | 1 << k))
            best = p if best is None or p < best else best
        return max(best, m.live(done))

    try:
        p_star = peak(0)
    except (_TooWide, RecursionError):
        return _greedy(g, m)

    @lru_cache(maxsize=None)
    def cost(done: int) -> tuple[float, tuple]:
        if done == full:
            return 0.0, ()
        best: tuple[float, tuple] | None = None
        for k in m.ready(done):
            if peak(done | 1 << k) > p_star:
                continue
            fits = [(opt.cost if opt else 0.0, b, opt) for b, opt in m.step(k, done) if b <= p_star]
            if not fits:
                continue
            c, _, opt = min(fits, key=lambda f: (f[0], f[1]))
            rest, path = cost(done | 1 << k)
            if best is None or c + rest < best[0] - 1e-9:
                best = (c + rest, ((k, opt),) + path)
        assert best is not None, "a state on an optimal path has no step within the optimal peak"
        return best

    total, path = cost(0)
    order = [k for k, _ in path]
    choice = {k: opt for k, opt in path if opt is not None}
    return Schedule(order, choice, p_star, total, _per_step(m, order, choice))


class _TooWide(Exception):
    pass


def _per_step(m: _Model, order: list[int], choice: dict[int, InPlace]) -> list[int]:
    done, out = 0, []
    for k in order:
        opts = m.step(k, done)
        out.append(next(b for b, o in opts if o is choice[k]) if k in choice else opts[0][0])
        done |= 1 << k
    return out


def _greedy(g: KernelGraph, m: _Model) -> Schedule:
    """Fallback for very wide graphs: the given order, smallest option at every step."""
    done, choice, steps, cost = 0, {}, [], 0.0
    for k in range(m.n):
        b, opt = min(m.step(k, done), key=lambda s: (s[0], s[1].cost if s[1] else 0.0))
        if opt is not None:
            choice[k] = opt
            cost += opt.cost
        steps.append(b)
        done |= 1 << k
    return Schedule(list(range(m.n)), choice, max(steps + [m.live(0), m.live(done)]), cost, steps, exact=False)


def given_order(g: KernelGraph) -> Schedule:
    """The graph's own (topological, IR) order with each kernel's smallest option: the tuning knob
    ``order: "ir"`` (``cost.knobs``), the alternative to ``best_schedule``'s memory-first order."""
    return _greedy(g, _Model(g))


def evaluate(g: KernelGraph, order: list[int], choice: dict[int, InPlace]) -> list[int]:
    """Live bytes during each step of a given order and in-place choice (checks the choice is
    applicable: its input dies at that kernel)."""
    m = _Model(g)
    done, steps = 0, []
    for k in order:
        opts = m.step(k, done)
        if k in choice:
            hit = [b for b, o in opts if o is choice[k]]
            if not hit:
                raise ValueError(f"in-place option of {g.nodes[k].name} not applicable at that point of the order")
            steps.append(hit[0])
        else:
            steps.append(opts[0][0])
        done |= 1 << k
    return steps
