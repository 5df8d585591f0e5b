"""TFLite SVDF one-op models (tests/builders/tflm_svdf.py, tflm_oneop-style) over 50 invocations
with the activation state carried (a variable tensor: the generated C keeps it in the state region,
TFLM's interpreter between invoke() calls): int8 with an int16 or int8 state byte-identical to TFLM
on every invocation, and so is the numpy reference fed its own state back; float32 within
1e-5 × max|ref|."""
from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import assert_close_to, require_programs

FRAMES = 50
CASES = {  # id: tests.builders.tflm_svdf.svdf keyword arguments
    "int16_state_rank2": dict(batch=1, inp=8, filters=6, memory=4, rank=2),
    "int16_state_b2": dict(batch=2, inp=7, filters=4, memory=6, rank=1, seed=3),
    "int8_state_zero_point": dict(batch=2, inp=5, filters=4, memory=3, rank=1, state="int8", state_q=(0.02, 3)),
    "float_relu_rank3": dict(batch=2, inp=5, filters=6, memory=5, rank=3, state="float32", activation="RELU"),
    "float_tanh_long_memory": dict(batch=1, inp=6, filters=4, memory=8, rank=2, state="float32", activation="TANH"),
}
# (no case without bias: TFLM's interpreter crashes on an SVDF whose optional bias is absent)


def _reset_value(st) -> np.ndarray:
    if st.init is not None:
        return np.asarray(st.init, st.dtype).reshape(st.shape)
    return np.full(st.nbytes, st.fill, np.uint8).view(st.dtype).reshape(st.shape)


@pytest.mark.parametrize("case", list(CASES))
def test_svdf_50_frames_vs_tflm(tmp_path, case):
    require_programs("gcc")
    import tflite_micro

    from tests.builders.tflm_svdf import svdf
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.batch import build_host_batch, run_host_batch
    from tinyfuse.ir.interpreter import run_module
    model = svdf(**CASES[case])
    result = compile_model(model)
    assert len(result.states) == 1
    info = result.inputs[0]
    rng = np.random.default_rng(1)
    frames = [rng.integers(-128, 128, info.shape).astype(np.int8) if info.dtype == "int8"
              else rng.standard_normal(info.shape).astype(np.float32) for _ in range(FRAMES)]
    outs = run_host_batch(build_host_batch(result, tmp_path), result, [[f] for f in frames])
    it = tflite_micro.runtime.Interpreter.from_bytes(model, arena_size=64 * 1024)
    state = [_reset_value(s) for s in result.module.states]
    refs = []
    for k, f in enumerate(frames):
        it.set_input(f, 0)
        it.invoke()
        ref = np.array(it.get_output(0), copy=True)
        refs.append(ref)
        got = run_module(result.module, [f, *state])
        state = list(got[1:])
        if ref.dtype == np.int8:
            np.testing.assert_array_equal(outs[k][0].reshape(ref.shape), ref, err_msg=f"C, frame {k}")
            np.testing.assert_array_equal(np.asarray(got[0]).reshape(ref.shape), ref, err_msg=f"numpy, frame {k}")
        else:
            assert_close_to(outs[k][0].reshape(ref.shape), ref, rel=1e-5)
            assert_close_to(np.asarray(got[0]).reshape(ref.shape), ref, rel=1e-5)
    assert len(np.unique(np.concatenate([r.reshape(-1) for r in refs]))) > 20      # not saturated
