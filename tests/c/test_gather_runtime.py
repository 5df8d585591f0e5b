"""ONNX Gather-13 with indices computed at run time (``take_runtime``): float32, int64, int32 and bool data,
int32 / int64 indices, negative indices, against onnxruntime; an out-of-range index is clamped (the
documented rule of compiler/ops/gather_runtime.py), checked against hand-indexed numpy under gcc
-fsanitize=address,undefined (no read outside the input)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.conftest import compile_and_run, ort_run

N = helper.make_node


def _model(x, idx, axis, const_x=False, via_add=False):
    """Gather(x, indices) — the indices a graph input (or that input + 0 through an Add when ``via_add``:
    computed by another node); x an input or, with ``const_x``, an initializer (an embedding table)."""
    ty = helper.np_dtype_to_tensor_dtype
    nodes, ind = [], "I"
    inits = [numpy_helper.from_array(x, "X")] if const_x else []
    if via_add:
        inits.append(numpy_helper.from_array(np.zeros((), idx.dtype), "zero"))
        nodes.append(N("Add", ["I", "zero"], ["I2"]))
        ind = "I2"
    nodes.append(N("Gather", ["X", ind], ["Y"], axis=axis))
    inputs = [] if const_x else [helper.make_tensor_value_info("X", ty(x.dtype), x.shape)]
    inputs.append(helper.make_tensor_value_info("I", ty(idx.dtype), idx.shape))
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("Y", ty(x.dtype), None)],
                              initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


CASES = {  # id: (x, indices, axis, const_x, via_add)
    "float_axis0_negative": (np.arange(24, dtype=np.float32).reshape(4, 6) / 7, np.array([[3, -1], [0, -4]]), 0, 0, 0),
    "float_axis1_int32": (np.arange(60, dtype=np.float32).reshape(3, 4, 5), np.array([2, -3, 0], np.int32), 1, 0, 1),
    "int64_axis2": (np.arange(60, dtype=np.int64).reshape(3, 4, 5) * 10**10, np.array([4, -5, 1]), 2, 0, 0),
    "int32_scalar_index": (np.arange(12, dtype=np.int32).reshape(3, 4), np.array(-2), 1, 0, 0),
    "bool_axis0": (np.array([[True, False, True], [False, False, True]]), np.array([1, 0, -1, 1]), 0, 0, 0),
    "embedding_table": (np.arange(40, dtype=np.float32).reshape(10, 4) - 5, np.array([[7, 2, 9]]), 0, 1, 1),
}


@pytest.mark.parametrize("case", list(CASES))
def test_gather_runtime_vs_onnxruntime(tmp_path, case):
    x, idx, axis, const_x, via_add = CASES[case]
    model = _model(x, idx, axis, const_x, via_add)
    feeds = {"I": idx} if const_x else {"X": x, "I": idx}
    (got,), _ = compile_and_run(model, list(feeds.values()), tmp_path)
    (ref,) = ort_run(model, feeds)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)


def test_out_of_range_index_is_clamped_under_sanitizers(tmp_path):
    """Indices 100 and -100 on an axis of 5: read x[4] and x[0] (clamped), never outside x; the program is
    built with AddressSanitizer and UndefinedBehaviorSanitizer, any report fails the run."""
    from tinyfuse.driver import compile_model
    from tinyfuse.harness import build_host, run_host
    from tests.conftest import require_programs
    require_programs("gcc")
    x = np.arange(15, dtype=np.float32).reshape(5, 3) + 1
    idx = np.array([100, -100, 2, -1, 5, -6], np.int64)
    result = compile_model(_model(x, idx, 0))
    exe = build_host(result, tmp_path, sanitize=True, guard=64)
    (got,) = run_host(exe, result, [x, idx])
    np.testing.assert_array_equal(got, x[[4, 0, 2, 4, 4, 0]])


def test_non_integer_indices_refused():
    from tinyfuse.errors import TinyfuseError
    from tinyfuse.frontend import from_onnx
    graph = helper.make_graph([N("Gather", ["X", "I"], ["Y"])], "g",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4]),
                               helper.make_tensor_value_info("I", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    with pytest.raises(TinyfuseError, match="indices are float32, not int32 or int64"):
        from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
