"""--weights-dtype float16 under qemu (Cortex-M7, FPv5; Cortex-M4F, FPv4; M55): the binary16 build
equals the float32 build whose constants hold the binary16-rounded values, bit for bit, and its
weights take half the flash; every finite binary16 value reads back exactly (VCVTB on Arm)."""
import numpy as np
import pytest
from onnx import helper

from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host
from tinyfuse.harness.qemu import build_target, run_target
from tests.builders import model_of
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


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m7", "cortex-m55", "host"])
def test_every_finite_binary16_weight_reads_exactly(target, tmp_path):
    """Y = X · W with X = 1 and W every finite binary16 value (subnormals, signed zeros, ±65504):
    tf_h2f's VCVTB path (Arm) and portable path (host) give numpy's binary16 → binary32 values."""
    require_tools(target)
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    w = bits.view(np.float16)
    w = w[np.isfinite(w)].astype(np.float32).reshape(1, -1)
    model = model_of([helper.make_node("Mul", ["X", "W"], ["Y"])], {"X": np.zeros(w.shape)}, ["Y"], 13, {"W": w})
    result = compile_model(model, target=target, weights_dtype="float16")
    assert "tf_h2f(" in result.files[f"{result.name}.c"]
    x = np.ones(w.shape, np.float32)
    if target == "host":
        (got,) = run_host(build_host(result, tmp_path), result, [x])
    else:
        (got,) = run_target(build_target(result, target, tmp_path, [x]))
    assert np.array_equal(got.view(np.uint32), w.view(np.uint32))
