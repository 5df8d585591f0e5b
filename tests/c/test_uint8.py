"""uint8 activations (ONNX QUInt8, onnxruntime.quantization's activation_type=QUInt8; issue 14) by the
zero-point shift (passes/shift_uint8.py). Oracles: onnxruntime on the quantized model (it requantizes
in float: within the documented 12 LSB of QUANT.md / models/README.md) and the per-kernel
real-arithmetic oracle (harness/real_oracle.py: every int8 kernel within 1 LSB); the C must also
equal the fixed-point numpy reference exactly."""
from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tinyfuse.cli import main
from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host
from tinyfuse.harness.real_oracle import MAX_LSB, check_kernels
from tinyfuse.ir.interpreter import run_module
from tests.builders.uint8_models import quantize_ort, small_conv_net
from tests.conftest import ort_run, require_programs, shared_or_skip

ORT_LSB = 12     # onnxruntime requantizes in float (QUANT.md; models/README.md)


def _lsb(got, want, scale: float) -> int:
    return int(np.max(np.rint(np.abs(got.astype(np.float64) - want.astype(np.float64)) / scale)))


def _final_scale(result) -> float:
    """The scale of the model's final DequantizeLinear (its float output's LSB)."""
    dq = [k for k in result.kernels if "qnn.dequantize" in k.ops]
    assert len(dq) == 1, [k.ops for k in result.kernels]
    return float(result.module.main.body.op.body.attrs["scale"])


@pytest.mark.filterwarnings("ignore:legalize_qdq")
@pytest.mark.parametrize("fmt", ["QDQ", "QOperator"])
@pytest.mark.parametrize("weight", ["QInt8", "QUInt8"])
def test_quint8_small_conv_net(weight, fmt, tmp_path):
    """conv, max pool, depthwise, residual add, global pool, gemm: the same kernels as the QInt8
    twin (the shift costs none), within 12 LSB of onnxruntime, every kernel within 1 LSB of real
    arithmetic."""
    require_programs("gcc")
    model = quantize_ort(small_conv_net(), tmp_path, "QUInt8", weight, fmt)
    twin = quantize_ort(small_conv_net(), tmp_path, "QInt8", "QInt8", fmt)
    x = np.random.default_rng(0).standard_normal((1, 3, 12, 12)).astype(np.float32)
    result = compile_model(model)
    (got,) = run_host(build_host(result, tmp_path), result, [x])
    assert np.array_equal(got, run_module(result.module, [x])[0])
    assert _lsb(got, ort_run(model, {"X": x})[0], _final_scale(result)) <= ORT_LSB
    assert len(result.kernels) == len(compile_model(twin).kernels)
    report = check_kernels(result, [x], tmp_path / "trace", "half_even")
    s = report.summary()
    assert s["checked"] == len(result.kernels) - 1 and s["unchecked"] == 0, s    # all but the float output
    assert s["max_lsb"] <= MAX_LSB and report.holds


@pytest.mark.filterwarnings("ignore:legalize_qdq")
@pytest.mark.parametrize("weight,per_channel", [("QInt8", True), ("QUInt8", False)])
def test_quint8_mobilenetv2_run_says_match(weight, per_channel, tmp_path, capsys):
    """MobileNetV2-0.35 (96x96) quantized by onnxruntime with activation_type=QUInt8: `tinyfuse run`
    (onnxruntime + the real-arithmetic oracle) says match; the int8 kernels and arena of the
    onnxruntime-quantized QInt8 model (shared mobilenetv2_035_96_qdq.onnx): uint8 costs no kernel."""
    require_programs("gcc")
    float_model = onnx.load(shared_or_skip("models", "onnx", "mobilenetv2_035_96.onnx"))
    path = tmp_path / "mbv2_quint8.onnx"
    onnx.save(quantize_ort(float_model, tmp_path, "QUInt8", weight, "QDQ", per_channel=per_channel), path)
    assert main(["run", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["outputs_match"] is True and got["real_oracle_holds"] is True, got
    assert got["max_lsb_diff"] <= ORT_LSB and got["real_kernels_unchecked"] == 0
    qint8 = compile_model(shared_or_skip("models", "onnx", "mobilenetv2_035_96_qdq.onnx"))
    assert got["kernels"] == len(qint8.kernels) and got["real_kernels_checked"] == got["kernels"] - 1, got


def _qlinearconv_uint8_io() -> onnx.ModelProto:
    """x uint8 [1, 2, 5, 5] → QLinearConv (uint8 weights, zero point 131) → y uint8: no float anywhere."""
    rng = np.random.default_rng(5)
    inits = [numpy_helper.from_array(np.array(v, dt), n) for n, v, dt in
             (("sx", 0.02, np.float32), ("zx", 120, np.uint8), ("sw", 0.01, np.float32), ("zw", 131, np.uint8),
              ("sy", 0.05, np.float32), ("zy", 90, np.uint8))]
    inits.append(numpy_helper.from_array(rng.integers(0, 256, (3, 2, 3, 3)).astype(np.uint8), "w"))
    node = helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"], ["y"], pads=[1, 1, 1, 1])
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 2, 5, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 3, 5, 5])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_uint8_model_io_keeps_its_dtype_at_the_c_api(tmp_path):
    require_programs("gcc")
    model = _qlinearconv_uint8_io()
    result = compile_model(model)
    assert [t.dtype for t in result.inputs + result.outputs] == ["uint8", "uint8"]
    # the input is shifted by one lone requantize; the output's shift is folded into the conv's requantize
    assert sum(k.ops == ["qnn.requantize"] for k in result.kernels) == 1, [k.ops for k in result.kernels]
    for seed in range(3):
        x = np.random.default_rng(seed).integers(0, 256, (1, 2, 5, 5)).astype(np.uint8)
        (got,) = run_host(build_host(result, tmp_path / str(seed)), result, [x])
        (want,) = ort_run(model, {"x": x})
        assert got.dtype == np.uint8 and np.max(np.abs(got.astype(int) - want)) <= 1
        report = check_kernels(result, [x], tmp_path / f"trace{seed}", "half_even")
        assert report.holds and report.summary()["unchecked"] == 0
