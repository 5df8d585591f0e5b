"""ONNX Where-16 with a constant condition mixing true and false: the element-wise ``select`` op
(ops/select.py; the mask a uint8 weight), compiled → gcc → run, compared with onnxruntime (and the
numpy interpreter, through tests.conftest.check)."""
from __future__ import annotations

import numpy as np
from onnx import helper

from tests.builders.float_models import rand
from tests.conftest import check

N = helper.make_node


def test_where_mixed_constant_condition_broadcasts(tmp_path):
    mask = np.array([[True], [False], [True]])                              # [3, 1], mixed
    result = check(tmp_path, [N("Where", ["c", "X", "Z"], ["Y"])], {"X": rand(2, 1, 4), "Z": rand(3, 4, seed=2)},
                   ["Y"], inits={"c": mask})
    assert any("select" in k.ops for k in result.kernels)


def test_where_mask_after_conv_in_nhwc(tmp_path):
    """A per-channel mask [1, C, 1, 1] on a conv's NCHW output (the layout pass runs it in NHWC) and a
    constant Y: the select joins the conv's epilogue or runs beside it; the outputs equal onnxruntime."""
    mask = (np.arange(6) % 2 == 0).reshape(1, 6, 1, 1)
    nodes = [N("Conv", ["X", "W", "B"], ["c"], pads=[1, 1, 1, 1]), N("Where", ["m", "c", "z"], ["Y"])]
    check(tmp_path, nodes, {"X": rand(1, 3, 5, 5)}, ["Y"],
          inits={"W": rand(6, 3, 3, 3, seed=1), "B": rand(6, seed=2), "m": mask,
                 "z": np.full((1, 1, 1, 1), -7.5, np.float32)})


def test_where_elementwise_mask_between_two_inputs(tmp_path):
    mask = np.random.default_rng(4).random((2, 3, 4)) < 0.5
    check(tmp_path, [N("Where", ["c", "X", "Z"], ["Y"])], {"X": rand(2, 3, 4), "Z": rand(2, 3, 4, seed=5)},
          ["Y"], inits={"c": mask})
