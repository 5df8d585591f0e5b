"""--tuning-records that hold nothing for this model and target (tuned for another target or another
model) are not silent (cost/records.py module doc): one ``warning:`` line naming the file, the model
and target asked for and what the file holds; the default is built (byte for byte), and with
--ram-limit the clear error stays. Records written by hand in tinyfuse tune's format (tune/__init__.py)."""
from __future__ import annotations

import json
import warnings

import pytest

from tinyfuse.cli import main
from tinyfuse.cost.records import TuningRecords, load_records
from tinyfuse.driver import compile_model
from tests.builders import good_model


def _build(model_hash, target, key, model="kws_ref_model"):
    return {"kind": "model", "model_hash": model_hash, "model": model, "target": target, "config_key": key,
            "config": {}, "arena_bytes": 1000, "ram_stack": 200, "instructions": 5000, "changes": []}


def _choice(model_hash, target, model="kws_ref_model"):
    return {"kind": "choice", "model_hash": model_hash, "model": model, "target": target, "config": {},
            "config_key": "a"}


def write_records(path, recs):
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.onnx"
    path.write_bytes(good_model())
    return path


def warning_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning: ")]


def test_records_of_another_target_warn_and_build_the_default(tmp_path, good, capsys):
    """Records tuned on cortex-m4, compiled for cortex-m7: one warning line, the default build's files."""
    h = compile_model(good, target="cortex-m7").model_hash
    rec = write_records(tmp_path / "kws.jsonl", [_build(h, "cortex-m4", "a"), _build(h, "cortex-m4", "b"),
                                                 _choice(h, "cortex-m4")])
    assert main(["compile", str(good), "--target", "cortex-m7", "--tuning-records", str(rec),
                 "-o", str(tmp_path / "o")]) == 0
    lines = warning_lines(capsys.readouterr().err)
    assert lines == [f"warning: --tuning-records {rec}: no tuned choice for model good ({h}) on cortex-m7; the "
                     "file holds 2 builds and a choice of kws_ref_model for cortex-m4: building the default"]
    default = compile_model(good, target="cortex-m7").files
    assert (tmp_path / "o" / "good.c").read_text() == default["good.c"]


def test_records_of_another_model_name_what_they_hold(tmp_path, good, capsys):
    """Records of two other models (and kernel records) for the target asked: the warning lists both."""
    recs = [_build("aaaa", "cortex-m4", "a", "kws"), _choice("aaaa", "cortex-m4", "kws"),
            _build("bbbb", "cortex-m7", "a", "vww"), {"kind": "kernel", "key": "k", "target": "cortex-m4"}]
    rec = write_records(tmp_path / "r.jsonl", recs)
    assert main(["compile", str(good), "--target", "cortex-m4", "--tuning-records", str(rec),
                 "-o", str(tmp_path / "o")]) == 0
    [line] = warning_lines(capsys.readouterr().err)
    assert "no tuned choice for model good (" in line and ") on cortex-m4;" in line
    assert line.endswith("the file holds 1 build and a choice of kws for cortex-m4; 1 build of vww for cortex-m7: "
                         "building the default")


def test_records_that_apply_are_quiet(tmp_path, good, capsys):
    h = compile_model(good, target="cortex-m4").model_hash
    rec = write_records(tmp_path / "r.jsonl", [_build(h, "cortex-m4", "a", "good"), _choice(h, "cortex-m4", "good")])
    assert main(["compile", str(good), "--target", "cortex-m4", "--tuning-records", str(rec),
                 "-o", str(tmp_path / "o")]) == 0
    assert warning_lines(capsys.readouterr().err) == []
    with pytest.warns(UserWarning, match="no tuned choice") as caught:     # and the API warns too: cortex-m7
        compile_model(good, target="cortex-m7", tuning_records=rec)
    assert len(caught) == 1


def test_ram_limit_with_records_that_do_not_apply_warns_then_errs(tmp_path, good, capsys):
    """--ram-limit keeps its clear error (exit 2, one error: line), after the same warning."""
    rec = write_records(tmp_path / "r.jsonl", [_build("aaaa", "cortex-m4", "a")])
    assert main(["compile", str(good), "--target", "cortex-m4", "--tuning-records", str(rec), "--ram-limit", "24K",
                 "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in err] == ["warning", "error"]
    assert err[0] == (f"warning: --tuning-records {rec}: no measured build for model good ("
                      f"{compile_model(good, target='cortex-m4').model_hash}) on cortex-m4; the file holds 1 build "
                      "of kws_ref_model for cortex-m4")
    assert "hold no measured build of this model on cortex-m4" in err[1]


def test_holdings_of_empty_and_in_memory_records(tmp_path):
    assert load_records(write_records(tmp_path / "e.jsonl", [])).holdings() == "no build or choice"
    with pytest.warns(UserWarning, match=r"^tuning records \(0\): no tuned choice for model m \(h\) on host; they "
                      "hold no build or choice: building the default$"):
        assert TuningRecords([]).config_for("h", "host", model="m") is None
    with warnings.catch_warnings():                                         # a forced configuration: quiet
        warnings.simplefilter("error")
        assert TuningRecords(config={}).config_for("h", "host") is not None


def test_a_lone_choice_is_named_as_such():
    recs = TuningRecords([_choice("aaaa", "cortex-m4", "kws"), _build("bbbb", "host", "a", "vww")], source="r.jsonl")
    assert recs.holdings() == "a choice of kws for cortex-m4; 1 build of vww for host"


def test_knobs_that_match_no_kernel_warn(tmp_path):
    """A tuned configuration applied to a build made with other options (here --rounding single: other
    requantize epilogues, so other group signatures) warns that its per-kernel knobs match nothing."""
    import onnx
    from tinyfuse.cost.features import group_signature
    from tests.builders.int8_models import qdq_chain
    model, _ = qdq_chain((1, 8, 8, 8), [dict(cout=16, k=1, s=1, dw=False, relu=True)], seed=1)
    path = tmp_path / "pw.onnx"
    onnx.save(model, path)
    base = compile_model(path, target="cortex-m4")
    config = {"kernels": {group_signature(s.call.op, "cortex-m4"): {"weights": "int16"} for s in base.steps}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # the options it was tuned with: no warning
        compile_model(path, target="cortex-m4", tuning_records=TuningRecords(config=config))
    with pytest.warns(UserWarning, match="per-kernel knobs match no kernel of this build"):
        compile_model(path, target="cortex-m4", rounding="single", tuning_records=TuningRecords(config=config))
