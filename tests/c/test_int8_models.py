"""int8 models end to end. The MLPerf Tiny QDQ models (converted from .tflite with tf2onnx) must equal
TFLite Micro running the .tflite twin byte for byte on the all-zero input and 5 seeded random inputs;
the onnxruntime-quantized models (QDQ and QOperator) must equal our numpy reference exactly and stay
within a few LSB of onnxruntime (which requantizes in float)."""
import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host
from tinyfuse.ir.interpreter import run_module
from tests.conftest import TFLM_HEAD, ort_run, shared_or_skip, tflm_run


@pytest.mark.parametrize("model", sorted(TFLM_HEAD))
def test_mlperf_int8_bit_exact_with_tflm(model, tmp_path):
    onnx_path = shared_or_skip("models", "onnx", f"{model}.onnx")
    tflite_path = shared_or_skip("models", "tflite", f"{model}.tflite")
    io = np.load(onnx_path.with_suffix(".io.npz"))
    result = compile_model(onnx_path)
    exe = build_host(result, tmp_path)
    shape = result.inputs[0].shape
    rng = np.random.default_rng(2024)
    inputs = [np.zeros(shape, np.int8), io["input"]] + [rng.integers(-128, 128, shape).astype(np.int8)
                                                         for _ in range(5)]
    for i, x in enumerate(inputs):
        (got,) = run_host(exe, result, [x])
        (want,) = tflm_run(tflite_path, [x])
        assert np.array_equal(got, want), f"{model} input {i}: {np.sum(got != want)} outputs differ from TFLM"
    assert np.array_equal(run_host(exe, result, [io["input"]])[0], io["tflm"])
    assert result.arena_bytes <= TFLM_HEAD[model]
    for k in result.kernels:   # one requantize per anchor at most (poly fusion chains anchors); no float
        anchors = sum(op in ("qnn.conv2d", "qnn.matmul", "qnn.avg_pool2d", "nn.max_pool2d") for op in k.ops)
        assert k.ops.count("qnn.requantize") <= max(anchors, 1) and "qnn.dequantize" not in k.ops, k.ops


def lsb_diff(got: np.ndarray, ref: np.ndarray, scale: float) -> int:
    return int(np.max(np.rint(np.abs(got.astype(np.float64) - ref.astype(np.float64)) / scale)))


@pytest.mark.parametrize("model", ["mobilenetv2_035_96_qdq", "resnet10_w16_64_qdq", "mobilenetv2_035_96_qop",
                                   "resnet10_w16_64_qop"])
def test_ort_quantized_models_exact_vs_reference(model, tmp_path):
    path = shared_or_skip("models", "onnx", f"{model}.onnx")
    base = model.rsplit("_", 1)[0]
    x = np.load(path.parent / f"{base}.io.npz")["input"]
    result = compile_model(path)
    (got,) = run_host(build_host(result, tmp_path), result, [x])
    (ref,) = run_module(result.module, [x])
    assert np.array_equal(got, ref)                       # the C equals the fixed-point reference
    (want,) = ort_run(path, {"input": x})
    scale = result.module.main.body.op.body.attrs["scale"]   # the final dequantize's scale
    assert lsb_diff(got, want, scale) <= 12               # ORT requantizes in float (QUANT.md)
    assert [k for k in result.kernels if k.ops == ["qnn.dequantize"] or k.ops == ["qnn.quantize"]] \
        == [k for k in result.kernels if k.ops == ["qnn.quantize"]]   # only the model input is quantized alone


def test_cli_run_int8_json_keys(capsys):
    import json
    from tinyfuse.cli import main
    onnx_path = shared_or_skip("models", "onnx", "kws_ref_model.onnx")
    tflite_path = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    io = onnx_path.with_suffix(".io.npz")
    assert main(["run", str(onnx_path), "--input", str(io), "--tflite-ref", str(tflite_path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["ref_exact"] is True and got["tflm_exact"] is True and got["outputs_match"] is True
    assert got["max_lsb_diff"] >= 0 and got["arena_bytes"] <= 16000   # TFLM head


def test_cli_per_layer_names_no_divergence(capsys):
    from tinyfuse.cli import main
    onnx_path = shared_or_skip("models", "onnx", "ad01_int8.onnx")
    assert main(["run", str(onnx_path), "--per-layer"]) == 0
    out = capsys.readouterr().out
    assert "no layer diverges: every kernel matches the numpy reference" in out
    assert "k9_fused_qmatmul_add_qrequantize" in out
