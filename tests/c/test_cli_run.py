"""``tinyfuse run`` (gcc on the host) under issue 19: an oracle that cannot run the model is reported on
one line and the C is still checked, TFLM's arena is sized from the model, the int8 top-5 is right,
the report names the oracle it used, and ``--json`` has the same keys for every model type."""
from __future__ import annotations

import json
import sys

import numpy as np
import onnx
from onnx import helper

from tinyfuse.cli import main
from tinyfuse.harness.oracles import tflm_outputs
from tests.builders import residual_block
from tests.conftest import compile_and_run, ort_run, shared_or_skip
from tests.builders import model_bytes
# run --json: the same keys for every model type (issue 19 #16)
RUN_JSON_KEYS = {"model", "target", "board", "tinyfuse_version", "kernels", "arena_bytes", "naive_bytes",
                 "weights_bytes", "macs", "oracle", "oracle_error", "compared_with", "max_abs_diff", "max_abs_ref",
                 "quantized", "ref_exact", "max_lsb_diff", "tflm_exact", "tflm_error", "outputs_match",
                 "real_oracle_holds", "real_kernels_checked", "real_lsb0", "real_lsb1", "real_kernels_over",
                 "real_kernels_unchecked", "real_max_lsb",
                 # the frame keys of a stateful model's run (harness/frames.py): the same set for every model
                 "n_frames", "exact_frames", "matching_frames", "numpy_exact_frames", "frames", "last_outputs",
                 "state_bytes", "oracle_unavailable", "per_layer",
                 # the verdict's facts (harness/verdict.py)
                 "rtol", "weights_dtype", "half_compared_with", "half_max_abs_diff", "half_max_abs_ref", "rounding",
                 "tflm_equal", "tflm_max_lsb", "outputs_total", "verdict"}

N = helper.make_node
W = np.random.default_rng(0).standard_normal((4, 2, 3, 3)).astype(np.float32)


