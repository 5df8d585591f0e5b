"""The MLPerf Tiny int8 .tflite models, compiled directly from the flatbuffer for cortex-m4 (DSP
kernels where the target has them), run under qemu and compared with TFLite Micro byte for byte."""
import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tests.conftest import TFLM_HEAD, shared_or_skip, tflm_run
from tests.target.conftest import require_tools

TARGET = "cortex-m4"


@pytest.mark.parametrize("model", list(TFLM_HEAD))
def test_int8_tflite_on_cortex_m4_equals_tflm(model, tmp_path):
    require_tools(TARGET)
    path = shared_or_skip("models", "tflite", f"{model}.tflite")
    io = np.load(shared_or_skip("models", "onnx", f"{model}.io.npz"))
    result = compile_model(path, target=TARGET)
    shape = result.inputs[0].shape
    rng = np.random.default_rng(11)
    inputs = [np.zeros(shape, np.int8), io["input"], rng.integers(-128, 128, shape).astype(np.int8)]
    for i, x in enumerate(inputs):              # the input is compiled into the image: one build each
        build = build_target(result, TARGET, tmp_path / f"in{i}", [x])
        (got,) = run_target(build)
        (want,) = tflm_run(path, [x])
        assert np.array_equal(got, want), f"{model} input {i} on {TARGET} ({build.board.name}): " \
                                          f"{np.sum(got != want)} of {got.size} outputs differ from TFLM"
        assert build.stats["status"] == 0
