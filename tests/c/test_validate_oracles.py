"""validate picks its reference as run does (harness/sample_oracle.py), refuses samples whose dtype is
not the input's (--quantize-inputs quantizes float samples, saturating), and --fail-under turns a
metric into the exit status. Oracles: TFLite Micro, LiteRT, onnxruntime, hand-computed values."""
from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from tinyfuse.cli import main
from tests.builders.tflite_weights import conv_fp16_model
from tests.conftest import require_programs, shared_or_skip, skip_or_fail


def _validate(capfd, *argv) -> tuple[int, str, str]:
    code = main(["validate", *argv, "--no-progress"])
    out, err = capfd.readouterr()
    return code, out, err


def test_hybrid_tflite_falls_back_to_the_numpy_reference_as_run_does(tmp_path, capfd):
    """kws_ref_model_float32.tflite (int8 weights, float activations): TFLM refuses hybrid models. Before:
    exit 2 and TFLM's raw C++ messages on stderr. Now one line says why, and the C is compared with the
    numpy reference; its outputs are checked against onnxruntime on the ONNX twin here."""
    require_programs("gcc")
    model = shared_or_skip("models", "tflite", "kws_ref_model_float32.tflite")
    twin = shared_or_skip("models", "onnx", "kws_ref_model_float32.onnx")
    x = np.load(shared_or_skip("models", "onnx", "kws_ref_model_float32.io.npz"))["input"]
    xs = np.concatenate([x, x * 0.5, x[:, ::-1]]).astype(np.float32)
    np.savez(tmp_path / "s.npz", input=xs)
    code, out, err = _validate(capfd, str(model), "--inputs", str(tmp_path / "s.npz"), "--json")
    assert code == 0 and err == "", err                 # nothing of TFLM's own printing reaches the terminal
    s = json.loads(out)
    assert s["reference"].startswith("numpy reference") and "Hybrid models are not supported" in s["reference_note"]
    assert s["outputs"][0]["cosine"] > 0.999999 and s["outputs"][0]["top1_agreement"] == 1.0
    code, out, _ = _validate(capfd, str(model), "--inputs", str(tmp_path / "s.npz"), "--float-model", str(twin), "--json")
    assert code == 0 and json.loads(out)["outputs"][0]["max_abs_error"] < 1e-4     # onnxruntime on the twin


def test_float16_weight_tflite_uses_litert(tmp_path, capfd):
    require_programs("gcc")
    if importlib.util.find_spec("ai_edge_litert") is None:
        skip_or_fail("ai-edge-litert not installed")
    from tests.builders.tflite_convt import litert_run
    rng = np.random.default_rng(5)
    w, b = rng.standard_normal((4, 3, 3, 2)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    data = conv_fp16_model((1, 6, 6, 2), w, b)
    (tmp_path / "c.tflite").write_bytes(data)
    xs = rng.standard_normal((5, 1, 6, 6, 2)).astype(np.float32)
    np.savez(tmp_path / "s.npz", input=xs)
    code, out, err = _validate(capfd, str(tmp_path / "c.tflite"), "--inputs", str(tmp_path / "s.npz"), "--json")
    assert code == 0 and err == ""
    s = json.loads(out)
    assert s["reference"] == "LiteRT (c.tflite)" and s["reference_note"].startswith("TFLite Micro: ")
    want = np.stack([litert_run(data, [x])[0] for x in xs])
    assert s["outputs"][0]["max_abs_error"] <= 1e-4 * np.max(np.abs(want))


@pytest.mark.parametrize("dtype, value", [("int32", 1000), ("float32", 0.5), ("int16", 3), ("uint8", 200)])
def test_mistyped_samples_are_one_error_line(tmp_path, capfd, dtype, value):
    """An int8 input given int32 samples was wrapped (1000 -> -24) and float ones quantized silently."""
    model = shared_or_skip("models", "tflite", "ad01_int8.tflite")
    np.savez(tmp_path / "s.npz", input=np.full((2, 1, 640), value, dtype))
    code, out, err = _validate(capfd, str(model), "--inputs", str(tmp_path / "s.npz"))
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1, err
    assert lines[0] == (f"error: --inputs {tmp_path / 's.npz'}: input 'input_1' takes int8 samples, got {dtype}"
                        + ("; --quantize-inputs quantizes float samples with the input's scale 0.391015 and zero "
                           "point 89" if dtype == "float32" else ""))


def test_quantize_inputs_rounds_and_saturates():
    """q = clamp(round_half_even(x / scale) + zero_point), by hand: scale 0.5, zero point -3."""
    from tinyfuse.validate import _sample_for

    class Info:
        name, dtype = "x", "int8"
    x = np.array([0.0, 0.25, 0.75, -1.0, 1000.0, -1000.0, 62.0], np.float32)
    got = _sample_for(x, Info, (0.5, -3), True, "s.npz")
    assert got.dtype == np.int8 and got.tolist() == [-3, -3, -1, -5, 127, -128, 121]
    assert _sample_for(x.astype(np.float64), type("F", (), {"name": "y", "dtype": "float32"}), None, False,
                       "s.npz").dtype == np.float32              # float samples for a float input: rounded to float32


def test_fail_under_sets_the_exit_status(tmp_path, capfd):
    """0 of N exact exited 0. ad01_int8 with --rounding single differs from TFLM by 1 LSB on some
    outputs (TFLM rounds twice): exact=1.0 fails (exit 1), cosine=0.99 passes."""
    require_programs("gcc")
    model = shared_or_skip("models", "tflite", "ad01_int8.tflite")
    np.savez(tmp_path / "s.npz", input=np.random.default_rng(1).integers(-128, 128, (6, 1, 640)).astype(np.int8))
    args = [str(model), "--inputs", str(tmp_path / "s.npz"), "--rounding", "single"]
    code, out, _ = _validate(capfd, *args, "--fail-under", "exact=1.0", "--fail-under", "cosine=0.99", "--json")
    s = json.loads(out)
    assert code == 1 and s["passed"] is False and s["outputs"][0]["exact"] < 6
    assert [(c["metric"], c["passed"]) for c in s["criteria"]] == [("exact", False), ("cosine", True)]
    code, out, _ = _validate(capfd, *args, "--fail-under", "cosine=0.99")
    assert code == 0 and "--fail-under cosine=0.99: output 'Identity' 0.99" in out and "passed" in out
    code, out, _ = _validate(capfd, *args[:3], "--fail-under", "exact=1")          # double rounding: bit-exact
    assert code == 0 and "passed" in out
    for bad, why in [("exact=x", "is not a number"), ("speed=1", "METRIC one of")]:
        code, _, err = _validate(capfd, *args, "--fail-under", bad)
        assert code == 2 and why in err
    code, _, err = _validate(capfd, *args, "--fail-under", "accuracy=0.5")
    assert code == 2 and err.strip() == "error: --fail-under accuracy needs --labels (class indices of the samples)"
