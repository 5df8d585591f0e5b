"""The index printers every lowering shares (lower/kernel.py flat_index, broadcast_index), checked
against numpy's own row-major offsets and broadcasting, including the flattened-row index the SIMD
lowerings use (``[n, 0, p, k]`` with p over OH*OW) on a width-1 output: the layout of 1-D temporal
convs ([1, H, 1, C]) that was wrong on every SIMD core before (keyword_spotting_on_off_v3)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from tinyfuse.lower.kernel import broadcast_index, flat_index


def _eval(expr: str, env: dict) -> int:
    return int(eval(expr, {}, dict(env)))      # the printed C is also a Python integer expression


SHAPES = [(1, 7, 1, 5), (1, 1, 7, 5), (2, 3, 4, 5), (1, 1, 1, 5), (3, 1, 1, 2)]


@pytest.mark.parametrize("shape", SHAPES)
def test_flattened_rows_index_the_output_exactly(shape):
    n_, h_, w_, c_ = shape
    ref = np.arange(np.prod(shape)).reshape(shape)
    for n, h, w, k in itertools.product(range(n_), range(h_), range(w_), range(c_)):
        p = h * w_ + w
        expr = flat_index(shape, ["n", "0", "p", "k"])
        assert _eval(expr, {"n": n, "p": p, "k": k}) == ref[n, h, w, k], (shape, expr)


@pytest.mark.parametrize("out_shape", SHAPES)
@pytest.mark.parametrize("kind", ["full", "per_channel", "rows_broadcast_rank3", "rank1", "batch_broadcast"])
def test_broadcast_operands_follow_numpy_under_flattened_rows(out_shape, kind):
    n_, h_, w_, c_ = out_shape
    shape = {"full": out_shape, "per_channel": (1, 1, 1, c_), "rows_broadcast_rank3": (1, 1, c_),
             "rank1": (c_,), "batch_broadcast": (1, h_, w_, c_)}[kind]
    operand = np.arange(np.prod(shape)).reshape(shape)
    want = np.broadcast_to(operand, out_shape)
    expr = broadcast_index(shape, out_shape, ["n", "0", "p", "k"])
    for n, h, w, k in itertools.product(range(n_), range(h_), range(w_), range(c_)):
        got = operand.reshape(-1)[_eval(expr, {"n": n, "p": h * w_ + w, "k": k})]
        assert got == want[n, h, w, k], (out_shape, shape, expr)


@pytest.mark.parametrize("out_shape, shape", [((4, 1, 10), (4, 1, 10)), ((4, 1, 10), (1, 1, 10)),
                                              ((4, 1, 10), (10,))])
def test_fully_connected_rows_over_a_size_one_axis(out_shape, shape):
    """matmul rows flattened over every leading axis ([0, r, k] with r over 4 x 1)."""
    operand = np.arange(np.prod(shape)).reshape(shape)
    want = np.broadcast_to(operand, out_shape).reshape(-1, out_shape[-1])
    expr = broadcast_index(shape, out_shape, ["0", "r", "k"])
    out_expr = flat_index(out_shape, ["0", "r", "k"])
    for r, k in itertools.product(range(want.shape[0]), range(out_shape[-1])):
        assert operand.reshape(-1)[_eval(expr, {"r": r, "k": k})] == want[r, k]
        assert _eval(out_expr, {"r": r, "k": k}) == r * out_shape[-1] + k
