"""Differential fuzzing smoke run (part of make test): 100 fixed-seed random graphs, float and int8
QDQ, through compile → C → gcc → run against onnxruntime and the numpy reference. ``make fuzz`` runs
thousands; a failure there becomes a case in test_regressions.py."""
from __future__ import annotations

import json

from tests.fuzz.generator import campaign, random_spec
from tests.fuzz.newops import NEW_OPS

SEEDS = range(100)


def test_generator_is_deterministic_and_varied():
    assert [random_spec(s) for s in SEEDS] == [random_spec(s) for s in SEEDS]
    specs = [random_spec(s) for s in SEEDS]
    ops = {layer["op"] for s in specs for layer in s["layers"]}
    kinds = {layer.get("kind") for s in specs for layer in s["layers"] if layer["op"] == "conv"}
    assert {"conv", "pool", "act", "const_binary", "binary", "concat", "gap", "head"} <= ops
    assert {"full", "depthwise", "grouped", "pointwise"} <= kinds
    assert set(NEW_OPS) <= ops                                   # the ops of the operator issues
    assert 10 <= sum(s.get("qdq") == "hand" for s in specs) <= 40   # hand-drawn quantization
    assert 20 <= sum(s["quant"] for s in specs) <= 60


def test_smoke_campaign_finds_nothing():
    r = campaign(list(SEEDS), minimise_failures=False, progress=False)
    failures = [f"seed {f['seed']} {f['status']}: {f['detail'][:300]}\n  spec: {json.dumps(f['spec'])}"
                for f in r["failures"]]
    assert not failures, "\n".join(failures)
    assert r["counts"].get("ok", 0) >= 90, r["counts"]          # the generator makes graphs we compile
    assert max(r["lsb_hist"], default=0) <= 4, r["lsb_hist"]     # int8 vs onnxruntime, output LSB
