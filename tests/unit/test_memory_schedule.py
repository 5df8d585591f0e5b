"""tinyfuse.memory.schedule (kernel order + in-place choices) and the planner's in-place clusters,
checked against brute force and an independent plan validator."""
import itertools
import random

import pytest

from tinyfuse.memory import Buffer, plan_memory
from tinyfuse.memory.schedule import InPlace, KernelGraph, Node, aligned, best_schedule, evaluate

END = 10**9


def brute_force(g: KernelGraph) -> int:
    """Smallest peak over every topological order and every applicable in-place choice."""
    n = len(g.nodes)
    prod = {nd.out: i for i, nd in enumerate(g.nodes)}
    best = None
    for order in itertools.permutations(range(n)):
        pos = {k: i for i, k in enumerate(order)}
        if any(a in prod and pos[prod[a]] > pos[k] for k in range(n) for a in g.nodes[k].args):
            continue
        for picks in itertools.product(*[[None] + g.nodes[k].inplace for k in order]):
            choice = {k: o for k, o in zip(order, picks) if o is not None}
            try:
                steps = evaluate(g, list(order), choice)
            except ValueError:
                continue
            peak = max(steps)
            best = peak if best is None or peak < best else best
    return best


def residual_block(inplace: bool) -> KernelGraph:
    """x -> c1 -> a;  a -> c2 (3x3 s2) -> b;  a -> c3 (1x1 s2 shortcut) -> s;  b, s -> c4 (+) -> y"""
    sizes = {"x": 3072, "a": 16384, "b": 8192, "s": 8192, "y": 8192}
    opt = [InPlace(0, "pixel_buffer", scratch=32)] if inplace else []
    nodes = [Node("c1", ["x"], "a"), Node("c2", ["a"], "b"), Node("c3", ["a"], "s", inplace=opt),
             Node("c4", ["b", "s"], "y", inplace=[InPlace(1, "residual_add")] if inplace else [])]
    return KernelGraph(sizes, nodes, ["x"], ["y"])


def test_residual_block_runs_the_shortcut_last_to_overwrite_its_input():
    s = best_schedule(residual_block(inplace=True))
    # c2 first (a + b live), then the shortcut in place over a (its last reader): a/s + b = 24576
    assert s.order == [0, 1, 2, 3] and s.peak == 16384 + 8192 + 32
    assert s.inplace[2].rule == "pixel_buffer" and s.inplace[3].rule == "residual_add"
    assert s.peak == brute_force(residual_block(inplace=True))
    plain = best_schedule(residual_block(inplace=False))
    assert plain.peak == 16384 + 8192 + 8192 == brute_force(residual_block(inplace=False))


def test_order_search_picks_the_branch_that_frees_memory_first():
    # x feeds a big branch (x -> big -> y1) and a small one (x -> small); the join needs both.
    sizes = {"x": 100, "big": 1000, "y1": 10, "small": 10, "y": 10}
    nodes = [Node("small", ["x"], "small"), Node("big", ["x"], "big"), Node("shrink", ["big"], "y1"),
             Node("join", ["y1", "small"], "y")]
    g = KernelGraph(sizes, nodes, ["x"], ["y"])
    s = best_schedule(g)
    assert s.peak == brute_force(g)


@pytest.mark.parametrize("seed", range(30))
def test_dp_equals_brute_force_on_random_dags(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 6)
    sizes = {"in": rng.choice([16, 64, 256])}
    nodes = []
    for k in range(n):
        avail = list(sizes)
        args = rng.sample(avail, min(len(avail), rng.randint(1, 2)))
        out = f"v{k}"
        sizes[out] = rng.choice([16, 32, 64, 128, 512])
        opts = [InPlace(i, "pixel_buffer", scratch=rng.choice([0, 16]), cost=rng.random())
                for i in range(len(args)) if rng.random() < 0.5]
        nodes.append(Node(f"k{k}", args, out, scratch=rng.choice([0, 0, 32]), inplace=opts))
    g = KernelGraph(sizes, nodes, ["in"], [f"v{n - 1}"])
    s = best_schedule(g)
    assert s.peak == brute_force(g)
    assert max(evaluate(g, s.order, s.inplace)) == s.peak


def check_clusters(plan, buffers, alignment):
    """Validator: alignment, members at their cluster offset + rel, and no overlap of buffers that
    are live together unless they are in the same cluster."""
    def asize(b):
        return aligned(b.size, alignment)
    base = {}
    for b in buffers:
        off = plan.offsets[b.name]
        assert off % alignment == 0 and off + asize(b) <= plan.arena_bytes
        if b.group and b.size:
            assert base.setdefault(b.group, off - b.rel) == off - b.rel, "cluster not rigid"
    for a, b in itertools.combinations(buffers, 2):
        if not a.size or not b.size or (a.group and a.group == b.group):
            continue
        if max(a.first, b.first) <= min(a.last, b.last):
            oa, ob = plan.offsets[a.name], plan.offsets[b.name]
            assert oa + asize(a) <= ob or ob + asize(b) <= oa, (a, b)
    assert plan.arena_bytes >= plan.lower_bound


def test_inplace_chain_costs_the_largest_live_member_only():
    # a (36864) -> b in place (36864) -> c in place (18432) -> d in place (110592); e lives beside
    bufs = [Buffer("a", 36864, 0, 1, "g"), Buffer("b", 36864, 1, 2, "g"), Buffer("c", 18432, 2, 3, "g"),
            Buffer("d", 110592, 3, 4, "g"), Buffer("e", 1024, 0, 2)]
    plan = plan_memory(bufs, 16)
    check_clusters(plan, bufs, 16)
    assert plan.lower_bound == 110592 and plan.arena_bytes == 110592


@pytest.mark.parametrize("seed", range(40))
def test_random_clusters_are_valid(seed):
    rng = random.Random(seed)
    bufs, t = [], 0
    for c in range(rng.randint(1, 4)):                       # in-place chains: consecutive lifetimes
        start = rng.randint(-1, 6)
        for m in range(rng.randint(1, 4)):
            bufs.append(Buffer(f"c{c}m{m}", rng.randint(1, 2000), start + m, start + m + 1, f"g{c}"))
    for i in range(rng.randint(0, 8)):
        first = rng.randint(-1, 8)
        bufs.append(Buffer(f"t{i}", rng.randint(0, 3000), first, first + rng.randint(0, 4)))
    for name in ("best", "greedy_by_size", "greedy_by_conflicts", "linear"):
        check_clusters(plan_memory(bufs, 16, name), bufs, 16)
    del t
