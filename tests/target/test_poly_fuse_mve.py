"""The Helium stages of a poly-fused conv chain (lower/conv/chain_mve.py: int8 columns, VMLADAVA with
tail predicates, the input offset folded into the start values) under qemu on Cortex-M55: the output
equals the numpy reference of the compiled module byte for byte, on odd shapes (C not a multiple of 16,
an odd channel count, padded and stride-2 windows, the 1x1 stride-2 shortcut stage)."""
import numpy as np

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tinyfuse.ir.interpreter import run_module
from tinyfuse.targets import get_target
from tests.builders import DOWN_BLOCK, qdq_chain
from tests.target.conftest import require_tools

ODD_BLOCK = [dict(cout=7, relu=True), dict(cout=5, relu=True), dict(cout=3)]


def test_fused_chain_mve_on_cortex_m55(tmp_path):
    require_tools("cortex-m55")
    for i, (shape, layers) in enumerate((((1, 8, 8, 8), DOWN_BLOCK), ((1, 11, 9, 3), ODD_BLOCK))):
        model, x = qdq_chain(shape, layers, seed=i)
        result = compile_model(model, target="cortex-m55")
        chains = [s.kernel for s in result.steps if s.kernel.variant == "fused_chain"]
        assert chains and all("vmladavaq_s8" in str(k.code) for k in chains), [k.variant for k in result.kernels]
        (got,) = run_target(build_target(result, get_target("cortex-m55"), tmp_path / str(i), [x]))
        (ref,) = run_module(result.module, [x])
        assert np.array_equal(got, ref)


def test_helium_conv_with_residual_add_unfused_on_cortex_m55(tmp_path):
    """The quad kernel's residual qnn.add in vector form (strategy/epilogue.py quad_epilogue) on unfused convs (no
    poly_fuse): a ResNet block with 12 channels (3 quads) and a 7-channel one (a quad + the scalar tail)."""
    require_tools("cortex-m55")
    blocks = ([dict(cout=12, relu=True), dict(cout=12), dict(add=(0, 1))],
              [dict(cout=7, relu=True), dict(cout=7, relu=True), dict(add=(0, 1))])
    for i, layers in enumerate(blocks):
        model, x = qdq_chain((1, 7, 9, 5), layers, seed=10 + i)
        result = compile_model(model, target="cortex-m55", disabled_passes=("poly_fuse",))
        assert any("qnn.add" in k.ops and "vshlq_n_s32" in str(k.code) for k in result.kernels)
        (got,) = run_target(build_target(result, get_target("cortex-m55"), tmp_path / str(i), [x]))
        (ref,) = run_module(result.module, [x])
        assert np.array_equal(got, ref)