def run_json(capsys, *argv) -> dict:
    assert main(["run", *argv, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert set(got) == RUN_JSON_KEYS and got["tinyfuse_version"]
    return got


def test_onnxruntime_rejecting_the_model_is_reported(tmp_path, capsys):
    """onnxruntime refuses Conv with auto_pad=SAME_UPPER and dilations (valid ONNX): run reports it on
    one line and compares with the numpy reference. Independently, the C equals onnxruntime on the
    same Conv with the explicit pads SAME_UPPER means (effective kernel 5: 2 on each side)."""
    conv = dict(name="c", dilations=[2, 2])
    path = tmp_path / "same_upper.onnx"
    path.write_bytes(model_bytes([N("Conv", ["X", "W"], ["Y"], auto_pad="SAME_UPPER", **conv)],
                                 {"X": [1, 2, 8, 8]}, inits={"W": W}))
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr()
    lines = [ln for ln in out.out.splitlines() if "cannot run the model" in ln]
    assert len(lines) == 1 and lines[0].startswith("onnxruntime cannot run the model (") and "Dilation" in lines[0]
    assert "max |tinyfuse - numpy reference|" in out.out and "Traceback" not in out.err and out.err == ""
    got = run_json(capsys, str(path))
    assert got["oracle_error"] and got["compared_with"] == "numpy reference" and got["outputs_match"] is True
    explicit = onnx.load_from_string(model_bytes([N("Conv", ["X", "W"], ["Y"], pads=[2, 2, 2, 2], **conv)],
                                                 {"X": [1, 2, 8, 8]}, inits={"W": W}))
    x = np.random.default_rng(1).standard_normal((1, 2, 8, 8)).astype(np.float32)
    (c_out,), _ = compile_and_run(str(path), [x], tmp_path / "build")
    (want,) = ort_run(explicit, {"X": x})
    assert np.max(np.abs(c_out - want)) <= 1e-4 * np.max(np.abs(want))


def test_tflm_refusing_a_hybrid_model_is_reported(capsys):
    path = shared_or_skip("models", "tflite", "kws_ref_model_float32.tflite")
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("TFLite Micro cannot run the model (Hybrid models are not supported")
    got = run_json(capsys, str(path))
    assert got["oracle"] == "TFLite Micro" and "Hybrid" in got["oracle_error"] and got["outputs_match"] is True


def tflm_oneop():
    tools = shared_or_skip("tools", "tflm_oneop.py").parent
    if str(tools) not in sys.path:
        sys.path.insert(0, str(tools))
    import tflm_oneop
    return tflm_oneop


def test_tflm_arena_grows_past_1_mib(tmp_path, capsys):
    """A camera-size max pool (1.5 MiB input) needs more than the old fixed 1 MiB arena: the arena
    grows from 64 KiB until TFLM allocates; the result equals the max pool computed by hand."""
    path = tmp_path / "pool.tflite"
    path.write_bytes(tflm_oneop().max_pool2d((1, 256, 256, 24), (0.05, 3)))
    x = np.random.default_rng(0).integers(-128, 128, (1, 256, 256, 24)).astype(np.int8)
    (y,) = tflm_outputs(path, [x], 1, arena_hint=0)
    assert np.array_equal(y, x.reshape(1, 128, 2, 128, 2, 24).max(axis=(2, 4)))
    got = run_json(capsys, str(path))
    assert got["oracle_error"] is None and got["compared_with"] == "TFLite Micro" and got["max_abs_diff"] == 0


def test_int8_top5_ranks_minus_128_last(capsys):
    """kws_ref_model's output has -128s: argsort(-int8) ranked them first (-(-128) overflows)."""
    model = shared_or_skip("models", "onnx", "kws_ref_model.onnx")
    io = model.with_suffix(".io.npz")
    assert main(["run", str(model), "--input", str(io)]) == 0
    top = next(ln for ln in capsys.readouterr().out.splitlines() if ln.strip().startswith("top-5:"))
    shown = [(int(c.split(":")[0].split()[1]), int(c.split(":")[1])) for c in top.split("top-5:")[1].split(",")]
    name = onnx.load(str(model)).graph.input[0].name
    (want,) = ort_run(model, {name: np.load(io)["input"]})          # onnxruntime: the independent output
    v = want.reshape(-1).astype(int).tolist()
    assert [c for c, _ in shown] == sorted(range(len(v)), key=lambda i: (-v[i], i))[:5]
    assert [x for _, x in shown] == sorted(v, reverse=True)[:5]


def test_tflite_report_names_tflm_not_onnxruntime(capsys):
    """The LSB line of a .tflite model compares with TFLM (its reference), not onnxruntime."""
    path = shared_or_skip("models", "tflite", "ad01_int8.tflite")
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    assert "LSB difference vs TFLite Micro" in out and "onnxruntime" not in out
    got = run_json(capsys, str(path))
    assert got["tflm_exact"] is True and got["max_lsb_diff"] == 0 and got["quantized"] is True


def test_run_json_keys_do_not_depend_on_the_model_type(capsys):
    """Float ONNX, int8 ONNX and int8 TFLite: one key set, with weights_bytes, macs, tinyfuse_version."""
    models = [shared_or_skip("models", "onnx", "ad01_fp32.onnx"), shared_or_skip("models", "onnx", "ad01_int8.onnx"),
              shared_or_skip("models", "tflite", "ad01_int8.tflite")]
    for m in models:
        got = run_json(capsys, str(m))
        assert got["weights_bytes"] > 0 and got["macs"] == 264192 and got["outputs_match"] is True


def test_run_json_keys(tmp_path, capsys):
    model = tmp_path / "res.onnx"
    model.write_bytes(residual_block().SerializeToString())
    x = np.random.default_rng(0).standard_normal((1, 8, 6, 7)).astype(np.float32)
    np.savez(tmp_path / "x.npz", x=x)
    got = run_json(capsys, str(model), "--input", str(tmp_path / "x.npz"))
    assert got["outputs_match"] is True and got["kernels"] == 6 and got["oracle"] == "onnxruntime"
