"""ONNX QDQ models with int16 activations (onnxruntime's QInt16 activations, 16x8: int16 Quantize/
DequantizeLinear around a conv with int8 per-channel weights and an int32 bias, opset 21) compile through
legalize_qdq's int16 rules: outputs within one output LSB of onnxruntime (which runs the float conv between
the DequantizeLinear / QuantizeLinear pair; tinyfuse requantizes the integer accumulator), most equal."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto
from onnx import helper as oh
from onnx import numpy_helper as nh

from tests.conftest import compile_and_run, ort_run, require_programs

SY = 0.05


def conv16_qdq(seed: int = 0) -> onnx.ModelProto:
    """x float [1, 4, 8, 8] → Q/DQ int16 (0.001, 0) → Conv 3x3 pads 1 (W int8 per channel, bias int32)
    → Q/DQ int16 (SY, 0) → float [1, 6, 8, 8]."""
    rng = np.random.default_rng(seed)
    inits = [nh.from_array(np.float32(0.001), "sx"), nh.from_array(np.int16(0), "zx"),
             nh.from_array(rng.integers(-127, 128, (6, 4, 3, 3)).astype(np.int8), "Wq"),
             nh.from_array(rng.uniform(0.005, 0.02, 6).astype(np.float32), "sw"), nh.from_array(np.zeros(6, np.int8), "zw"),
             nh.from_array(np.float32(SY), "sy"), nh.from_array(np.int16(0), "zy"),
             nh.from_array(rng.integers(-1000, 1000, 6).astype(np.int32), "Bq"),
             nh.from_array(np.full(6, 1e-5, np.float32), "sb"), nh.from_array(np.zeros(6, np.int32), "zb")]
    nodes = [oh.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
             oh.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
             oh.make_node("DequantizeLinear", ["Wq", "sw", "zw"], ["Wd"], axis=0),
             oh.make_node("DequantizeLinear", ["Bq", "sb", "zb"], ["Bd"], axis=0),
             oh.make_node("Conv", ["xd", "Wd", "Bd"], ["y"], pads=[1, 1, 1, 1]),
             oh.make_node("QuantizeLinear", ["y", "sy", "zy"], ["yq"]),
             oh.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["out"])]
    g = oh.make_graph(nodes, "conv16", [oh.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                      [oh.make_tensor_value_info("out", TensorProto.FLOAT, [1, 6, 8, 8])], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    return m


def test_int16_qdq_conv_within_one_lsb_of_onnxruntime(tmp_path):
    require_programs("gcc")
    model = conv16_qdq()
    path = tmp_path / "conv16.onnx"
    onnx.save(model, path)
    x = np.random.default_rng(1).normal(0, 8, (1, 4, 8, 8)).astype(np.float32)
    (ref,) = ort_run(path, {"x": x})
    outs, _ = compile_and_run(str(path), [x], tmp_path / "c")
    got = np.asarray(outs[0]).reshape(ref.shape)
    lsb = np.abs(got - ref) / SY
    assert lsb.max() <= 1.0 + 1e-3, lsb.max()
    assert np.mean(lsb < 1e-3) > 0.9, np.mean(lsb < 1e-3)
    assert np.abs(ref).max() > 100 * SY                 # the outputs span many int16 steps
