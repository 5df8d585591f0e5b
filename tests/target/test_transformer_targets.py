"""Horizontal fusion and the shared transformer block on Cortex-M4 under qemu (arm_dsp micro-kernels):
int8 byte-identical with the numpy reference of the compiled module, float within 1e-4 of onnxruntime."""
import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tinyfuse.ir.interpreter import run_module
from tests.builders import rand, sibling_int8_convs
from tests.conftest import assert_close_to, shared_or_skip
from tests.target.conftest import require_tools

def test_sibling_int8_convs_cortex_m4(tmp_path, fuse_all_siblings):
    """On a DSP core each branch of the horizontal kernel runs the arm_dsp conv micro-kernel."""
    require_tools("cortex-m4")
    qmodel = sibling_int8_convs(8, tmp_path)
    result = compile_model(qmodel, target="cortex-m4")
    assert [k.variant for k in result.kernels if k.ops[0] == "horizontal"] == ["arm_dsp"]
    x = rand(1, 8, 6, 5, seed=5)
    (got,) = run_target(build_target(result, "cortex-m4", tmp_path / "m4", [x]))
    np.testing.assert_array_equal(got, run_module(result.module, [x])[0])


@pytest.mark.parametrize("suffix", ["", "_qdq"])
def test_shared_transformer_block_cortex_m4(tmp_path, suffix):
    require_tools("cortex-m4")
    path = shared_or_skip("models", "onnx", f"tiny_transformer_block_op20{suffix}.onnx")
    io = np.load(shared_or_skip("models", "onnx", "tiny_transformer_block_op20.io.npz"))
    result = compile_model(path, target="cortex-m4")
    (got,) = run_target(build_target(result, "cortex-m4", tmp_path, [io["input"]]))
    if suffix:
        np.testing.assert_array_equal(got, run_module(result.module, [io["input"]])[0])
        (h,) = [k for k in result.kernels if k.ops[0] == "horizontal"]
        assert h.variant == "arm_dsp"              # each branch on the DSP matmul micro-kernel
    else:
        assert_close_to(got, io["ort_float"])
