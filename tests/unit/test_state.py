"""State as part of the IR (issue 15), without a C compiler: the TFLite frontend turns resource
variables (CALL_ONCE / VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE) and variable tensors into
``IRModule.states``; ``Graph.assign_variable`` is the interface stateful converters (LSTM, SVDF) use.
Oracles: hand-computed values of the ring buffer and TFLM's reset rule (zero point)."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse.errors import TinyfuseError
from tinyfuse.frontend.tflite.reader import from_tflite
from tinyfuse.frontend.tflite.registry import Graph, Op, Tensor
from tinyfuse.ir import TensorType, Var, call
from tinyfuse.ir.interpreter import run_module
from tests.builders.tflm_state import Q, ring_init, ring_model, variable_tensor_model
from tests.conftest import shared_or_skip


def _frames(mod, frames):
    """The IR interpreter frame by frame, the state outputs fed back as the next frame's state."""
    state, outs = [s.initial() for s in mod.states], []
    for x in frames:
        got = run_module(mod, [x, *state])
        n = len(got) - len(state)
        outs.append(got[:n])
        state = got[n:]
    return outs


def test_ring_buffer_model_has_two_states_with_their_init_values():
    mod = from_tflite(ring_model(history=3, width=4), "ring")
    ring0, acc0 = ring_init(3, 4)
    assert [(s.name, s.shape, s.dtype) for s in mod.states] == [("ring_states", (1, 3, 4), "int8"),
                                                               ("acc_states", (1, 1, 4), "int8")]
    assert np.array_equal(mod.states[0].init, ring0) and np.array_equal(mod.states[1].init, acc0)
    assert len(mod.main.params) == 1 + 2 and len(mod.main.outputs) == 2 + 2
    assert mod.output_names == ("ring", "acc")


def test_ring_buffer_frames_hand_computed():
    """ring output at frame k = the last 3 frames before k (init first) followed by frame k, + 3."""
    mod = from_tflite(ring_model(history=3, width=4), "ring")
    rng = np.random.default_rng(3)
    frames = [rng.integers(-40, 40, (1, 1, 4)).astype(np.int8) for _ in range(6)]
    ring0, _ = ring_init(3, 4)
    history = list(ring0[0])
    for k, (ring, _acc) in enumerate(_frames(mod, frames)):
        want = np.stack(history[-3:] + [frames[k][0, 0]]).reshape(1, -1).astype(np.int32) + 3   # zero point -3 -> 0
        assert np.array_equal(ring, want), k
        history.append(frames[k][0, 0])


def test_variable_tensor_starts_at_its_zero_point():
    mod = from_tflite(variable_tensor_model(width=6, zero_point=5), "vt")
    (s,) = mod.states
    assert (s.name, s.shape, s.dtype, s.init, s.fill) == ("v_state", (1, 6), "int8", None, 5)


def _graph_with_variable():
    x = Tensor(0, "x", (1, 4), "float32")
    v = Tensor(1, "h", (1, 4), "float32", variable=True)
    g = Graph([x, v])
    g.env[0] = Var("x", TensorType((1, 4), "float32"))
    return g, x, v


def test_assign_variable_is_seen_by_later_reads_and_becomes_the_state_output():
    g, x, v = _graph_with_variable()
    op = Op(7, "SVDF", 1, None, [x, v], [])
    before = g.value(v)
    assert isinstance(before, Var) and before.name == "h"
    new = call("add", g.value(x), before)
    g.assign_variable(v, new, op)
    assert g.value(v) is new                    # a read after the write sees the write
    assert g.states.params() == [before] and g.states.outputs() == [new]


def test_assign_variable_refuses_a_plain_tensor_and_a_wrong_shape():
    g, x, v = _graph_with_variable()
    op = Op(7, "SVDF", 1, None, [x, v], [])
    with pytest.raises(TinyfuseError, match="not a variable tensor"):
        g.assign_variable(x, g.value(x), op)
    with pytest.raises(TinyfuseError, match=r"operator 7 \(SVDF v1.*state 'h'"):
        g.assign_variable(v, call("reshape", g.value(x), newshape=(4, 1)), op)


def test_okay_nabu_states_come_from_its_call_once_subgraph():
    path = shared_or_skip("models", "real", "okay_nabu.tflite")
    mod = from_tflite(str(path), "okay_nabu")
    shapes = {s.name: s.shape for s in mod.states}
    assert shapes == {"stream_states": (1, 2, 1, 40), "stream_1_states": (1, 4, 1, 32),
                      "stream_2_states": (1, 10, 1, 64), "stream_3_states": (1, 14, 1, 64),
                      "stream_4_states": (1, 22, 1, 64), "stream_5_states": (1, 5, 1, 64)}
    assert sum(s.nbytes for s in mod.states) == 3472
    assert all(s.init is not None and s.init.dtype == np.int8 for s in mod.states)
    assert mod.main.outputs[0].ty.dtype == "uint8"
    assert Q  # the builders' quantization is shared with the C tests


def test_ring_buffer_pass_on_okay_nabu_copies_less_and_shrinks_the_arena():
    """Five of the six shifts become ring buffers (the input's 120-byte step is not a multiple of
    16); the bytes a frame copies for the state and the arena shrink (memory/state.py figures)."""
    from tinyfuse.driver import compile_model
    from tinyfuse.memory.state import copied_per_frame
    path = shared_or_skip("models", "real", "okay_nabu.tflite")
    ring = compile_model(str(path))
    shift = compile_model(str(path), disabled_passes=["ring_buffer"])
    assert [s.ring_step for s in ring.states] == [64, 64, 64, 64, 32, 0]
    before, after = copied_per_frame(shift.states, shift.steps), copied_per_frame(ring.states, ring.steps)
    assert before["total"] == 3472 + 3880                 # store back every state + the six concatenations
    assert after["total"] < before["total"] / 5
    assert after["ring_append"] == 0 and after["store_back"] == 80     # convs write into the windows
    assert ring.arena_bytes < shift.arena_bytes
    assert "memmove(" in ring.files["okay_nabu.c"] and "memmove(" not in shift.files["okay_nabu.c"]


def test_state_errors_are_one_line_and_name_the_operator():
    g, x, v = _graph_with_variable()
    bad = Tensor(2, "b", (1, 0), "float32", variable=True)
    with pytest.raises(TinyfuseError, match=r"state 'b' is \[1, 0\] float32"):
        g.value(bad)
    from tinyfuse.frontend.tflite.state_ops import convert_read_variable
    op = Op(3, "READ_VARIABLE", 1, None, [Tensor(5, "h", (), "RESOURCE")], [x])
    with pytest.raises(TinyfuseError, match=r"operator 3 \(READ_VARIABLE v1.*not a VAR_HANDLE output"):
        convert_read_variable(g, op)
