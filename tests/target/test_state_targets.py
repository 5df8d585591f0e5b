"""Stateful (streaming) models on cortex-m4 under qemu (issue 15): one image holds every frame, the
model is reset once and run frame after frame; every frame's output equals TFLite Micro's stateful
interpreter byte for byte. ``bench`` of a stateful model counts the instructions of one frame and
adds the persistent state to the RAM total."""
import numpy as np

from tinyfuse.driver import compile_model
from tinyfuse.harness.bench import bench_target
from tinyfuse.harness.frames import c_frames, frame_inputs, oracle_frames
from tinyfuse.harness.qemu import build_target
from tinyfuse.targets import get_target
from tests.builders.tflm_state import ring_model, with_outputs
from tests.conftest import shared_or_skip
from tests.target.conftest import require_tools

TARGET = "cortex-m4"


def _equal_tflm(path, result, n, workdir):
    frames = frame_inputs(None, result.inputs, n, seed=0)
    outs, _ = c_frames(result, get_target(TARGET), frames, workdir)
    refs = oracle_frames(path, result, frames)
    bad = [k for k, (o, r) in enumerate(zip(outs, refs))
           if not all(np.array_equal(a, np.asarray(b).reshape(a.shape)) for a, b in zip(o, r))]
    assert bad == [], f"frames differing from TFLM on {TARGET}: {bad[:10]}"


def test_ring_model_on_cortex_m4_equals_tflm(tmp_path):
    require_tools(TARGET)
    path = tmp_path / "ring.tflite"
    path.write_bytes(ring_model(4, 16))
    _equal_tflm(path, compile_model(str(path), target=TARGET), 30, tmp_path / "build")


def test_okay_nabu_200_frames_on_cortex_m4_equal_tflm(tmp_path):
    require_tools(TARGET)
    path = shared_or_skip("models", "real", "okay_nabu.tflite")
    _equal_tflm(path, compile_model(str(path), target=TARGET), 200, tmp_path)


def test_okay_nabu_inner_activations_on_cortex_m4_equal_tflm(tmp_path):
    require_tools(TARGET)
    path = tmp_path / "okay_nabu_probes.tflite"
    path.write_bytes(with_outputs(shared_or_skip("models", "real", "okay_nabu.tflite").read_bytes()))
    _equal_tflm(path, compile_model(str(path), target=TARGET), 200, tmp_path / "build")


def test_bench_of_a_stateful_model_counts_its_state(tmp_path):
    require_tools(TARGET)
    path = shared_or_skip("models", "real", "okay_nabu.tflite")
    result = compile_model(str(path), target=TARGET)
    build = build_target(result, TARGET, tmp_path, frame_inputs(None, result.inputs, 1, seed=0)[0])
    f = bench_target(build)
    assert f["state_bytes"] == result.state_bytes > 3472          # the ring buffers' slack included
    assert f["ram_total"] == result.arena_bytes + result.state_bytes + f["ram_data"] + f["ram_stack"]
    assert 0 < f["instructions"] < 1_000_000
