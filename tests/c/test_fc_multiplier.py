"""Per-tensor FULLY_CONNECTED requantization multiplier = double(s_in)·double(s_w)/double(s_out), as the
TFLM oracle computes it (a float32 product of the two scales changes the multiplier's last bits: found by
`tinyfuse validate` on 100 random inputs — ad01_int8's last layer, input 214 of seed 1, output 365:
accumulator −88337, real value −117.499 + 96 = −21, the float32-product multiplier gave −22)."""
import numpy as np

from tests.conftest import compile_and_run, shared_or_skip


def test_ad01_int8_equals_tflm_on_the_input_that_found_it(tmp_path):
    import tflite_micro
    path = shared_or_skip("models", "tflite", "ad01_int8.tflite")
    x = np.random.default_rng(1).integers(-128, 128, (300, 1, 640)).astype(np.int8)[214]
    it = tflite_micro.runtime.Interpreter.from_file(str(path), arena_size=1 << 20)
    it.set_input(x, 0)
    it.invoke()
    want = it.get_output(0)
    (got,), _ = compile_and_run(str(path), [x], tmp_path)
    assert want.reshape(-1)[365] == -21
    assert np.array_equal(got.reshape(want.shape), want)
