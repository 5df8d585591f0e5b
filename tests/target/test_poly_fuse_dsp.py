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


FIRST_CONV_CHAIN = [dict(cout=6, relu=True), dict(cout=6, relu=True)]


def test_fused_chain_dsp_first_conv_rows_on_cortex_m4(tmp_path):
    """A chain of padded 3x3 convs over C = 3 and C = 6 (a ring) (the row-wise im2col of im2col_rows,
    both image edges, the odd pixel, a K % 4 channel tail) equals the numpy reference byte for byte."""
    require_tools("cortex-m4")
    model, x = qdq_chain((1, 15, 15, 3), FIRST_CONV_CHAIN, seed=3)
    result = compile_model(model, target="cortex-m4")
    chains = [s.kernel for s in result.steps if s.kernel.variant == "fused_chain"]
    assert chains and any("tf_ld4(src + 4)" in k.code for k in chains)
    (got,) = run_target(build_target(result, get_target("cortex-m4"), tmp_path, [x]))
    (ref,) = run_module(result.module, [x])
    assert np.array_equal(got, ref)
