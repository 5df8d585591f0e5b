"""Long poly-fused chains ending in a pooling stage, end to end through gcc: the MLPerf Tiny KWS model
(DS-CNN) computed as one line-buffered kernel from its input through the 9 convs and the average
pool equals TensorFlow Lite Micro byte for byte, and the pooled kernel output equals the numpy
reference of the graph (per-layer trace)."""
from __future__ import annotations

import numpy as np

from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host
from tinyfuse.harness.per_layer import compare_layers
from tests.conftest import shared_or_skip, tflm_run


def test_kws_pooling_chain_equals_tflm(tmp_path):
    path = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    result = compile_model(path, target="host")
    chains = [s for s in result.steps if s.call.op.attrs.get("poly")]
    assert len(chains) == 1 and chains[0].kernel.stage_kinds[-1] == "chain.pool", \
        [s.kernel.kind for s in result.steps]
    assert result.arena_bytes < 8192
    exe = build_host(result, tmp_path / "exe")
    rng = np.random.default_rng(7)
    for i in range(3):
        x = rng.integers(-128, 128, (1, 49, 10, 1)).astype(np.int8)
        (got,) = run_host(exe, result, [x])
        np.testing.assert_array_equal(got, tflm_run(path, [x])[0])
        diffs = compare_layers(result, [x], tmp_path / f"trace{i}")
        assert diffs and all(d.matches for d in diffs), [d for d in diffs if not d.matches]
