"""Tests for tinyfuse.memory.planner, checked by an independent plan validator."""
import random

import pytest

from tinyfuse.memory import PLANNERS, Buffer, format_plan, plan_memory

END = 10**9  # "live to the end"


def check_plan(plan, buffers, alignment):
    """Independent validator: alignment, no overlap of conflicting buffers, arena bounds."""
    def asize(b):
        return (b.size + alignment - 1) // alignment * alignment

    assert set(plan.offsets) == {b.name for b in buffers}
    for b in buffers:
        off = plan.offsets[b.name]
        assert off >= 0 and off % alignment == 0, (b, off)
        assert plan.arena_bytes >= off + asize(b), (b, off, plan.arena_bytes)
    for i, a in enumerate(buffers):
        for b in buffers[i + 1:]:
            if a.size == 0 or b.size == 0:
                continue
            live_together = max(a.first, b.first) <= min(a.last, b.last)
            if live_together:
                oa, ob = plan.offsets[a.name], plan.offsets[b.name]
                assert oa + asize(a) <= ob or ob + asize(b) <= oa, (plan.planner, a, oa, b, ob)
    # brute-force lower bound over every time step that starts a lifetime
    steps = {b.first for b in buffers}
    bound = max((sum(asize(b) for b in buffers if b.first <= t <= b.last) for t in steps), default=0)
    assert plan.lower_bound == bound
    assert plan.arena_bytes >= plan.lower_bound
    assert plan.arena_bytes % alignment == 0


def run_all(buffers, alignment):
    plans = {name: plan_memory(buffers, alignment, name) for name in PLANNERS}
    for plan in plans.values():
        check_plan(plan, buffers, alignment)
    total = sum((b.size + alignment - 1) // alignment * alignment for b in buffers)
    assert plans["linear"].arena_bytes == total
    for name, plan in plans.items():
        assert plans["best"].arena_bytes <= plan.arena_bytes, name
    return {name: plan.arena_bytes for name, plan in plans.items()}, plans


def test_chain_reuses_memory():
    # aligned sizes 112, 64, 112; A and C never live together -> share offset 0, B above.
    bufs = [Buffer("A", 100, 0, 1), Buffer("B", 50, 1, 2), Buffer("C", 100, 2, 3)]
    arenas, plans = run_all(bufs, 16)
    assert arenas == {"greedy_by_size": 176, "greedy_by_conflicts": 176, "linear": 288, "best": 176}
    assert plans["best"].lower_bound == 176
    assert plans["greedy_by_size"].offsets == {"A": 0, "C": 0, "B": 112}


def test_all_live_together_is_sum():
    bufs = [Buffer("x", 10, 0, 5), Buffer("y", 20, 0, 5), Buffer("z", 30, 0, 5)]
    arenas, _ = run_all(bufs, 16)
    assert set(arenas.values()) == {16 + 32 + 32}


def test_greedy_is_not_optimal_and_best_improves():
    # Conflicts: A-B, A-D, C-D. Lower bound 112 (t=1: C+D, t=4: A+B).
    # greedy_by_size: C@0, B@0, D@64, A@112 -> 160.  Optimum: C@0, D@64, A@0, B@48 -> 112.
    bufs = [Buffer("A", 48, 3, 4), Buffer("B", 64, 4, 5), Buffer("C", 64, 1, 1), Buffer("D", 48, 1, 3)]
    arenas, plans = run_all(bufs, 16)
    assert arenas == {"greedy_by_size": 160, "greedy_by_conflicts": 160, "linear": 224, "best": 112}
    assert plans["best"].planner == "hill_climb"
    assert plans["best"].lower_bound == 112


def test_model_input_output_and_zero_size():
    bufs = [Buffer("in", 40, -1, 0), Buffer("t0", 64, 0, 1), Buffer("empty", 0, 1, 1),
            Buffer("t1", 64, 1, 2), Buffer("out", 8, 2, END)]
    arenas, plans = run_all(bufs, 8)
    # t=0: in+t0 = 104, t=1: t0+t1 = 128, t=2: t1+out = 72
    assert plans["best"].lower_bound == 128 and arenas["best"] == 128
    assert all(p.offsets["empty"] == 0 for p in plans.values())


def test_alignment_one_and_empty():
    bufs = [Buffer("a", 3, 0, 0), Buffer("b", 5, 0, 1), Buffer("c", 7, 1, 1)]
    arenas, _ = run_all(bufs, 1)
    assert arenas["best"] == 12 and arenas["linear"] == 15
    assert plan_memory([]).arena_bytes == 0 and plan_memory([]).lower_bound == 0


@pytest.mark.parametrize("seed", range(200))
def test_random_buffer_sets(seed):
    rng = random.Random(seed)
    alignment = rng.choice([1, 4, 16, 64])
    bufs = []
    for i in range(rng.randint(1, 25)):
        first = rng.randint(-1, 12)
        last = END if rng.random() < 0.1 else first + rng.randint(0, 6)
        bufs.append(Buffer(f"t{i}", rng.choice([0, rng.randint(1, 64), rng.randint(1, 4096)]), first, last))
    run_all(bufs, alignment)
    assert plan_memory(bufs, alignment) == plan_memory(bufs, alignment)  # deterministic


def test_errors():
    with pytest.raises(ValueError, match="unknown memory planner"):
        plan_memory([Buffer("a", 1, 0, 0)], planner="magic")
    with pytest.raises(ValueError, match="negative size"):
        plan_memory([Buffer("a", -1, 0, 0)])


def test_format_plan_sorted_table():
    bufs = [Buffer("A", 100, 0, 1), Buffer("B", 50, 1, 2), Buffer("C", 100, 2, 3)]
    plan = plan_memory(bufs, 16, "greedy_by_size")
    lines = format_plan(plan, bufs).splitlines()
    assert lines[0].split() == ["buffer", "size", "offset", "first", "last"]
    assert [line.split() for line in lines[1:4]] == [
        ["A", "100", "0", "0", "1"], ["C", "100", "0", "2", "3"], ["B", "50", "112", "1", "2"]]
    assert len({len(line) for line in lines[:4]}) == 1  # fixed width
    assert "176" in lines[-1]
