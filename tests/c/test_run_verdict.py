"""run's verdict line states the facts it was decided on (harness/verdict.py): ``--rounding single``
differs from TFLite Micro (double rounding) by design, and the line says so instead of "MISMATCH
(... the outputs equal to TFLite Micro)"; the figures come from TFLM itself."""
from __future__ import annotations

import json

import numpy as np

from tinyfuse.cli import main
from tinyfuse.harness.oracles import tflm_outputs
from tests.conftest import compile_and_run, require_programs, shared_or_skip


def test_rounding_single_reports_the_expected_difference_from_tflm(tmp_path, capsys):
    require_programs("gcc")
    model = shared_or_skip("models", "tflite", "ad01_int8.tflite")
    x = np.random.default_rng(0).integers(-128, 128, (1, 640)).astype(np.int8)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(model), "--rounding", "single", "--input", str(tmp_path / "x.npy"), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    (want,) = tflm_outputs(model, [x])
    (c_out,), _ = compile_and_run(str(model), [x], tmp_path / "single", rounding="single")
    differ = int(np.sum(c_out != want))          # TFLM against the single-rounding C, outside run
    got_equal = s["tflm_equal"]
    assert got_equal == 640 - differ and int(np.max(np.abs(c_out.astype(int) - want))) == 1
    assert s["outputs_match"] is True and s["rounding"] == "single" and s["real_oracle_holds"] is True
    assert s["tflm_exact"] is False and 0 < s["outputs_total"] - got_equal and s["tflm_max_lsb"] == 1
    assert main(["run", str(model), "--rounding", "single", "--input", str(tmp_path / "x.npy")]) == 0
    out = capsys.readouterr().out.splitlines()
    verdict = [ln for ln in out if ln.startswith("int8 verdict:")]
    assert verdict == [s["verdict"]]
    assert verdict[0].startswith("int8 verdict: match (differs from TFLite Micro as expected with --rounding single "
                                 f"(TFLM uses double rounding): {640 - got_equal}/640 outputs differ by up to 1 LSB; "
                                 "every int8 kernel within 1 LSB of real arithmetic")
    assert main(["run", str(model), "--rounding", "double", "--input", str(tmp_path / "x.npy"), "--json"]) == 0
    double = json.loads(capsys.readouterr().out)
    assert double["tflm_equal"] == 640 and "equal to TFLite Micro (640/640)" in double["verdict"]
