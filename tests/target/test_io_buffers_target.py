"""``--io-buffers caller`` under qemu (cortex-m4): the test main's static input/output buffers passed to
``<name>_run(arena, in..., out...)`` give onnxruntime's outputs; bench counts them as RAM beside the arena."""
from __future__ import annotations

from tinyfuse.driver import compile_model
from tinyfuse.harness.bench import bench_target
from tinyfuse.harness.qemu import build_target, run_target
from tests.builders.io_models import two_io_feeds as _feeds, two_io_model
from tests.conftest import assert_close_to, ort_run
from tests.target.conftest import require_tools


def test_caller_buffers_on_cortex_m4_match_onnxruntime(tmp_path):
    require_tools("cortex-m4")
    model, feeds = two_io_model(), _feeds()
    result = compile_model(model, target="cortex-m4", io_buffers="caller")
    build = build_target(result, "cortex-m4", tmp_path, [feeds["x"], feeds["z"]])
    for y, r in zip(run_target(build), ort_run(model, feeds)):
        assert_close_to(y, r)
    figures = bench_target(build)
    assert figures["io_bytes"] == result.io_bytes > 0
    assert figures["ram_total"] >= result.arena_bytes + result.io_bytes
