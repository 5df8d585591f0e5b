"""ONNX float16 initializers behind Cast(to=FLOAT): folded at compile time (the frontend evaluates
all-constant nodes) into float32 weights; checked against onnxruntime and against the float16
values widened by numpy."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from tinyfuse.driver import compile_model
from tinyfuse.ir.interpreter import run_module
from tests.conftest import ort_run


def _model(w16: np.ndarray, b16: np.ndarray):
    nodes = [helper.make_node("Cast", ["W16"], ["W"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["B16"], ["B"], to=TensorProto.FLOAT),
             helper.make_node("MatMul", ["x", "W"], ["m"]), helper.make_node("Add", ["m", "B"], ["y"])]
    g = helper.make_graph(nodes, "fp16_fc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])],
                          [numpy_helper.from_array(w16, "W16"), numpy_helper.from_array(b16, "B16")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_float16_initializers_cast_fold_to_float32_weights():
    rng = np.random.default_rng(0)
    w16, b16 = rng.standard_normal((12, 8)).astype(np.float16), rng.standard_normal(8).astype(np.float16)
    model = _model(w16, b16)
    result = compile_model(model)
    assert result.weights_bytes == (w16.size + b16.size) * 4          # float32 in flash, no float16 copy
    assert all("cast" not in k.ops for k in result.kernels)
    x = rng.standard_normal((2, 12)).astype(np.float32)
    (got,) = run_module(result.module, [x])
    (want,) = ort_run(model, {"x": x})
    assert np.max(np.abs(got - want)) <= 1e-5 * np.max(np.abs(want))
    exact = x.astype(np.float64) @ w16.astype(np.float64) + b16.astype(np.float64)
    assert np.max(np.abs(got - exact)) <= 1e-5 * np.max(np.abs(exact))
