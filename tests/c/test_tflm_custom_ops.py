"""TFLM's custom ops CIRCULAR_BUFFER and BasicClassifier (frontend/tflite/tflm_custom.py) against TFLite
Micro running the same model.

CIRCULAR_BUFFER keeps its buffer from one invocation to the next and ends the invocation early
(kTfLiteAbort) until every ``cycles_max``-th call. The oracle is one TFLM interpreter invoked frame after
frame; compared: every output on the frames TFLM runs to the end (status 0), and the first buffer
(written before any abort) on every frame, both after the warm-up in which TFLM's buffers still hold
the arena's initial bytes. On the frames TFLM ends early tinyfuse's later outputs keep the values of
the last complete frame (TFLM's output tensors may share arena bytes with other tensors there, so
those are compared with TFLM's outputs of that last complete frame)."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tinyfuse.harness.frames import c_frames, frame_inputs
from tinyfuse.targets import get_target
from tests.builders.tflm_control import (basic_classifier_model, buffer_in_branch_model, circular_buffer_model,
                                          cycles_option)
from tests.conftest import compile_and_run, require_programs

ABORT = 15                     # TFLM's kTfLiteAbort (micro_context.h)


def _tflm_frames(model: bytes, frames, n_out: int):
    """(status, outputs) of every frame from one TFLM interpreter."""
    import tflite_micro
    it = tflite_micro.runtime.Interpreter.from_bytes(model, arena_size=1 << 16)
    res = []
    for f in frames:
        for i, x in enumerate(f):
            it.set_input(np.ascontiguousarray(x), i)
        status = it.invoke()
        res.append((status, [np.array(it.get_output(i), copy=True) for i in range(n_out)]))
    return res


def _same(a, b) -> bool:
    return np.array_equal(np.asarray(a).reshape(-1), np.asarray(b).reshape(-1))


@pytest.mark.parametrize("kw", [dict(), dict(cycles=1), dict(slots=5, cycles=None), dict(cycles=3, stages=2),
                                dict(slots=4, h=2, d=16, cycles=2, stages=2), dict(slots=2, cycles=2, stages=3)],
                         ids=["cycles2", "cycles1", "unset_slots5", "two_stages", "ring16", "three_stages"])
def test_circular_buffer_stream_equals_tflm(tmp_path, kw):
    require_programs("gcc")
    model = circular_buffer_model(**kw)
    result = compile_model(model)
    frames = frame_inputs(None, result.inputs, 40, seed=1)
    outs, _ = c_frames(result, get_target("host"), frames, tmp_path)
    refs = _tflm_frames(model, frames, len(result.outputs))
    warm = kw.get("slots", 3) * (kw.get("cycles") or 1) ** kw.get("stages", 1)
    complete = [k for k, (status, _) in enumerate(refs) if status == 0]
    assert all(status in (0, ABORT) for status, _ in refs) and complete
    assert [k for k in complete if k >= warm and not all(map(_same, outs[k], refs[k][1]))] == []
    assert [k for k in range(warm, 40) if not _same(outs[k][0], refs[k][1][0])] == []
    last = None
    for k, (status, ref) in enumerate(refs):
        if status == 0:
            last = ref
        elif last is not None and k >= warm:       # the last stage's pool result is held
            assert _same(outs[k][-1], last[-1]), f"frame {k}"


def test_circular_buffer_ends_the_frame_as_tflm_does():
    """cycles_max 2: TFLM completes every second frame (the oracle's rhythm the model above relies on)."""
    model = circular_buffer_model(cycles=2)
    frames = [[np.full((1, 1, 1, 4), k, np.int8)] for k in range(6)]
    assert [s for s, _ in _tflm_frames(model, frames, 2)] == [ABORT, 0] * 3
    assert len(compile_model(model).states) == 3     # buffer, count, and the pool result held


def test_buffer_in_an_if_branch_is_a_state_of_its_own(tmp_path):
    """Operator 0 of the main subgraph and operator 0 of the inlined branch keep separate buffers (3 and
    2 slots), every frame equal to TFLM's after the 3-frame warm-up."""
    require_programs("gcc")
    model = buffer_in_branch_model()
    result = compile_model(model)
    frames = frame_inputs(None, result.inputs, 12, seed=4)
    outs, _ = c_frames(result, get_target("host"), frames, tmp_path)
    refs = _tflm_frames(model, frames, 2)
    assert [k for k in range(3, 12) if not (refs[k][0] == 0 and all(map(_same, outs[k], refs[k][1])))] == []


@pytest.mark.parametrize("kw", [dict(), dict(flat=True), dict(n=4, indices=(3, 0), thresholds=(7, -7))])
def test_basic_classifier_equals_tflm(tmp_path, kw):
    require_programs("gcc")
    import tflite_micro
    model = basic_classifier_model(**kw)
    n = kw.get("n", 8)
    x = np.random.default_rng(0).integers(-200, 200, (n,) if kw.get("flat") else (1, n)).astype(np.int32)
    it = tflite_micro.runtime.Interpreter.from_bytes(model, arena_size=1 << 16)
    it.set_input(x, 0)
    assert it.invoke() == 0
    out, _ = compile_and_run(model, [x], tmp_path)
    assert all(_same(o, it.get_output(i)) for i, o in enumerate(out)) and len(out) == 2


def _buffer_model(x_shape, out_shape, dtype="int8", options=None) -> bytes:
    from tests.builders.tflm_control import _custom, _tensor
    from tests.builders.tflm_misc import _mods
    me, _ = _mods()
    x, y = _tensor(x_shape, dtype, "x"), _tensor(out_shape, dtype, "y")
    m = me.Model(description="circular buffer refusal")
    m.add_subgraph(tensors=[x, y], operators=[_custom("CIRCULAR_BUFFER", [x], [y], options)], inputs=[x], outputs=[y])
    return bytes(m.build())


@pytest.mark.parametrize("model,words", [
    (lambda: _buffer_model((1, 1, 1, 4), (1, 3, 1, 4), "int16", cycles_option(2)), ["CIRCULAR_BUFFER", "element type int16"]),
    (lambda: _buffer_model((2, 1, 1, 4), (2, 3, 1, 4), options=cycles_option(2)), ["[1, 1, H, D]"]),
    (lambda: _buffer_model((1, 1, 2, 96), (1, 3, 2, 96)), ["process-wide", "cycles_max"]),
    (lambda: basic_classifier_model(n=4, indices=(4,), thresholds=(0,)), ["BasicClassifier", "leave the 4 scores"]),
])
def test_unsupported_tflm_custom_op_is_one_error_line(model, words):
    with pytest.raises(TinyfuseError) as e:
        compile_model(model())
    assert "\n" not in str(e.value) and all(w in str(e.value) for w in words), str(e.value)
