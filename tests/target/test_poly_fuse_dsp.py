"""The DSP variant of a poly-fused conv chain (tinyfuse_simd.h helpers) under qemu on Cortex-M4: the
output equals the numpy reference of the compiled module, byte for byte."""
import numpy as np

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tinyfuse.ir.interpreter import run_module
from tinyfuse.targets import get_target
from tests.builders import DOWN_BLOCK, MBV2_BLOCK, qdq_chain
from tests.target.conftest import require_tools


def test_fused_chain_dsp_on_cortex_m4(tmp_path):
    require_tools("cortex-m4")
    for i, layers in enumerate((MBV2_BLOCK, DOWN_BLOCK)):
        model, x = qdq_chain((1, 12, 12, 8), layers, seed=i)
        result = compile_model(model, target="cortex-m4")
        assert any(s.kernel.variant == "fused_chain" and "tinyfuse_simd.h" in s.kernel.headers for s in result.steps)
        (got,) = run_target(build_target(result, get_target("cortex-m4"), tmp_path / str(i), [x]))
        (ref,) = run_module(result.module, [x])
        assert np.array_equal(got, ref)
