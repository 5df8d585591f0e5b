"""Models the ONNX backend suite has that leave little or nothing to compute (found by the whole-suite
conformance run): a model without run-time inputs (test_constant, test_if with its condition bound,
ConstantOfShape / Range with their inputs bound) writes its folded outputs; a reduction over
an empty set folds to its identity (-inf for ReduceMax, ...), which the weights file writes as INFINITY
and must then include <math.h> (gcc refused test_reduce_{max,min,log_sum_exp}_empty_set)."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tinyfuse.driver import compile_model
from tinyfuse.errors import NeedsBinding
from tests.conftest import ort_run, require_programs


def _model(nodes, inputs, out_shape):
    g = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def test_a_model_without_runtime_inputs_writes_its_constant_outputs(tmp_path):
    """Every output folds (a Constant, or every input bound with --bind): <name>_run writes the folded
    values, as onnxruntime computes them (was one error line; a template crash before that)."""
    require_programs("gcc")
    from tinyfuse.harness import build_host, run_host
    c = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.linspace(-1, 1, 6, dtype=np.float32)
                                                                              .reshape(2, 3)))
    model = _model([c, helper.make_node("Relu", ["c"], ["y"])], [], [2, 3])
    result = compile_model(model)
    got = run_host(build_host(result, tmp_path, cflags=["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror"]), result, [])
    np.testing.assert_array_equal(got[0], ort_run(model, {})[0])


def test_constant_of_shape_from_an_input_names_the_input_to_bind_and_folds_when_bound(tmp_path):
    """ConstantOfShape whose shape is a graph input: one NeedsBinding line naming the input and --bind;
    bound (a .npy file, as ``--bind shape=FILE.npy``) the output is the constant onnxruntime computes."""
    require_programs("gcc")
    from tinyfuse.harness import build_host, run_host
    shape = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])
    fill = numpy_helper.from_array(np.array([2.5], np.float32))
    model = _model([helper.make_node("ConstantOfShape", ["shape"], ["y"], value=fill)], [shape], None)
    with pytest.raises(NeedsBinding) as e:
        compile_model(model)
    assert e.value.inputs == ("shape",) and "\n" not in str(e.value)
    assert all(s in str(e.value) for s in ("node 'y'", "ConstantOfShape", "input 'shape'", "--bind"))
    value = np.array([3, 4], np.int64)
    np.save(tmp_path / "shape.npy", value)
    result = compile_model(model, bind=[("shape", str(tmp_path / "shape.npy"))])
    got = run_host(build_host(result, tmp_path, cflags=["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror"]), result, [])
    np.testing.assert_array_equal(got[0], ort_run(model, {"shape": value})[0])


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
