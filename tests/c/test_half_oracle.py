"""``run --weights-dtype float16``: the oracle runs a copy of the model whose float weights are rounded
through binary16 (harness/half_oracle.py), so the C (binary16 weights in flash) is compared with the
same weights at run's usual tolerance (1e-4 x max |oracle|). Oracles: onnxruntime, TFLite Micro; the
float32 model's own oracle differs by more than that tolerance (the case the rounding is for)."""
from __future__ import annotations

import json

import numpy as np
import onnx

from tinyfuse.cli import main as cli_main
from tinyfuse.harness.half_oracle import half_rounded_model, round_half
from tests.builders.half_weights import conv_bn_model, fc_float32_model
from tests.builders.uint8_models import small_conv_net
from tests.conftest import ort_run, require_programs, tflm_run


def _run_json(path, capsys, *extra) -> dict:
    code = cli_main(["run", str(path), "--json", *extra])
    out = json.loads(capsys.readouterr().out)
    assert code == (0 if out["outputs_match"] else 1)
    return out


def test_onnx_conv_nets_match_their_float16_rounded_oracle(tmp_path, capsys):
    require_programs("gcc")
    for i, model in enumerate((small_conv_net(), conv_bn_model())):     # the second folds a BatchNormalization
        path = tmp_path / f"m{i}.onnx"
        onnx.save(model, path)
        half = _run_json(path, capsys, "--weights-dtype", "float16")
        assert half["oracle"] == "onnxruntime" and half["outputs_match"], half
        assert half["max_abs_diff"] <= 1e-4 * half["max_abs_ref"]
    # the float32 oracle is farther than the tolerance from the float16 C (what this oracle fixes)
    x = np.random.default_rng(0).standard_normal((1, 8, 10, 10)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    half = _run_json(tmp_path / "m1.onnx", capsys, "--weights-dtype", "float16", "--input", str(tmp_path / "x.npy"))
    (full,) = ort_run(conv_bn_model(), {"X": x})
    (rounded,) = ort_run(str(half_rounded_model(tmp_path / "m1.onnx", tmp_path)), {"X": x})
    assert np.max(np.abs(rounded - full)) > 1e-4 * np.max(np.abs(full))
    assert half["outputs_match"]


def test_float_tflite_matches_tflm_on_float16_rounded_weights(tmp_path, capsys):
    require_programs("gcc")
    rng = np.random.default_rng(3)
    w, bias = rng.standard_normal((8, 64)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    path = tmp_path / "fc.tflite"
    path.write_bytes(fc_float32_model(w, bias))
    half = _run_json(path, capsys, "--weights-dtype", "float16")
    assert half["oracle"] == "TFLite Micro" and half["outputs_match"], half
    # the rounded copy holds exactly numpy's binary16 round trip of W and the bias
    x = rng.standard_normal((2, 64)).astype(np.float32)
    (y,) = tflm_run(half_rounded_model(path, tmp_path).read_bytes(), [x])
    want = x.astype(np.float64) @ round_half(w).T.astype(np.float64) + round_half(bias)
    assert np.max(np.abs(y - want)) <= 1e-5 * np.max(np.abs(want))
    (y32,) = tflm_run(path.read_bytes(), [x])
    assert np.max(np.abs(y32 - y)) > 1e-4 * np.max(np.abs(y32))


def test_numpy_reference_of_a_float16_build_reads_rounded_weights(tmp_path):
    """The fallback reference (a model no oracle runs, e.g. a hybrid .tflite): the compiled IR with its
    float constants rounded through binary16 agrees with the C within run's tolerance, the unrounded
    IR does not."""
    require_programs("gcc")
    from tinyfuse.driver import compile_model
    from tinyfuse.harness import build_host, run_host
    from tinyfuse.harness.oracles import numpy_outputs
    from tinyfuse.ir.interpreter import run_module
    result = compile_model(conv_bn_model(), weights_dtype="float16")
    x = np.random.default_rng(2).standard_normal((1, 8, 10, 10)).astype(np.float32)
    (got,) = run_host(build_host(result, tmp_path), result, [x])
    (ref,) = numpy_outputs(result, [x])
    (unrounded,) = run_module(result.module, [x])
    tol = 1e-4 * np.max(np.abs(ref))
    assert np.max(np.abs(got - ref)) <= tol < np.max(np.abs(got - unrounded))
