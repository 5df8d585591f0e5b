"""The TFLM mnist_lstm example, int8 (../shared/models/real/trained_lstm_int8.tflite), on cortex-m4
under qemu: 20 invocations in one image with the h/c state carried between them, byte-identical to
TFLite Micro's interpreter invoked 20 times (which keeps its variable tensors), as on the host
(tests/c/test_tflite_lstm.py)."""
import numpy as np

from tests.conftest import shared_or_skip
from tests.target.conftest import require_tools

INVOCATIONS = 20


def test_trained_lstm_int8_cortex_m4(tmp_path):
    require_tools("cortex-m4")
    import tflite_micro

    from tinyfuse.driver import compile_model
    from tinyfuse.harness.batch import run_target_batch
    from tinyfuse.targets import get_target
    path = shared_or_skip("models", "real", "trained_lstm_int8.tflite")
    result = compile_model(str(path), target="cortex-m4")
    rng = np.random.default_rng(0)
    frames = [rng.integers(-128, 128, result.inputs[0].shape).astype(np.int8) for _ in range(INVOCATIONS)]
    outs = run_target_batch(result, get_target("cortex-m4"), [[f] for f in frames], tmp_path)
    it = tflite_micro.runtime.Interpreter.from_file(str(path), arena_size=256 * 1024)
    refs = []
    for f in frames:
        it.set_input(f, 0)
        it.invoke()
        refs.append(np.array(it.get_output(0), copy=True))
    assert len({r.tobytes() for r in refs}) > 1
    for k, (o, r) in enumerate(zip(outs, refs)):
        np.testing.assert_array_equal(o[0].reshape(r.shape), r, err_msg=f"invocation {k}")


def test_float_cifg_projection_lstm_cortex_m4(tmp_path):
    """A float LSTM with CIFG, a projection and its clip (TFLM refuses it) on cortex-m4 under qemu,
    20 invocations with the state carried, within 1e-5 × max|ref| of LiteRT's interpreter."""
    require_tools("cortex-m4")
    from tests.builders.tflm_lstm import lstm
    from tests.c.test_tflite_lstm import litert_invocations
    from tests.conftest import assert_close_to
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.batch import run_target_batch
    from tinyfuse.targets import get_target
    model = lstm(batch=2, steps=3, inp=5, hidden=6, int8=False, cifg=True, proj=4, proj_clip=0.4)
    result = compile_model(model, target="cortex-m4")
    rng = np.random.default_rng(3)
    frames = [rng.standard_normal(result.inputs[0].shape).astype(np.float32) for _ in range(INVOCATIONS)]
    outs = run_target_batch(result, get_target("cortex-m4"), [[f] for f in frames], tmp_path)
    refs = litert_invocations(model, frames)
    assert len({r.tobytes() for r in refs}) == INVOCATIONS
    for o, r in zip(outs, refs):
        assert_close_to(o[0].reshape(r.shape), r, rel=1e-5)
