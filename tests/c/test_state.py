"""Stateful (streaming) models in C (issue 15): ``<name>_reset(state)`` once, ``<name>_run(arena,
state)`` per frame, every frame's output byte-identical to TFLite Micro's stateful interpreter (one
interpreter invoked frame after frame, keeping its resource variables and variable tensors).

Models: the hand-built ring-buffer / accumulator model and a variable-tensor model
(tests/builders/tflm_state.py), and ../shared/models/real/okay_nabu.tflite (microWakeWord, 200
frames). The generated header documents the API and the state size macro."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse.cli import main as cli_main
from tinyfuse.driver import compile_model
from tinyfuse.harness.frames import c_frames, frame_inputs, oracle_frames
from tinyfuse.targets import get_target
from tests.builders.tflm_state import (read_after_write_model, ring_init, ring_model, variable_tensor_model,
                                       with_outputs)
from tests.conftest import require_programs, shared_or_skip


def _frames_equal_tflm(path, result, frames, workdir):
    outs, _ = c_frames(result, get_target("host"), frames, workdir)
    refs = oracle_frames(path, result, frames)
    assert len(outs) == len(refs) == len(frames)
    bad = [k for k, (o, r) in enumerate(zip(outs, refs))
           if not all(np.array_equal(a, np.asarray(b).reshape(a.shape)) for a, b in zip(o, r))]
    assert bad == [], f"frames differing from TFLM: {bad[:10]}"
    return outs


@pytest.mark.parametrize("history,width,ring,disable", [(3, 4, 0, ()), (5, 16, 16, ()),
                                                        (5, 16, 0, ("ring_buffer",))])
def test_ring_buffer_model_equals_tflm_every_frame(tmp_path, history, width, ring, disable):
    """A 4-byte step keeps the shift (store back); a 16-byte one becomes a ring buffer (passes/
    ring_buffer.py) whose window wraps every few of the 40 frames; both equal TFLM."""
    require_programs("gcc")
    path = tmp_path / "ring.tflite"
    path.write_bytes(ring_model(history, width))
    result = compile_model(str(path), disabled_passes=disable)
    assert [s.ring_step for s in result.states] == [ring, 0]
    assert ("memmove(" in result.files["ring.c"]) == bool(ring)
    frames = frame_inputs(None, result.inputs, 40, seed=7)
    outs = _frames_equal_tflm(path, result, frames, tmp_path / "build")
    ring0, _ = ring_init(history, width)          # hand-computed: frame 0 starts from the CALL_ONCE init
    assert np.array_equal(outs[0][0][0, :history * width], ring0.reshape(-1) + 3)


def test_variable_tensor_model_equals_tflm(tmp_path):
    require_programs("gcc")
    path = tmp_path / "vt.tflite"
    path.write_bytes(variable_tensor_model())
    result = compile_model(str(path))
    _frames_equal_tflm(path, result, frame_inputs(None, result.inputs, 5, seed=1), tmp_path / "build")


def test_okay_nabu_inner_activations_equal_tflm_for_200_frames(tmp_path):
    """Random features drive okay_nabu's probability to 0 after three frames; its inner int8
    activations (every stream state feeds one) and the logit vary every frame: all equal TFLM."""
    require_programs("gcc")
    path = tmp_path / "okay_nabu_probes.tflite"
    path.write_bytes(with_outputs(shared_or_skip("models", "real", "okay_nabu.tflite").read_bytes()))
    result = compile_model(str(path))
    assert len(result.outputs) == 7 and [s.ring_step for s in result.states] == [64, 64, 64, 64, 32, 0]
    outs = _frames_equal_tflm(path, result, frame_inputs(None, result.inputs, 200, seed=3), tmp_path / "b")
    assert len({o[6].tobytes() for o in outs}) > 20          # the logit changes from frame to frame


def test_okay_nabu_without_ring_buffers_equals_tflm(tmp_path):
    require_programs("gcc")
    path = shared_or_skip("models", "real", "okay_nabu.tflite")
    result = compile_model(str(path), disabled_passes=["ring_buffer"])
    assert result.state_bytes == 3472 and not any(s.ring_step for s in result.states)
    _frames_equal_tflm(path, result, frame_inputs(None, result.inputs, 60, seed=5), tmp_path)


def test_a_read_after_a_write_sees_the_write(tmp_path):
    """TFLM and hand-computed: frame k gives (frame k-1 or the init value, frame k)."""
    require_programs("gcc")
    path = tmp_path / "raw.tflite"
    path.write_bytes(read_after_write_model(16))
    result = compile_model(str(path))
    frames = frame_inputs(None, result.inputs, 10, seed=4)
    outs = _frames_equal_tflm(path, result, frames, tmp_path / "build")
    _, v0 = ring_init(1, 16)
    for k, (y,) in enumerate(outs):
        assert np.array_equal(y[0, 0], (v0 if k == 0 else frames[k - 1][0])[0, 0]) and np.array_equal(y[0, 1], frames[k][0][0, 0])


def test_stateful_header_documents_reset_and_run(tmp_path):
    result = compile_model(ring_model(), name="ring")
    h, c = result.files["ring.h"], result.files["ring.c"]
    assert f"#define RING_STATE_SIZE {result.state_bytes}" in h
    assert "int ring_reset(void *state);" in h and "int ring_run(void *arena, void *state);" in h
    assert "ring_reset(state);" in h and "ring_run_frame(arena, state)" in h   # the usage example
    assert "int ring_run(void *arena, void *state)" in c and "int ring_reset(void *state)" in c


def test_okay_nabu_200_frames_equal_tflm(tmp_path):
    require_programs("gcc")
    path = shared_or_skip("models", "real", "okay_nabu.tflite")
    result = compile_model(str(path))
    assert sum(s.nbytes for s in result.states) == 3472
    assert [s.ring_step for s in result.states] == [64, 64, 64, 64, 32, 0]     # stream_5 ... stream (120-byte step)
    _frames_equal_tflm(path, result, frame_inputs(None, result.inputs, 200, seed=0), tmp_path)


def test_cli_run_frames(tmp_path, capsys):
    require_programs("gcc")
    path = tmp_path / "ring.tflite"
    path.write_bytes(ring_model())
    frames = np.random.default_rng(2).integers(-30, 30, (12, 1, 1, 4)).astype(np.int8)
    np.save(tmp_path / "frames.npy", frames)
    assert cli_main(["run", str(path), "--frames", "12", "--input", str(tmp_path / "frames.npy")]) == 0
    out = capsys.readouterr().out
    assert "12/12 frames byte-identical to TFLite Micro on host" in out and "MATCH" in out
    assert cli_main(["run", str(path)]) == 0                  # without --frames: one frame from reset
    assert "1/1 frames byte-identical to TFLite Micro" in capsys.readouterr().out
