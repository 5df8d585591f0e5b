"""tinyfuse quantize: onnxruntime's quantize_static with MCU defaults on a small float conv net. The
output is checked against the QDQ form the defaults promise (per-channel symmetric int8 weights, int8
activations, int32 biases), onnxruntime runs it, the compiled C equals onnxruntime's int8 execution of
the same QDQ model (optimizations off: each node in float on dequantized values, then QuantizeLinear)
with --rounding single, and validate --float-model reports it against the float model."""
from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

from tinyfuse.cli import main
from tests.builders.uint8_models import small_conv_net
from tests.conftest import compile_and_run, require_programs


@pytest.fixture(scope="module")
def quantized(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("q")
    onnx.save(small_conv_net(), tmp / "f.onnx")
    x = np.random.default_rng(0).standard_normal((24, 1, 3, 12, 12)).astype(np.float32)
    np.savez(tmp / "cal.npz", X=x)
    return tmp, x


def test_quantize_writes_mcu_qdq(quantized, capsys):
    tmp, x = quantized
    assert main(["quantize", str(tmp / "f.onnx"), "--calibration", str(tmp / "cal.npz"), "-o", str(tmp / "q.onnx"),
                 "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["samples"] == 24 and s["quantized_ops"]["Conv"] == 3 and s["quantized_ops"]["Gemm"] == 1
    f = ort.InferenceSession(str(tmp / "f.onnx"), providers=["CPUExecutionProvider"])
    y = np.stack([f.run(None, {"X": v})[0] for v in x])
    assert s["top1_agreement"] >= 0.9 and 0 < s["max_abs_error"] < 0.05 * np.max(np.abs(y)), (s, np.max(np.abs(y)))
    q = onnx.load(tmp / "q.onnx")
    assert any(p.key == "tinyfuse.quantize" for p in q.metadata_props)
    init = {t.name: numpy_helper.to_array(t) for t in q.graph.initializer}
    consumers = {i: n for n in q.graph.node for i in n.input}
    weights = [n for n in q.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in init
               and consumers[n.output[0]].op_type in ("Conv", "Gemm") and consumers[n.output[0]].input[1] == n.output[0]]
    assert len(weights) == 4
    for n in weights:                      # per-channel (one scale per output channel), symmetric, int8
        w, scale, zp = (init[i] for i in n.input)
        assert w.dtype == np.int8 and zp.dtype == np.int8 and not zp.any() and scale.shape == (w.shape[0],)
    acts = [n for n in q.graph.node if n.op_type == "QuantizeLinear"]
    assert acts and all(init[n.input[2]].dtype == np.int8 and init[n.input[1]].size == 1 for n in acts)
    biases = [n for n in q.graph.node if n.op_type == "DequantizeLinear" and init.get(n.input[0]) is not None
              and init[n.input[0]].dtype == np.int32]
    assert len(biases) == 4


def test_compiled_quantized_model_equals_onnxruntime_int8(quantized, tmp_path):
    require_programs("gcc")
    tmp, x = quantized
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(tmp / "q.onnx"), so, providers=["CPUExecutionProvider"])
    for k in range(4):
        (want,) = sess.run(None, {"X": x[k]})
        (got,), result = compile_and_run(str(tmp / "q.onnx"), [x[k]], tmp_path / str(k), rounding="single")
        assert any(op.startswith("qnn.") for s in result.steps for op in s.kernel.ops)
        np.testing.assert_array_equal(got, want)


def test_validate_against_the_float_model(quantized, capsys):
    require_programs("gcc")
    tmp, _ = quantized
    assert main(["validate", str(tmp / "q.onnx"), "--float-model", str(tmp / "f.onnx"), "--inputs",
                 str(tmp / "cal.npz"), "--json", "--fail-under", "top1=0.9"]) == 0
    s = json.loads(capsys.readouterr().out)
    (o,) = s["outputs"]
    assert s["reference"] == "onnxruntime (f.onnx)" and o["top1_agreement"] >= 0.9 and o["cosine"] > 0.99


@pytest.mark.parametrize("case", ["tflite", "quantized", "not_ours", "int_samples", "same_file"])
def test_refusals_are_one_error_line(quantized, tmp_path, capsys, case):
    from tests.conftest import shared_or_skip
    tmp, x = quantized
    model, cal, out = tmp / "f.onnx", tmp / "cal.npz", tmp_path / "out.onnx"
    if case == "tflite":
        model = shared_or_skip("models", "tflite", "ad01_fp32.tflite")
        want = "is a TFLite model; quantize takes a float ONNX model"
    elif case == "quantized":
        model, want = shared_or_skip("models", "onnx", "mobilenetv2_035_96_qdq.onnx"), "the model is quantized already"
    elif case == "not_ours":
        out.write_bytes(b"my notes")
        want = "exists and was not written by tinyfuse quantize"
    elif case == "int_samples":
        np.savez(tmp_path / "i.npz", X=(x * 10).astype(np.int32))
        cal, want = tmp_path / "i.npz", "input 'X' takes float samples, got int32"
    else:
        out, want = model, "is the input model"
    before = out.read_bytes() if out.exists() else None
    assert main(["quantize", str(model), "--calibration", str(cal), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: quantize: ") and want in err[0], err
    assert (out.read_bytes() if out.exists() else None) == before          # nothing written or replaced
