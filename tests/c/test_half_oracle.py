"""``run --weights-dtype float16``: the oracle is the model as shipped (onnxruntime / TFLite Micro on
the original float32 weights) at run's usual tolerance (1e-4 x max |oracle|); a float16 build whose
rounding moves the outputs by more is a MISMATCH that says so, and names the rounding as the cause
because the C is within the tolerance of the same oracle on a copy of the model whose weights are
rounded through binary16 (harness/half_oracle.py)."""
from __future__ import annotations

import json

import numpy as np
import onnx

from tinyfuse.cli import main as cli_main
from tinyfuse.harness.half_oracle import half_rounded_model, round_half
from tests.builders import model_of
from tests.builders.half_weights import conv_bn_model, fc_float32_model
from tests.conftest import ort_run, require_programs, tflm_run


def _run_json(path, capsys, *extra) -> dict:
    code = cli_main(["run", str(path), "--json", *extra])
    out = json.loads(capsys.readouterr().out)
    assert code == (0 if out["outputs_match"] else 1)
    return out


def test_float16_build_is_judged_against_the_original_weights(tmp_path, capsys):
    """conv + folded BatchNormalization: binary16 weights move the output by more than 1e-4 of its range
    (onnxruntime, independently of tinyfuse: the rounded copy against the original), so run says
    MISMATCH and why; before, it compared with the rounded copy only and said match."""
    require_programs("gcc")
    path = tmp_path / "m1.onnx"
    onnx.save(conv_bn_model(), path)
    x = np.random.default_rng(0).standard_normal((1, 8, 10, 10)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    (full,) = ort_run(conv_bn_model(), {"X": x})
    (rounded,) = ort_run(str(half_rounded_model(path, tmp_path)), {"X": x})
    assert np.max(np.abs(rounded - full)) > 1e-4 * np.max(np.abs(full))        # the rounding's own effect
    half = _run_json(path, capsys, "--weights-dtype", "float16", "--input", str(tmp_path / "x.npy"))
    assert half["oracle"] == half["compared_with"] == "onnxruntime" and half["outputs_match"] is False, half
    assert abs(half["max_abs_ref"] - np.max(np.abs(full))) <= 1e-6 * np.max(np.abs(full))   # the original's outputs
    assert half["max_abs_diff"] > 1e-4 * half["max_abs_ref"]
    assert half["half_max_abs_diff"] <= 1e-4 * half["half_max_abs_ref"]          # the arithmetic is right
    assert "MISMATCH: float16 weights change the result by" in half["verdict"]
    assert cli_main(["run", str(path), "--weights-dtype", "float16", "--input", str(tmp_path / "x.npy")]) == 1
    line = [ln for ln in capsys.readouterr().out.splitlines() if "MISMATCH" in ln]
    assert len(line) == 1 and "above the tolerance 1e-4" in line[0] and "binary16-rounded weights" in line[0]


def test_float16_build_matches_when_the_weights_are_binary16_values(tmp_path, capsys):
    """Weights that binary16 holds exactly (multiples of 1/64 below 2): the float16 build equals the
    original model within the tolerance, and the verdict says against what."""
    require_programs("gcc")
    from onnx import helper
    rng = np.random.default_rng(4)
    w = (rng.integers(-64, 64, (6, 3, 3, 3)) / 64).astype(np.float32)
    assert np.array_equal(round_half(w), w)
    model = model_of([helper.make_node("Conv", ["X", "W"], ["Y"], pads=[1, 1, 1, 1])],
                     {"X": np.zeros((1, 3, 8, 8))}, ["Y"], 13, {"W": w})
    onnx.save(model, tmp_path / "exact.onnx")
    half = _run_json(tmp_path / "exact.onnx", capsys, "--weights-dtype", "float16")
    assert half["outputs_match"] is True and half["weights_dtype"] == "float16"
    assert half["verdict"].endswith("match: within 1e-4 of onnxruntime on the original float32 weights: max rel "
                                    f"error {half['max_abs_diff'] / half['max_abs_ref']:.3g} (float16 weights)")


def test_float_tflite_matches_tflm_on_float16_rounded_weights(tmp_path, capsys):
    require_programs("gcc")
    rng = np.random.default_rng(3)
    w, bias = rng.standard_normal((8, 64)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    path = tmp_path / "fc.tflite"
    path.write_bytes(fc_float32_model(w, bias))
    half = _run_json(path, capsys, "--weights-dtype", "float16")
    assert half["oracle"] == half["half_compared_with"] == "TFLite Micro", half
    assert half["half_max_abs_diff"] <= 1e-4 * half["half_max_abs_ref"]
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
