"""TFLite UNIDIRECTIONAL_SEQUENCE_LSTM with variable state tensors (the TFLM mnist_lstm example,
../shared/models/real/trained_lstm.tflite): 20 invocations through the generated C in one process
(the h/c state persists in the state region) against TFLite Micro's interpreter invoked 20 times
(it keeps its variable tensors between invocations), float within 1e-5 × max|ref| on every one."""
from __future__ import annotations

import numpy as np

from tests.conftest import assert_close_to, require_programs, shared_or_skip

INVOCATIONS = 20


def tflm_invocations(path, frames: list[np.ndarray]) -> list[np.ndarray]:
    """Output 0 of one TFLM interpreter invoked once per frame (state carried)."""
    import tflite_micro
    it = tflite_micro.runtime.Interpreter.from_file(str(path), arena_size=256 * 1024)
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
