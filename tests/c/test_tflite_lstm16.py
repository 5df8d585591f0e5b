"""16x8 UNIDIRECTIONAL_SEQUENCE_LSTM (int16 activations and state, int8 weights, int64 bias;
tests/builders/tflm_lstm16.py) against TFLite Micro's EvalLstm<int16_t, int8_t, int16_t, int64_t>: 20
invocations through the generated C in one process (the h / c state persists in the state region)
byte-identical with TFLM's interpreter invoked 20 times, and the numpy reference (ops/recurrent_int16.py)
fed its own state back equal to it too."""
from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import require_programs

INVOCATIONS = 20
CASES = {  # id: tests.builders.tflm_lstm16.lstm16 keyword arguments
    "b1": dict(batch=1, steps=3, inp=5, hidden=4),
    "time_major_clip": dict(batch=2, steps=4, inp=6, hidden=7, time_major=True, cell_clip=0.5, seed=3),
    "cell_q3_12_input_zp": dict(batch=2, steps=3, inp=9, hidden=6, cell_power=-12, x_q=(2.0 ** -11, 37),
                                h_q=(2.0 ** -14, -5), seed=5),
    "wide_scales": dict(batch=3, steps=2, inp=17, hidden=8, w_scale=(0.0005, 0.002), bias_range=2 ** 26, seed=7),
}


def tflm_invocations(model: bytes, frames: list[np.ndarray]) -> list[np.ndarray]:
    """Output 0 of one TFLM interpreter invoked once per frame (its variable tensors carry the state)."""
    import tflite_micro
    it = tflite_micro.runtime.Interpreter.from_bytes(model, arena_size=256 * 1024)
    outs = []
    for f in frames:
        it.set_input(np.ascontiguousarray(f), 0)
        it.invoke()
        outs.append(np.array(it.get_output(0), copy=True))
    return outs


def _reset_value(st) -> np.ndarray:
    if st.init is not None:
        return np.asarray(st.init, st.dtype).reshape(st.shape)
    return np.full(st.nbytes, st.fill, np.uint8).view(st.dtype).reshape(st.shape)


@pytest.mark.parametrize("case", list(CASES))
def test_lstm16_vs_tflm(tmp_path, case):
    require_programs("gcc")
    from tests.builders.tflm_lstm16 import lstm16
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.batch import build_host_batch, run_host_batch
    from tinyfuse.ir.interpreter import run_module
    model = lstm16(**CASES[case])
    result = compile_model(model)
    assert any(k.kind == "qnn.lstm16.ref" for k in result.kernels)
    assert [s.dtype for s in result.states] == ["int16", "int16"]
    rng = np.random.default_rng(1)
    info = result.inputs[0]
    frames = [np.clip(rng.normal(0, rng.uniform(300, 20000), info.shape), -32768, 32767).astype(np.int16)
              for _ in range(INVOCATIONS)]
    outs = [o[0] for o in run_host_batch(build_host_batch(result, tmp_path), result, [[f] for f in frames])]
    refs = tflm_invocations(model, frames)
    state = [_reset_value(s) for s in result.module.states]
    for k, (o, r) in enumerate(zip(outs, refs)):
        got = run_module(result.module, [frames[k], *state])
        state = list(got[1:])
        np.testing.assert_array_equal(o.reshape(r.shape), r, err_msg=f"C, invocation {k}")
        np.testing.assert_array_equal(np.asarray(got[0]).reshape(r.shape), r, err_msg=f"numpy, invocation {k}")
    assert len(np.unique(np.concatenate([r.reshape(-1) for r in refs]))) > 50      # not saturated

