"""ONNX LogSoftmax / Hardmax before opset 13 (axis default 1, the input coerced to 2-D [prod(dims <
axis), prod(dims >= axis)]) and from 13 (one axis, default -1), ArgMax with select_last_index on ties,
TopK with a constant K, Einsum's matmul-like equations: tinyfuse's C and its IR interpreter against
onnxruntime (tests/conftest.check)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.conftest import check, require_programs

X = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("op", ["LogSoftmax", "Hardmax"])
@pytest.mark.parametrize("opset,axis", [(11, None), (11, 0), (11, 2), (11, -2), (13, None), (13, 1), (13, -3)])
def test_axis_rule_per_opset(op, opset, axis, tmp_path):
    require_programs("gcc")
    attrs = {} if axis is None else {"axis": axis}
    x = X.copy()
    if op == "Hardmax":
        x = np.round(x * 2) / 2            # ties: the first largest wins
    check(tmp_path, [helper.make_node(op, ["x"], ["y"], **attrs)], {"x": x}, ["y"], opset=opset)


def test_argmax_select_last_index_on_ties(tmp_path):
    require_programs("gcc")
    x = np.round(X * 1.5).astype(np.float32)
    nodes = [helper.make_node("ArgMax", ["x"], ["i"], axis=1, keepdims=0, select_last_index=1),
             helper.make_node("Cast", ["i"], ["y"], to=1)]          # the test graph's outputs are float
    check(tmp_path, nodes, {"x": x}, ["y"], opset=13)


@pytest.mark.parametrize("eq,shapes", [("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ij,kj->ik", [(3, 4), (5, 4)]),
                                       ("bhid,bhjd->bhij", [(1, 2, 3, 4), (1, 2, 5, 4)]), ("ij->ji", [(3, 4)])])
def test_einsum_matmul_like(eq, shapes, tmp_path):
    require_programs("gcc")
    rng = np.random.default_rng(5)
    names = [f"x{i}" for i in range(len(shapes))]
    inputs = {n: rng.standard_normal(s).astype(np.float32) for n, s in zip(names, shapes)}
    check(tmp_path, [helper.make_node("Einsum", names, ["y"], equation=eq)], inputs, ["y"], opset=13)
