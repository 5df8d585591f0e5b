"""``run --per-layer`` on the host (gcc): every kernel's traced output against the numpy reference
of its fused group and, for a .tflite, TFLite Micro's value of the same tensor (TFLM invoked once
with every tensor kept). Int8 kernels must be equal, float kernels within 1e-4 x max |reference|;
one wrong kernel is named as the first divergent layer; a run that stops inside a kernel names it;
a streaming model is traced for its first frame."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tinyfuse.cli import main
from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tinyfuse.harness.per_layer_report import per_layer
from tinyfuse.targets import get_target
from tests.builders.corrupt import corrupt_kernel
from tests.conftest import require_programs, shared_or_skip

KWS_TENSORS = [*range(22, 31), 31, 33, 34]     # see tests/target/test_per_layer_target.py


def _run(capsys, *argv) -> dict:
    require_programs("gcc")
    assert main(["run", *argv, "--per-layer", "--json"]) == 0
    return json.loads(capsys.readouterr().out)["per_layer"]


def test_cli_int8_tflite_every_kernel_equals_reference_and_tflm(capsys):
    path = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    s = _run(capsys, str(path))
    rows = s["kernels"]
    assert s["build"] == "host" and s["board"] is None and s["tflm"] and s["first_divergent"] is None
    assert [r["tflite_tensor"]["index"] for r in rows] == KWS_TENSORS
    assert [r["tflite_tensor"]["op"] for r in rows[-3:]] == ["AVERAGE_POOL_2D", "FULLY_CONNECTED", "SOFTMAX"]
    assert all(r["ref_exact"] == r["total"] == r["tflm_exact"] for r in rows), rows
    assert main(["run", str(path), "--per-layer"]) == 0
    out = capsys.readouterr().out.splitlines()
    table = [ln for ln in out if ln.split()[:1] in (["0"], ["11"])]
    assert len(table) == 2 and table[1].split()[1:3] == ["k11_fused_qsoftmax", "softmax_12"]
    assert table[1].split()[-5:] == ["12/12", "0", "12/12", "0", "ok"]
    assert out[-1].startswith("no layer diverges: every kernel matches the numpy reference, and TFLite Micro on "
                              "the 12 kernels")


def test_cli_float_tflite_within_tolerance_of_tflm(capsys):
    path = shared_or_skip("models", "tflite", "ad01_fp32.tflite")
    s = _run(capsys, str(path))
    rows = s["kernels"]
    assert s["tflm"] and s["first_divergent"] is None and len(rows) == 10
    for r in rows:
        assert r["dtype"] == "float32" and r["tflm_exact"] is not None
        assert r["tflm_max_diff"] <= 1e-4 * r["ref_max_abs"] and r["ref_max_diff"] <= 1e-4 * r["ref_max_abs"]


def test_host_trace_names_the_corrupted_kernel(tmp_path):
    require_programs("gcc")
    path = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    result = compile_model(path, target="host")
    name = corrupt_kernel(result, 3)
    x = np.random.default_rng(3).integers(-128, 128, result.inputs[0].shape).astype(np.int8)
    s = per_layer(path, result, get_target("host"), [x], tmp_path)
    rows = s["kernels"]
    assert s["first_divergent"] == 3 and rows[3]["kernel"] == name
    assert all(r["ref_exact"] == r["total"] == r["tflm_exact"] for r in rows[:3])
    assert rows[3]["ref_exact"] == rows[3]["tflm_exact"] == rows[3]["total"] - 1


def test_run_stopping_inside_a_kernel_is_named(tmp_path):
    require_programs("gcc")
    path = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    result = compile_model(path, target="host")
    name = corrupt_kernel(result, 4, "__builtin_trap();")
    x = np.zeros(result.inputs[0].shape, np.int8)
    with pytest.raises(TinyfuseError, match=f"trace ends before kernel 4 \\({name}\\): the run stopped in it"):
        per_layer(path, result, get_target("host"), [x], tmp_path)


def test_cli_stateful_model_traces_its_first_frame(capsys):
    """okay_nabu (microWakeWord, int8 streaming): one frame from the reset state against TFLM's first
    invocation; its two SPLIT_V operators write two tensors of one shape each, so the slice kernels
    cannot be told apart: internal, checked against the reference only."""
    path = shared_or_skip("models", "real", "okay_nabu.tflite")
    s = _run(capsys, str(path))
    rows = s["kernels"]
    assert s["stateful"] and s["tflm"] and s["first_divergent"] is None
    internal = [r["layers"] for r in rows if r["tflite_tensor"] is None]
    assert internal[:4] == [["split_v_26"], ["split_v_26"], ["split_v_36"], ["split_v_36"]]
    assert all(r["ref_exact"] == r["total"] for r in rows)
    assert all(r["tflm_exact"] == r["total"] for r in rows if r["tflite_tensor"] is not None)
    assert sum(r["tflite_tensor"] is not None for r in rows) >= 18


def test_cli_float16_weights_reference_reads_the_rounded_weights(capsys):
    """--weights-dtype float16: the C reads binary16-rounded weights, so the per-kernel reference and
    TFLM (on the rounded copy of the model) must use them too; float32 weights put every kernel of
    ad01 about 1e-3 x max |reference| off. The end-to-end verdict is against the original weights: the
    rounding moves ad01's outputs by 7e-4 of their range, above run's 1e-4 (exit 1, the cause named)."""
    require_programs("gcc")
    path = shared_or_skip("models", "tflite", "ad01_fp32.tflite")
    assert main(["run", str(path), "--weights-dtype", "float16", "--per-layer", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert "float16 weights change the result by" in out["verdict"] and out["half_max_abs_diff"] == 0
    s = out["per_layer"]
    assert s["tflm"] and s["first_divergent"] is None
    assert all(r["ref_matches"] and r["tflm_matches"] for r in s["kernels"])
