"""TFLite UNIDIRECTIONAL_SEQUENCE_LSTM with variable state tensors: 20 invocations through the
generated C in one process (the h/c state persists in the state region) against TFLite Micro's
interpreter invoked 20 times (it keeps its variable tensors between invocations): the TFLM
mnist_lstm example (../shared/models/real/trained_lstm.tflite within 1e-5 × max|ref|,
trained_lstm_int8.tflite byte-identical) and one-op models (tests/builders/tflm_lstm.py: int8
byte-identical, also the numpy reference with the state fed back; float within 1e-5). Float CIFG,
projection and peephole models, which TFLM refuses, against LiteRT's interpreter (it keeps its
variable tensors between invocations too)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import assert_close_to, require_programs, shared_or_skip

INVOCATIONS = 20


def tflm_invocations(model, frames: list[np.ndarray]) -> list[np.ndarray]:
    """Output 0 of one TFLM interpreter (a path or model bytes) invoked once per frame (state carried)."""
    import tflite_micro
    rt = tflite_micro.runtime.Interpreter
    it = rt.from_bytes(model, arena_size=256 * 1024) if isinstance(model, bytes) else \
        rt.from_file(str(model), arena_size=256 * 1024)
    outs = []
    for f in frames:
        it.set_input(np.ascontiguousarray(f), 0)
        it.invoke()
        outs.append(np.array(it.get_output(0), copy=True))
    return outs


def test_trained_lstm_float_20_invocations(tmp_path):
    require_programs("gcc")
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.batch import build_host_batch, run_host_batch
    path = shared_or_skip("models", "real", "trained_lstm.tflite")
    result = compile_model(str(path))
    assert [s.shape for s in result.states] == [(1, 20), (1, 20)] and result.state_bytes == 2 * 80
    rng = np.random.default_rng(0)
    frames = [rng.uniform(0, 1, result.inputs[0].shape).astype(np.float32) for _ in range(INVOCATIONS)]
    outs = run_host_batch(build_host_batch(result, tmp_path), result, [[f] for f in frames])
    refs = tflm_invocations(path, frames)
    for o, r in zip(outs, refs):
        assert_close_to(o[0].reshape(r.shape), r, rel=1e-5)
    # the state carries: TFLM's second invocation on frame 0 differs from its first
    again = tflm_invocations(path, [frames[0], frames[0]])
    assert not np.array_equal(again[0], again[1])


def _frames(info, n, seed=0):
    rng = np.random.default_rng(seed)
    if info.dtype == "int8":
        return [rng.integers(-128, 128, info.shape).astype(np.int8) for _ in range(n)]
    return [rng.standard_normal(info.shape).astype(np.float32) for _ in range(n)]


def _run_c(result, frames, workdir):
    from tinyfuse.harness.batch import build_host_batch, run_host_batch
    return [o[0] for o in run_host_batch(build_host_batch(result, workdir), result, [[f] for f in frames])]


def test_trained_lstm_int8_20_invocations_byte_identical(tmp_path):
    require_programs("gcc")
    from tinyfuse.driver import compile_model
    path = shared_or_skip("models", "real", "trained_lstm_int8.tflite")
    result = compile_model(str(path))
    assert [(s.shape, s.dtype) for s in result.states] == [((1, 20), "int8"), ((1, 20), "int16")]
    frames = _frames(result.inputs[0], INVOCATIONS)
    outs = _run_c(result, frames, tmp_path)
    refs = tflm_invocations(path, frames)
    assert len({r.tobytes() for r in refs}) > 1
    for k, (o, r) in enumerate(zip(outs, refs)):
        np.testing.assert_array_equal(o.reshape(r.shape), r, err_msg=f"invocation {k}")


ONEOP = {  # id: tests.builders.tflm_lstm.lstm keyword arguments
    "int8_b1": dict(batch=1, steps=3, inp=5, hidden=4),
    "int8_time_major_clip": dict(batch=2, steps=4, inp=6, hidden=7, time_major=True, cell_clip=0.5),
    "int8_cell_q3_12_input_zp": dict(batch=2, steps=3, inp=5, hidden=6, cell_power=-12, x_q=(0.05, -20)),
    "float_clip": dict(batch=2, steps=3, inp=5, hidden=6, int8=False, cell_clip=0.8),
}


@pytest.mark.parametrize("case", list(ONEOP))
def test_oneop_lstm_vs_tflm(tmp_path, case):
    """20 invocations, state carried: int8 byte-identical to TFLM (and the numpy reference fed its own
    state back equals it too), float within 1e-5 × max|ref|."""
    require_programs("gcc")
    from tests.builders.tflm_lstm import lstm
    from tinyfuse.driver import compile_model
    from tinyfuse.ir.interpreter import run_module
    model = lstm(**ONEOP[case])
    result = compile_model(model)
    frames = _frames(result.inputs[0], INVOCATIONS, seed=1)
    outs = _run_c(result, frames, tmp_path)
    refs = tflm_invocations(model, frames)
    state = [_reset_value(s) for s in result.module.states]
    for k, (o, r) in enumerate(zip(outs, refs)):
        got = run_module(result.module, [frames[k], *state])
        state = list(got[1:])
        if r.dtype == np.int8:
            np.testing.assert_array_equal(o.reshape(r.shape), r, err_msg=f"C, invocation {k}")
            np.testing.assert_array_equal(np.asarray(got[0]).reshape(r.shape), r, err_msg=f"numpy, invocation {k}")
        else:
            assert_close_to(o.reshape(r.shape), r, rel=1e-5)
    assert len(np.unique(np.concatenate([r.reshape(-1) for r in refs]))) > 20      # not saturated


def test_int8_cell_clip_is_exercised():
    """The clipped one-op model differs from the same model without the clip (TFLM on both)."""
    from tests.builders.tflm_lstm import lstm
    kw = dict(ONEOP["int8_time_major_clip"])
    frames = _frames_for(kw)
    clipped = tflm_invocations(lstm(**kw), frames)
    kw["cell_clip"] = 0.0
    free = tflm_invocations(lstm(**kw), frames)
    assert any(not np.array_equal(a, b) for a, b in zip(clipped, free))


def _reset_value(st) -> np.ndarray:
    """What ``<name>_reset`` writes into state ``st`` (ir.State: its init, else every byte ``fill``:
    an int8 h starts at its zero point, as TFLM's ResetVariableTensors)."""
    if st.init is not None:
        return np.asarray(st.init, st.dtype).reshape(st.shape)
    return np.full(st.nbytes, st.fill, np.uint8).view(st.dtype).reshape(st.shape)


def _frames_for(kw):
    shape = (kw["steps"], kw["batch"], kw["inp"]) if kw.get("time_major") else (kw["batch"], kw["steps"], kw["inp"])
    rng = np.random.default_rng(1)
    return [rng.integers(-128, 128, shape).astype(np.int8) for _ in range(INVOCATIONS)]


LITERT = {  # float variants TFLM refuses: tests.builders.tflm_lstm.lstm keyword arguments
    "cifg": dict(batch=2, steps=3, inp=5, hidden=6, cifg=True),
    "projection": dict(batch=2, steps=3, inp=5, hidden=6, proj=3),
    "projection_clip_no_bias": dict(batch=1, steps=4, inp=4, hidden=5, proj=7, proj_bias=False, proj_clip=0.3),
    "cifg_projection_time_major": dict(batch=3, steps=2, inp=5, hidden=6, proj=4, cifg=True, time_major=True),
    "cifg_peephole_cell_clip": dict(batch=2, steps=3, inp=5, hidden=6, cifg=True, peephole=True, cell_clip=0.5),
}


def litert_invocations(model: bytes, frames: list[np.ndarray]) -> list[np.ndarray]:
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    outs = []
    for f in frames:
        it.set_tensor(it.get_input_details()[0]["index"], f)
        it.invoke()
        outs.append(np.array(it.get_tensor(it.get_output_details()[0]["index"]), copy=True))
    return outs


@pytest.mark.parametrize("case", list(LITERT))
def test_float_cifg_projection_vs_litert(tmp_path, case):
    """20 invocations, state carried: C and the numpy reference (its state fed back) within 1e-5 ×
    max|ref| of LiteRT; the projection clip clamps some outputs."""
    require_programs("gcc")
    from tests.builders.tflm_lstm import lstm
    from tinyfuse.driver import compile_model
    from tinyfuse.ir.interpreter import run_module
    kw = LITERT[case]
    model = lstm(int8=False, **kw)
    result = compile_model(model)
    frames = _frames(result.inputs[0], INVOCATIONS, seed=2)
    outs = _run_c(result, frames, tmp_path)
    refs = litert_invocations(model, frames)
    state = [_reset_value(s) for s in result.module.states]
    for k, (o, r) in enumerate(zip(outs, refs)):
        got = run_module(result.module, [frames[k], *state])
        state = list(got[1:])
        assert_close_to(o.reshape(r.shape), r, rel=1e-5)
        assert_close_to(np.asarray(got[0]).reshape(r.shape), r, rel=1e-5)
    assert refs[0].shape[-1] == kw.get("proj", kw["hidden"])
    assert len({r.tobytes() for r in refs}) == INVOCATIONS                 # the state carries
    if kw.get("proj_clip"):
        assert np.any(np.abs(np.concatenate(refs)) == np.float32(kw["proj_clip"]))
    p, h = kw.get("proj", kw["hidden"]), kw["hidden"]
    gates = 3 if kw.get("cifg") else 4             # CIFG: no input-gate weights stored
    weights = gates * h * (kw["inp"] + p) + 8 * h + 3 * h + (p * h + p if kw.get("proj") else 0)
    assert result.weights_bytes == 4 * weights, (result.weights_bytes, 4 * weights)
