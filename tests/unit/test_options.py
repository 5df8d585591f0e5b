"""CompileOptions: resolved once from the user's arguments (target, --kernels, budgets), the single
place where a target's dsp/mve features become kernel variants."""
import pytest

from tinyfuse.errors import TinyfuseError
from tinyfuse.options import first_variant
from tinyfuse.options import CompileOptions
from tinyfuse.passes.pipeline import PASS_NAMES, PASSES
from tinyfuse.targets import ARENA_ALIGN, TARGETS


def test_host_is_the_host_target_with_no_simd_variants():
    o = CompileOptions.resolve()
    assert o.target is TARGETS["host"] and o.variants == () and o.scratch_bytes == TARGETS["host"].scratch_bytes
    assert first_variant("qnn.conv2d", o.variants) == "ref" and not o.chain_dsp and o.alignment == ARENA_ALIGN == 16


@pytest.mark.parametrize("target, kernels, variants", [
    ("cortex-m4", "auto", ("arm_dsp", "arm_fpu")), ("cortex-m4", "ref", ()),
    ("cortex-m55", "auto", ("arm_mve", "arm_dsp", "arm_fpu")),
    ("cortex-m55", "arm_dsp", ("arm_dsp",)), ("cortex-m0", "auto", ()), ("rv32imac", None, ())])
def test_variants_from_kernels_and_target_features(target, kernels, variants):
    o = CompileOptions.resolve(target, kernels)
    assert o.variants == variants
    assert o.chain_dsp == ("arm_dsp" in variants)
    assert first_variant("qnn.conv2d", o.variants) == (variants[0] if variants else "ref")


def test_float_fpu_kernels_only_on_arm_cores_with_an_fpu():
    """arm_fpu (VFMA kernels for nn.conv2d / nn.matmul) needs the 'vfp' feature: an FPU on an Arm core,
    so not the host (an FPU, not Arm) nor cortex-m3 (Arm, no FPU); int8 anchors keep their variants."""
    assert TARGETS["host"].fpu and "vfp" not in TARGETS["host"].features
    assert "arm_fpu" not in CompileOptions.resolve("cortex-m3").variants
    for target in ("cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"):
        o = CompileOptions.resolve(target)
        assert first_variant("nn.conv2d", o.variants) == first_variant("nn.matmul", o.variants) == "arm_fpu"
        assert first_variant("qnn.conv2d", o.variants) != "arm_fpu"
    assert first_variant("nn.conv2d", CompileOptions.resolve("cortex-m4", "arm_dsp").variants) == "ref"
    with pytest.raises(TinyfuseError, match="no vfp feature"):
        CompileOptions.resolve("host", "arm_fpu")


def test_bad_choices_are_user_errors():
    with pytest.raises(TinyfuseError, match="no dsp feature"):
        CompileOptions.resolve("cortex-m0", "arm_dsp")
    with pytest.raises(TinyfuseError, match="choose one of"):
        CompileOptions.resolve("cortex-m4", "neon")
    with pytest.raises(TinyfuseError, match="rounding"):
        CompileOptions.resolve(rounding="up")
    with pytest.raises(TinyfuseError, match="unknown target"):
        CompileOptions.resolve("cortex-a53")


def test_for_kernels_keeps_the_compilation_context():
    o = CompileOptions.resolve("cortex-m4", scratch_bytes=700)
    r = o.for_kernels("ref")
    assert r.variants == () and r.scratch_bytes == 700 and r.context is o.context


def test_every_pass_takes_module_and_options_and_wrap_kernels_cannot_be_disabled():
    assert [n for n, _ in PASSES].count("wrap_kernels") == 1 and "wrap_kernels" not in PASS_NAMES
    assert set(PASS_NAMES) == {n for n, _ in PASSES} - {"wrap_kernels"}
