"""ConvInteger / MatMulInteger (QOperator integer ops, per-channel weight zero points) against
onnxruntime: int32 outputs must be equal."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from tests.conftest import compile_and_run, ort_run


def _model(node, inputs, outputs, inits):
    g = helper.make_graph([node], "m", inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_conv_integer_uint8_per_channel_zero_points(tmp_path):
    rng = np.random.default_rng(0)
    w = rng.integers(0, 256, (4, 3, 3, 3)).astype(np.uint8)
    zw = np.array([128, 120, 130, 127], np.uint8)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(100, np.uint8), "zx"),
             numpy_helper.from_array(zw, "zw")]
    node = helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], pads=[1, 0, 1, 2], strides=[2, 1])
    m = _model(node, [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 3, 7, 6])],
               [helper.make_tensor_value_info("y", TensorProto.INT32, None)], inits)
    x = rng.integers(0, 256, (1, 3, 7, 6)).astype(np.uint8)
    (got,), _ = compile_and_run(m, [x], tmp_path)
    # onnxruntime refuses per-channel w zero points here: onnx's reference evaluator is the oracle
    from onnx.reference import ReferenceEvaluator
    assert np.array_equal(got, ReferenceEvaluator(m).run(None, {"x": x})[0])


def test_matmul_integer_int8_per_column_zero_points(tmp_path):
    rng = np.random.default_rng(1)
    b = rng.integers(-128, 128, (10, 6)).astype(np.int8)
    zb = rng.integers(-5, 5, 6).astype(np.int8)
    inits = [numpy_helper.from_array(b, "b"), numpy_helper.from_array(np.array(-3, np.int8), "za"),
             numpy_helper.from_array(zb, "zb")]
    node = helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])
    m = _model(node, [helper.make_tensor_value_info("a", TensorProto.INT8, [3, 10])],
               [helper.make_tensor_value_info("y", TensorProto.INT32, None)], inits)
    a = rng.integers(-128, 128, (3, 10)).astype(np.int8)
    (got,), _ = compile_and_run(m, [a], tmp_path)
    assert np.array_equal(got, ort_run(m, {"a": a})[0])


def test_uint8_model_boundaries_become_one_integer_requantize(tmp_path):
    """uint8 in → int8 conv → uint8 out, as QDQ: the boundary Q(DQ(x)) pairs are integer requantizes
    (no float kernel), and the C equals the numpy reference exactly and onnxruntime within 1 LSB."""
    from tinyfuse.ir.interpreter import run_module
    rng = np.random.default_rng(4)
    f = lambda n, v: numpy_helper.from_array(v, n)  # noqa: E731
    inits = [f("s_u", np.array(0.02, np.float32)), f("z_u", np.array(120, np.uint8)),
             f("s_i", np.array(0.03, np.float32)), f("z_i", np.array(-5, np.int8)),
             f("w", rng.integers(-127, 128, (4, 2, 3, 3)).astype(np.int8)), f("sw", np.full(4, 0.01, np.float32)),
             f("zw", np.zeros(4, np.int8)), f("s_o", np.array(0.05, np.float32)), f("z_o", np.array(3, np.int8)),
             f("s_uo", np.array(0.04, np.float32)), f("z_uo", np.array(128, np.uint8))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "s_u", "z_u"], ["xf"]),
             helper.make_node("QuantizeLinear", ["xf", "s_i", "z_i"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s_i", "z_i"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wd"], axis=0),
             helper.make_node("Conv", ["xd", "wd"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["c", "s_o", "z_o"], ["cq"]),
             helper.make_node("DequantizeLinear", ["cq", "s_o", "z_o"], ["cd"]),
             helper.make_node("QuantizeLinear", ["cd", "s_uo", "z_uo"], ["y"])]
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 2, 5, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 4, 5, 5])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    x = rng.integers(0, 256, (1, 2, 5, 5)).astype(np.uint8)
    (got,), result = compile_and_run(m, [x], tmp_path)
    assert not [k for k in result.kernels if "qnn.quantize" in k.ops or "qnn.dequantize" in k.ops]
    assert np.array_equal(got, run_module(result.module, [x])[0])
    assert np.max(np.abs(got.astype(int) - ort_run(m, {"x": x})[0].astype(int))) <= 1
