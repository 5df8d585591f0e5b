"""--weights-dtype float16 under qemu (Cortex-M7, FPv5; Cortex-M4F, FPv4): the binary16 build equals
the float32 build whose constants hold the binary16-rounded values, bit for bit, and its weights
take half the flash."""
import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tests.builders.half_weights import compile_rounded_twin
from tests.builders.uint8_models import small_conv_net
from tests.target.conftest import require_tools


@pytest.mark.parametrize("target", ["cortex-m7", "cortex-m4"])
def test_float16_weights_equal_the_rounded_twin_on_target(target, tmp_path, monkeypatch):
    require_tools(target)
    model = small_conv_net()
    half = compile_model(model, target=target, weights_dtype="float16")
    twin = compile_rounded_twin(monkeypatch, model, target=target)
    assert half.weights_bytes * 2 == twin.weights_bytes
    x = np.random.default_rng(2).standard_normal((1, 3, 12, 12)).astype(np.float32)
    (got,) = run_target(build_target(half, target, tmp_path / "h", [x]))
    (want,) = run_target(build_target(twin, target, tmp_path / "t", [x]))
    assert np.array_equal(got, want)
