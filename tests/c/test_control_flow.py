"""ONNX control flow resolved at compile time (frontend/onnx/control_flow.py): an If whose condition
--bind makes constant is inlined (the VAD pattern: If on the sample rate), a Loop with a static trip
count and a Scan are unrolled; the generated C equals onnxruntime (and onnx's reference evaluator)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

from tests.builders import graph_models as gm
from tests.conftest import assert_close_to, compile_and_run, ort_run

RNG = np.random.default_rng(7)
CASES = {   # id: (model, --bind, runtime inputs)
    "vad_16k": (gm.vad_stub, ["sr=16000"], {"x": RNG.standard_normal((1, 1, 16)).astype(np.float32)}),
    "vad_8k": (gm.vad_stub, ["sr=8000"], {"x": RNG.standard_normal((1, 1, 16)).astype(np.float32)}),
    "loop_trip3": (gm.rnn_loop, [], {"x": RNG.standard_normal((1, 6)).astype(np.float32)}),
    "loop_no_cond": (lambda: gm.rnn_loop(trip=4, with_cond=False), [], {"x": RNG.standard_normal((1, 6)).astype(np.float32)}),
    "scan_reverse_axis1": (gm.scan_sum, [], {"x": RNG.standard_normal((4, 5)).astype(np.float32)}),
    "scan_forward": (lambda: gm.scan_sum(reverse=False), [], {"x": RNG.standard_normal((4, 5)).astype(np.float32)}),
    "scan_axis0": (lambda: gm.scan_sum(reverse=False, axis=0), [], {"x": RNG.standard_normal((5, 4)).astype(np.float32)}),
}

# onnx 1.23's reference evaluator concatenates Loop scan outputs of rank > 1 (onnxruntime and the backend
# test test_loop11 stack them) and scans only forward along axis 0: it checks the other cases
EVALUATED = {"vad_16k", "vad_8k", "scan_axis0"}


@pytest.mark.parametrize("case", list(CASES))
def test_control_flow_equals_onnxruntime(tmp_path, case):
    build, bind, feeds = CASES[case]
    model = build()
    outs, _ = compile_and_run(model, list(feeds.values()), tmp_path, bind=bind)
    bound = {k: np.array(int(v), np.int64) for k, v in (b.split("=") for b in bind)}
    refs = ort_run(model, feeds | bound)
    assert len(outs) == len(refs)
    for o, r in zip(outs, refs):
        assert_close_to(o, r)
    if case in EVALUATED:
        for o, e in zip(outs, ReferenceEvaluator(model).run(None, feeds | bound)):
            assert_close_to(o, e)


def test_the_bound_branch_is_the_one_compiled():
    """16 kHz and 8 kHz builds differ by the weights of their branch only (the other branch is gone)."""
    from tinyfuse.driver import compile_model
    a, b = (compile_model(gm.vad_stub(), bind=[f"sr={sr}"]) for sr in (16000, 8000))
    assert a.specialization.bound["sr"].item() == 16000 and a.model_hash != b.model_hash
    assert a.weights_bytes == b.weights_bytes == 16 * 4 * 4 + 4 * 4      # one branch: w [16, 4] + its bias
    assert a.files[f"{a.name}.h"].count("--bind sr=[16000]") == 1


@pytest.mark.parametrize("model,flags", [
    (gm.vad_stub, ["--bind", "sr=8000"]),
    (gm.dynamic_conv, ["--input-shape", "x=2x3x5x7"]),
    (gm.dynamic_conv, ["--input-shape", "x=H=4", "--input-shape", "x=W=6"]),
])
def test_cli_run_specialised_matches_onnxruntime(tmp_path, capsys, model, flags):
    """``tinyfuse run`` compiles the specialised model and feeds onnxruntime the bound inputs too."""
    import json
    import onnx
    from tinyfuse.cli import main
    path = tmp_path / "m.onnx"
    onnx.save(model(), path)
    assert main(["run", str(path), "--json", *flags]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["oracle"] == "onnxruntime" and s["oracle_error"] is None and s["outputs_match"]
