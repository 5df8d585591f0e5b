"""Real-time mode, the pure-Python parts: isl loop nests sliced for step fission (poly/slices.py),
the step plan from the cost model (cost/steps.py) and the option checks (driver.realtime_options).
The C behaviour (steps equal to _run, every step under the budget, branch-free softmax, exact
activation skipping) is measured in tests/c/test_realtime.py and tests/target/test_realtime_target.py."""
from types import SimpleNamespace

import islpy as isl
import pytest

from tinyfuse.cost.steps import MARGIN, pieces
from tinyfuse.driver import realtime_options
from tinyfuse.errors import TinyfuseError
from tinyfuse.options import CompileOptions
from tinyfuse.poly import Statement, loops_to_c
from tinyfuse.poly.slices import Slice, SliceRequest, split_dimension


def _statements():
    """A blocked-conv-like nest: S[n, pp] at time (n, pp, 0, 0), B[n, pp, op] at (n, pp, 1, op), and a
    tail T[n] at (n, 5, 0, 0) (the odd pixel)."""
    return [Statement("S", ("n", "pp"), "0 <= n < 1 and 0 <= pp < 5", ("n", "pp", "0", "0"), lambda n, pp: f"s({pp});"),
            Statement("B", ("n", "pp", "op"), "0 <= n < 1 and 0 <= pp < 5 and 0 <= op < 3", ("n", "pp", "1", "op"),
                      lambda n, pp, op: f"b({pp}, {op});"),
            Statement("T", ("n",), "0 <= n < 1", ("n", "5", "0", "0"), lambda n: "t();")]


def _sliced(depth, limit=1 << 30):
    request = SliceRequest(depth, limit)
    _, code = loops_to_c(_statements(), slice=request)
    return code, request.found


def test_split_dimension_is_the_first_that_varies():
    sched = isl.UnionMap("{ A[n, p] -> [n, p, 0] : n = 0 and 0 <= p < 5; B[n] -> [n, 5, 1] : n = 0 }")
    assert split_dimension(sched) == (1, 0, 6)          # n is constant; p (and the tail at 5) vary
    assert split_dimension(isl.UnionMap("{ A[n] -> [n, 0] : n = 0 }")) is None


def test_depth_one_slices_the_pixel_pairs_and_keeps_the_tail_in_the_last_piece():
    code, found = _sliced(1)
    assert found == [Slice(0, 6)]
    assert "tf_lo" in code and "tf_hi" in code
    assert "tf_hi == 6" in code or "tf_hi >= 6" in code        # the tail (time 5) runs in the piece holding 5
    plain = loops_to_c(_statements())[1]
    assert "tf_lo" not in plain                                 # outside step fission: the usual nest


def test_deep_slices_linearise_the_time_below_and_list_its_used_values():
    code, (found,) = _sliced(3)
    # L = 6 * pp + 3 * pos + op over pp in [0, 6), pos in [0, 2), op in [0, 3)
    assert found.lo == 0 and found.hi == 6 * 2 * 3
    # one used value per distinct (pp, pos, op): 5 S + 15 B + 1 T = 21
    assert len(found.points) == 21 and found.points == sorted(found.points)
    assert found.points[0] == 0 and found.points[-1] == 5 * 6           # T at pp = 5, pos 0, op 0
    assert "tf_lo" in code
    # a limit at time dimension 2 (a reduction nest's accumulator from there on): back to depth 1
    assert _sliced(3, limit=2)[1] == [Slice(0, 6)]


def test_a_dimension_that_only_orders_statements_is_not_split():
    """One output point: S_init, S_mac over the taps, S_out at times (0, 0, 0), (0, 1, r), (0, 2, 0). The
    first dimension that varies is the statement order; a step after the first would read the accumulator
    the first one set in a local variable, so depth 1 does not slice (a deeper request of a family that
    keeps no locals across it still may)."""
    stmts = [Statement("I", ("n",), "n = 0", ("n", "0", "0"), lambda n: "acc = 0;"),
             Statement("M", ("n", "r"), "n = 0 and 0 <= r < 9", ("n", "1", "r"), lambda n, r: f"acc += x[{r}];"),
             Statement("O", ("n",), "n = 0", ("n", "2", "0"), lambda n: "out[0] = acc;")]
    for depth, found in ((1, [None]), (3, [Slice(0, 27, [0, *range(9, 18), 18])])):
        request = SliceRequest(depth)
        _, code = loops_to_c(stmts, slice=request)
        assert request.found == found
        assert ("tf_lo" in code) == (depth > 1)


def _kernel(lo, hi, points=None):
    return SimpleNamespace(slice_range=(lo, hi), slice_points=points)


def test_pieces_cover_the_range_once_within_the_budget():
    k = _kernel(0, 512)
    ps = pieces(k, estimate=512 * 1000.0, budget=10000)     # 1000 per unit: 7 units per piece at MARGIN 0.7
    assert ps[0] == (0, int(MARGIN * 10000 // 1000)) and ps[-1][1] == 512
    assert all(a == b for (_, a), (b, _) in zip(ps, ps[1:]))    # consecutive, no gap, no overlap
    assert pieces(SimpleNamespace(slice_range=None), 1e9, 10) == []     # not sliced: one step
    deep = _kernel(0, 48, points=[0, 4, 5, 6, 8, 12, 13, 14, 16])
    ps = pieces(deep, estimate=9 * 300.0, budget=1000)        # 300 per used value: 2 per piece
    assert ps == [(0, 5), (5, 8), (8, 13), (13, 16), (16, 48)]


def test_realtime_options_refuse_what_cannot_hold():
    options = CompileOptions.resolve("cortex-m4")
    stateless, stateful = SimpleNamespace(states=()), SimpleNamespace(states=("s",))
    with pytest.raises(TinyfuseError, match="exclude each other"):
        realtime_options(options, stateless, skip_zero_activations=True, wcet=True)
    with pytest.raises(TinyfuseError, match="stateful"):
        realtime_options(options, stateful, max_step_instructions=1000)
    o = realtime_options(options, stateless, max_step_instructions=1000, wcet=True)
    assert o.max_step_instructions == 1000 and o.wcet and "poly_fuse" in o.disabled_passes   # fission
    assert realtime_options(options, stateless).disabled_passes == options.disabled_passes
