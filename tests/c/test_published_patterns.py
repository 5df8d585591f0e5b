"""Graph patterns found in published ONNX models (benchmarks/published_onnx.py), each reduced to a small
onnx.helper graph: compiled → gcc → run, compared with onnxruntime within 1e-4 x max|ref|."""
from __future__ import annotations

import numpy as np
from onnx import helper

from tests.builders import rand
from tests.conftest import check

N = helper.make_node


def test_clip_bounds_computed_at_run_time(tmp_path):
    """A log-mel's top_db floor (openWakeWord melspectrogram.onnx): Clip(x, ReduceMax(x) - 80, hi) with
    the min computed from the input; and a max computed at run time beside a constant min."""
    nodes = [N("ReduceMax", ["X"], ["mx"], keepdims=0),
             N("Sub", ["mx", "top"], ["floor"]),
             N("Clip", ["X", "floor", "hi"], ["Y1"]),
             N("ReduceMin", ["X"], ["mn"], keepdims=1),
             N("Add", ["mn", "top"], ["ceil"]),
             N("Reshape", ["ceil", "scalar"], ["ceil0"]),
             N("Clip", ["X", "lo", "ceil0"], ["Y2"])]
    inits = {"top": np.array(1.5, np.float32), "hi": np.array(2.5, np.float32),
             "lo": np.array(-0.25, np.float32), "scalar": np.zeros(0, np.int64)}
    check(tmp_path, nodes, {"X": rand(1, 8, 32) * 3}, ["Y1", "Y2"], inits=inits)
