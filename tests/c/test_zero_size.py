"""Zero-element tensors (ONNX node tests test_slice_start_out_of_bounds, test_split_zero_size_splits_*,
test_reshape_allowzero_reordered): an empty model input, slice or split is a zero-element constant
(frontend/onnx.py ``empty_constant``): no arena bytes, no kernel; an empty output is written as
zero bytes. Oracle: onnxruntime."""
from __future__ import annotations

import numpy as np
from onnx import helper

from tests.builders.float_models import model_of, rand
from tests.conftest import compile_and_run, ort_run, require_programs

N = helper.make_node
I64 = np.int64


def _both(tmp_path, model, feeds, **options):
    require_programs("gcc")
    outs, result = compile_and_run(model, list(feeds.values()), tmp_path, **options)
    for y, r in zip(outs, ort_run(model, feeds)):
        assert y.shape == r.shape and np.allclose(y, r, rtol=0, atol=1e-6 * max(1.0, float(np.abs(r).max(initial=0))))
    return result


def test_empty_slice_beside_a_computed_output(tmp_path):
    """y0 = Slice(x)[:, 1:1] is empty, y1 = Relu(x) is computed: one kernel, the empty output costs nothing."""
    nodes = [N("Slice", ["X", "s", "e", "a"], ["Y0"]), N("Relu", ["X"], ["Y1"])]
    model = model_of(nodes, {"X": np.zeros((4, 6, 5))}, {"Y0": [4, 0, 5], "Y1": [4, 6, 5]},
                     inits={"s": np.array([1], I64), "e": np.array([1], I64), "a": np.array([1], I64)})
    result = _both(tmp_path, model, {"X": rand(4, 6, 5)})
    assert len(result.steps) == 1 and result.outputs[0].nbytes == 0
    assert result.arena_bytes == 4 * 6 * 5 * 4            # x, the Relu in place over it
    caller = _both(tmp_path / "caller", model, {"X": rand(4, 6, 5)}, io_buffers="caller")
    assert caller.arena_bytes == 0 and caller.io_bytes == 2 * 4 * 6 * 5 * 4


def test_empty_input_split_and_relu(tmp_path):
    """An empty model input [0, 3]: Split into two empty parts and a Relu of it, all empty outputs."""
    nodes = [N("Split", ["X", "sp"], ["A", "B"], axis=0), N("Relu", ["X"], ["C"])]
    model = model_of(nodes, {"X": np.zeros((0, 3))}, {"A": [0, 3], "B": [0, 3], "C": [0, 3]},
                     inits={"sp": np.array([0, 0], I64)})
    result = _both(tmp_path, model, {"X": np.zeros((0, 3), np.float32)})
    assert not result.steps and result.arena_bytes == 0 and all(t.nbytes == 0 for t in result.outputs)
