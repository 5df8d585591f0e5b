"""TFLM twin fuzzing per SIMD kernel variant, smoke size (part of make test): 48 drawn models of each
variant's draws (tests/fuzz/tflm_twin.py --variant arm_dsp | arm_mve | arm_fpu: compiled for cortex-m4 /
cortex-m55, built on the host through simd_host.h, two programs of 24 models) against TFLite Micro: int8
byte for byte, float within the rounding bound. Each run must be exact AND must have exercised the
variant: most models' kernels ran it, including at the shape classes where the SIMD paths branch
(width-1 and height-1 images, channels that are not multiples of 4, residual epilogues, FC rows). The
graph fuzzer's smoke per target is here too. ``make fuzz-tflm TFLM_FUZZ_VARIANT=...`` runs thousands;
a failure there becomes a case in test_simd_twin_regressions.py."""
from __future__ import annotations

import json

import pytest

from tests.conftest import require_programs
from tests.fuzz.tflm_twin import campaign, op_list

COUNT = 48
# shape classes each variant's smoke must have run its variant on (twin_draw_simd.py)
MUST_COVER = {"arm_dsp": {"w1", "h1", "c%4", "residual", "rows"},
              "arm_mve": {"w1", "h1", "c%4", "residual", "rows"},
              "arm_fpu": {"w1", "h1", "c%4", "rows", "chain"}}


def _failures(r) -> str:
    return "\n".join(f"seed {f['seed']} {f['op']} {f['variants']}: {f['detail']}\n  params: "
                     f"{json.dumps(f['params'], default=str)}" for f in r["failures"])


@pytest.mark.parametrize("variant", ["arm_dsp", "arm_mve", "arm_fpu"])
def test_variant_smoke_is_exact_and_exercises_the_variant(variant):
    require_programs("gcc")
    r = campaign(list(range(COUNT)), op_list("", variant), progress=False, variant=variant)
    assert not r["failures"], _failures(r)
    rows = r["table"].values()
    compared = sum(row["exact"] + row["tflm wraps"] for row in rows)
    used = sum(row["used"] for row in rows)
    assert compared >= COUNT - 3, r["table"]
    assert used >= 0.75 * COUNT, f"only {used} of {COUNT} models ran {variant}: {r['variants']}"
    missed = {c for c in MUST_COVER[variant] if r["classes"].get(c, {}).get("used", 0) == 0}
    assert not missed, f"{variant} never ran at shape classes {sorted(missed)}: {r['classes']}"


@pytest.mark.parametrize("target,variant", [("cortex-m4", "arm_dsp"), ("cortex-m55", "arm_mve")])
def test_graph_fuzzer_smoke_on_simd_targets(target, variant):
    """The first 12 random ONNX graphs with a SIMD shape class (graph_spec.simd_shapes: width-1 and
    height-1 images, one pixel, channels 1..67; int8 QDQ and float) compiled for the target, SIMD
    kernels on the host stand-ins, against onnxruntime and the numpy reference; some graphs must have
    run the target's int8 SIMD variant and some arm_fpu."""
    from tests.fuzz.generator import campaign as graph_campaign
    from tests.fuzz.graph_spec import random_spec
    require_programs("gcc")
    seeds = [s for s in range(200) if random_spec(s).get("simd")][:12]
    r = graph_campaign(seeds, minimise_failures=False, progress=False, target=target)
    failures = [f"seed {f['seed']} {f['status']}: {f['detail'][:300]}\n  spec: {json.dumps(f['spec'])}"
                for f in r["failures"]]
    assert not failures, "\n".join(failures)
    assert r["counts"].get("ok", 0) >= 10, r["counts"]
    assert r["simd"].get(variant, 0) >= 2 and r["simd"].get("arm_fpu", 0) >= 2, r["simd"]
