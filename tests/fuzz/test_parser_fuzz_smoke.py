"""Parser fuzzing smoke run (part of make test): 200 fixed-seed mutants per format through compile_model
and 4 per format through ``python -m tinyfuse compile``, in two worker processes. ``make fuzz-parsers``
runs 10,000 per format; a finding there becomes a case in test_parser_regressions.py."""
from __future__ import annotations

from tests.conftest import shared_or_skip
from tests.fuzz.parser_mutators import mutate, seeds
from tests.fuzz.parsers import campaign, check_in_process, draw_plans, summary


def test_plans_are_deterministic_and_varied():
    plans = draw_plans("onnx", 300, 0)
    assert plans == draw_plans("onnx", 300, 0)
    kinds = {e[0] for p in plans for e in p[1]}
    assert len(kinds) >= 20, kinds                        # most protobuf edit kinds are drawn
    assert {e[0] for p in plans for e in p[2]} == {"truncate", "flip", "overwrite", "insert", "delete"}
    assert len({mutate("onnx", p)[1] for p in plans[:100]}) >= 60


def test_unmutated_seeds_compile(tmp_path):
    shared_or_skip("models")
    for fmt in ("onnx", "tflite"):
        assert len(seeds(fmt)) >= 10
        for k, (name, _) in enumerate(seeds(fmt)):
            if name.startswith("gen_"):
                assert check_in_process(fmt, (k, [], []), tmp_path) == ("compiled", name)


def test_smoke_campaign_has_no_other_outcome():
    shared_or_skip("models")
    report = campaign(200, seed=0, cli=4, jobs=2)
    print("\n".join(summary(report)))
    other = [f"{fmt} {mode} {line}" for fmt, modes in report.items() for mode, r in modes.items() for line in r["other"]]
    assert not other, "\n".join(other)
    for fmt in ("onnx", "tflite"):
        r = report[fmt]["in_process"]
        assert r["tried"] == 200 and r["error"] + r["compiled"] == 200
        assert r["error"] >= 100 and r["compiled"] >= 5, r     # mutants reach both outcomes
        assert report[fmt]["cli"]["tried"] == 4
