"""TFLM twin fuzzing smoke run (part of make test): one random int8 TFLite model per op of
tests/fuzz/tflm_twin.py ``OPS`` (seeds 0 .. len(OPS)-1: every op once), each compiled by tinyfuse and run
against TFLite Micro byte for byte. ``make fuzz-tflm`` runs thousands; a failure there becomes a case in
test_tflm_twin_regressions.py."""
from __future__ import annotations

import json

from tests.fuzz.tflm_twin import OPS, campaign, draw


def test_draws_are_deterministic_and_cover_every_op():
    seeds = range(2 * len(OPS))
    first = [draw(s) for s in seeds]
    again = [draw(s) for s in seeds]
    assert [d.model for d in first] == [d.model for d in again]
    assert {d.op for d in first} == set(OPS)
    assert any(d.params.get("out_q", [1, 0])[1] in (-128, 127) for d in first)       # zero points at the ends


def test_smoke_campaign_is_byte_exact():
    r = campaign(list(range(len(OPS))), progress=False)
    failures = [f"seed {f['seed']} {f['op']}: {f['detail']}\n  params: {json.dumps(f['params'], default=str)}"
                for f in r["failures"]]
    assert not failures, "\n".join(failures)
    exact = sum(row["exact"] + row["tflm wraps"] for row in r["table"].values())
    assert exact >= len(OPS) - 3, r["table"]             # the draws make models both sides run
