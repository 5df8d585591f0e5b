"""Models the ONNX backend suite has that leave little or nothing to compute (found by the whole-suite
conformance run): a model without run-time inputs is one error line, not a template crash
(test_constant, test_if with its condition bound, test_optional_has_element_empty_*); a reduction over
an empty set folds to its identity (-inf for ReduceMax, ...), which the weights file writes as INFINITY
and must then include <math.h> (gcc refused test_reduce_{max,min,log_sum_exp}_empty_set)."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tests.conftest import ort_run, require_programs


def _model(nodes, inputs, out_shape):
    g = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def test_a_model_without_runtime_inputs_is_one_error_line():
    c = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.ones((2, 3), np.float32)))
    with pytest.raises(TinyfuseError, match="no run-time input") as e:
        compile_model(_model([c, helper.make_node("Relu", ["c"], ["y"])], [], [2, 3]))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin", "ReduceLogSumExp", "ReduceSum"])
def test_a_reduction_over_an_empty_set_builds_and_equals_onnxruntime(op, tmp_path):
    require_programs("gcc")
    from tinyfuse.harness import build_host, run_host
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 0, 4])
    axes = helper.make_node("Constant", [], ["a"], value=numpy_helper.from_array(np.array([1], np.int64)))
    model = _model([axes, helper.make_node(op, ["x", "a"], ["y"], keepdims=1)], [x], [2, 1, 4])
    xs = np.zeros((2, 0, 4), np.float32)
    result = compile_model(model)
    got = run_host(build_host(result, tmp_path, cflags=["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror"]), result, [xs])
    np.testing.assert_array_equal(got[0], ort_run(model, {"x": xs})[0])
