"""CompileOptions: resolved once from the user's arguments (target, --kernels, budgets), the single
place where a target's dsp/mve features become kernel variants."""
import pytest

from tinyfuse.errors import TinyfuseError
from tinyfuse.options import CompileOptions
from tinyfuse.strategy import impls, needs_met
from tinyfuse.passes.pipeline import PASS_NAMES, PASSES
from tinyfuse.targets import ARENA_ALIGN, TARGETS


def test_host_is_the_host_target_with_no_simd_variants():
    o = CompileOptions.resolve()
    assert o.target is TARGETS["host"] and o.variants == () and o.scratch_bytes == TARGETS["host"].scratch_bytes
    assert _first("qnn.conv2d", o) == "conv2d.ref" and o.alignment == ARENA_ALIGN == 16


def _first(family: str, options) -> str:
    """The first implementation of ``family`` (normal mode, dense) the options allow."""
    return next(i.name for i in impls(family) if "normal" in i.modes and i.isa not in ("sparse", "skip_zero")
                and needs_met(i, options))


@pytest.mark.parametrize("target, kernels, variants", [
    ("cortex-m4", "auto", ("arm_dsp", "arm_fpu")), ("cortex-m4", "ref", ()),
    ("cortex-m55", "auto", ("arm_mve", "arm_dsp", "arm_fpu")),
    ("cortex-m55", "arm_dsp", ("arm_dsp",)), ("cortex-m0", "auto", ()), ("rv32imac", None, ())])
def test_variants_from_kernels_and_target_features(target, kernels, variants):
    o = CompileOptions.resolve(target, kernels)
    assert o.variants == variants
    first = {"arm_mve": "conv2d.arm_mve_quads", "arm_dsp": "conv2d.arm_dsp"}
    assert _first("qnn.conv2d", o) == (first[variants[0]] if variants else "conv2d.ref")


def test_float_fpu_kernels_only_on_arm_cores_with_an_fpu():
    """arm_fpu (VFMA kernels for nn.conv2d / nn.matmul) needs the 'vfp' feature: an FPU on an Arm core,
    so not the host (an FPU, not Arm) nor cortex-m3 (Arm, no FPU); int8 anchors keep their variants."""
    assert TARGETS["host"].fpu and "vfp" not in TARGETS["host"].features
    assert "arm_fpu" not in CompileOptions.resolve("cortex-m3").variants
    for target in ("cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"):
        o = CompileOptions.resolve(target)
        assert _first("nn.conv2d", o) == "conv2d_f32.arm_fpu" and _first("nn.matmul", o) == "matmul_f32.arm_fpu"
        assert not any(i.needs == "arm_fpu" for i in impls("qnn.conv2d"))
    assert _first("nn.conv2d", CompileOptions.resolve("cortex-m4", "arm_dsp")) == "conv2d_f32.ref"
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
