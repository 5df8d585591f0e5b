"""tinyfuse validate: many inputs through one build of the generated C against independent references
(TFLite Micro for int8 .tflite, onnxruntime for float ONNX), with the metrics checked by hand."""
import json

import numpy as np
import pytest

from tinyfuse.cli import main
from tinyfuse.validate import load_samples, output_metrics
from tests.conftest import shared_or_skip

N = 20


def test_kws_int8_bit_exact_with_tflm(tmp_path, capsys):
    model = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (N, 1, 49, 10, 1)).astype(np.int8)
    np.savez(tmp_path / "samples.npz", input=x)
    np.save(tmp_path / "labels.npy", rng.integers(0, 12, N))
    assert main(["validate", str(model), "--inputs", str(tmp_path / "samples.npz"),
                 "--labels", str(tmp_path / "labels.npy"), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    (o,) = s["outputs"]
    assert s["samples"] == N and s["reference"].startswith("TFLite Micro")
    assert o["top1_agreement"] == 1.0 and o["exact"] == N and o["max_abs_error"] == 0 and abs(o["cosine"] - 1) < 1e-12
    assert o["accuracy"] == o["reference_accuracy"]           # same outputs, same accuracy
    assert main(["validate", str(model), "--inputs", str(tmp_path / "samples.npz"), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert f"{N}/{N}" in text and "100.00%" in text


def test_float_onnx_close_to_onnxruntime(tmp_path, capsys):
    model = shared_or_skip("models", "onnx", "kws_ref_model_float32.onnx")
    x = np.random.default_rng(1).standard_normal((N, 1, 49, 10, 1)).astype(np.float32) * 10
    np.save(tmp_path / "samples.npy", x)
    assert main(["validate", str(model), "--inputs", str(tmp_path / "samples.npy"), "--json"]) == 0
    (o,) = json.loads(capsys.readouterr().out)["outputs"]
    assert o["max_abs_error"] < 1e-4 and o["cosine"] > 0.99999 and o["top1_agreement"] == 1.0
    assert o["exact"] is None                                  # float outputs: no exact count


def test_metrics_by_hand():
    ours = np.array([[[1, 2, 3]], [[3, 0, 0]]], np.int8)
    ref = np.array([[[1, 2, 3]], [[0, 0, 4]]], np.int8)
    m = output_metrics(ours, ref, labels=np.array([2, 0]))
    assert m["max_abs_error"] == 4 and m["exact"] == 1 and m["elements_equal"] == 4 and m["top1_agreement"] == 0.5
    assert np.isclose(m["rmse"], np.sqrt((9 + 16) / 6)) and np.isclose(m["cosine"], 14 / (np.sqrt(23) * np.sqrt(30)))
    assert m["accuracy"] == 1.0 and m["reference_accuracy"] == 0.5


def test_sample_layouts(tmp_path):
    class Info:
        name, shape, dtype = "input_1", (1, 4), "int8"
    np.savez(tmp_path / "a.npz", input_1=np.zeros((3, 4), np.int8))       # (N, *shape[1:])
    np.savez(tmp_path / "b.npz", x=np.zeros((1, 4), np.int8))             # exactly one sample, the only key
    assert len(load_samples(tmp_path / "a.npz", [Info])) == 3
    assert [s[0].shape for s in load_samples(tmp_path / "b.npz", [Info])] == [(1, 4)]


def test_int8_model_against_its_float_twin(tmp_path, capsys):
    """--float-model --quantize-inputs: float samples quantized with the int8 model's input scale, its int8 output
    dequantized with the output scale, compared with onnxruntime on the float model."""
    model = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    twin = shared_or_skip("models", "onnx", "kws_ref_model_float32.onnx")
    x = np.random.default_rng(2).standard_normal((N, 1, 49, 10, 1)).astype(np.float32) * 10
    np.save(tmp_path / "samples.npy", x)
    assert main(["validate", str(model), "--inputs", str(tmp_path / "samples.npy"), "--float-model", str(twin),
                 "--quantize-inputs", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    (o,) = s["outputs"]
    assert s["reference"] == "onnxruntime (kws_ref_model_float32.onnx)" and o["dequantized"] and o["exact"] is None
    assert o["cosine"] > 0.95 and o["max_abs_error"] < 0.5 and o["top1_agreement"] >= 0.9   # softmax probabilities


def test_int8_onnx_against_its_float_model_uses_the_compiled_input_quantization(tmp_path):
    """tf2onnx puts a Reshape between the int8 graph input and its first DequantizeLinear: validate takes
    the input scale and zero point from the compiled model (the header's), not from that node, so the
    float reference sees dequantized inputs (before: raw int8 codes, cosine 0.44, top-1 6%)."""
    from tinyfuse.validate import validate
    quant = shared_or_skip("models", "onnx", "pretrainedResnet_quant.onnx")
    flt = shared_or_skip("models", "onnx", "pretrainedResnet.onnx")
    x = np.random.default_rng(0).integers(-128, 128, (16, 1, 32, 32, 3)).astype(np.int8)
    np.savez(tmp_path / "r.npz", input_1=x)
    m = validate(str(quant), str(tmp_path / "r.npz"), float_model=str(flt), progress=False)["outputs"][0]
    assert m["cosine"] > 0.97 and m["top1_agreement"] >= 0.9


def test_float_samples_for_an_int8_onnx_model_are_quantized_on_request(tmp_path):
    from tinyfuse.errors import TinyfuseError
    from tinyfuse.validate import validate
    kws = shared_or_skip("models", "onnx", "kws_ref_model.onnx")
    np.savez(tmp_path / "k.npz", input_1=np.random.default_rng(1).standard_normal((8, 1, 49, 10, 1)).astype(np.float32))
    with pytest.raises(TinyfuseError, match="input 'input_1' takes int8 samples, got float32; --quantize-inputs"):
        validate(str(kws), str(tmp_path / "k.npz"), progress=False)
    m = validate(str(kws), str(tmp_path / "k.npz"), progress=False, quantize_inputs=True)["outputs"][0]
    assert m["cosine"] > 0.99


@pytest.mark.parametrize("bad", ["garbage_npz", "empty", "string_labels", "wrong_float_model", "tflite_by_content"])
def test_user_errors_are_one_line_exit_2(tmp_path, capsys, bad):
    """Mistakes a script makes with validate end with exit 2 and one error line, never an internal error."""
    from tinyfuse.cli import main
    kws = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    x = np.random.default_rng(2).integers(-128, 128, (4, 1, 49, 10, 1)).astype(np.int8)
    np.savez(tmp_path / "x.npz", input_1=x)
    args = ["validate", str(kws), "--inputs", str(tmp_path / "x.npz"), "--no-progress"]
    if bad == "garbage_npz":
        (tmp_path / "g.npz").write_bytes(b"not a zip")
        args[3] = str(tmp_path / "g.npz")
    elif bad == "empty":
        np.savez(tmp_path / "e.npz", input_1=np.zeros((0, 1, 49, 10, 1), np.int8))
        args[3] = str(tmp_path / "e.npz")
    elif bad == "string_labels":
        np.save(tmp_path / "l.npy", np.array(["yes", "no", "yes", "no"]))
        args += ["--labels", str(tmp_path / "l.npy")]
    elif bad == "wrong_float_model":
        args += ["--float-model", str(shared_or_skip("models", "onnx", "pretrainedResnet.onnx"))]
    else:                                     # TFLite content under a name that says nothing
        (tmp_path / "model.bin").write_bytes(kws.read_bytes())
        args[1] = str(tmp_path / "model.bin")
        assert main(args) == 0
        return
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "internal error" not in err[0]
