"""SIMD kernel variants against the portable kernels, under qemu, one kernel kind at a time.

Each case is a one-op int8 model (the QDQ twins of tests/c/test_int8_tflm.py, whose TFLM output is
the oracle) on a shape chosen to break a micro-kernel: odd widths and odd pixel counts (the pixel-pair
tail), channel counts not a multiple of 4 (the channel tail, the natural-order im2col), depthwise
multiplier 3, stride 2 with TF SAME's asymmetric 0/1 padding, a 1x1 reduction long enough for the
unrolled loop plus its rest (and a one-channel tail of the 4-channel block), a 3x3 im2col reduction long
enough for the 2x4 kernel's loop, dilation 2, batch 2, a reduction length
not a multiple of 4 or 16. Every case runs three times under qemu: arm_dsp kernels on Cortex-M4,
arm_mve (the DSP depthwise for a multiplier > 1) on Cortex-M55, the portable kernels (--kernels ref) on Cortex-M4. All
three must be byte-identical, and equal to TFLM.
"""
import os

import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tests.builders import conv_case, fc_case
from tests.target.conftest import require_tools

CASES = {
    # regular conv: im2col (row-wise when C % 4 != 0: im2col_rows), direct 1x1, pixel and channel tails
    "conv3x3_c5_odd_width_relu6": lambda: conv_case("conv", 201, (1, 7, 9, 5), 6, (3, 3), act="RELU6"),
    "conv3x3_stride2_asym_pad_o7": lambda: conv_case("conv", 202, (1, 8, 10, 8), 7, (3, 3), stride=(2, 2)),
    "conv3x3_dilation2": lambda: conv_case("conv", 203, (1, 9, 7, 4), 5, (3, 3), dilation=(2, 2)),
    "conv1x1_direct_odd_pixels_relu": lambda: conv_case("conv", 204, (1, 5, 7, 12), 10, (1, 1), act="RELU"),
    "conv3x3_c32_col_loop_o6_odd_pixels": lambda: conv_case("conv", 210, (1, 5, 3, 32), 6, (3, 3)),
    "conv1x1_c80_o9_loop_and_tail": lambda: conv_case("conv", 209, (1, 3, 3, 80), 9, (1, 1), act="RELU6"),
    "conv1x1_c6_im2col": lambda: conv_case("conv", 205, (1, 6, 5, 6), 9, (1, 1)),
    "conv1x1_stride2_valid": lambda: conv_case("conv", 206, (1, 9, 8, 8), 4, (1, 1), stride=(2, 2), padding="VALID"),
    "conv10x4_c1_stride2_kws": lambda: conv_case("conv", 207, (1, 21, 10, 1), 8, (10, 4), stride=(2, 2)),
    "conv3x2_batch2_valid": lambda: conv_case("conv", 208, (2, 5, 6, 4), 6, (3, 2), padding="VALID"),
    # depthwise: quads + one-channel tail, multiplier 3, stride 2 asymmetric, dilation 2, batch 2
    "dw3x3_c13_odd_width_relu": lambda: conv_case("depthwise", 211, (1, 7, 9, 13), None, (3, 3), act="RELU"),
    "dw3x3_mult3": lambda: conv_case("depthwise", 212, (1, 6, 5, 5), None, (3, 3), mult=3),
    "dw3x3_stride2_asym_pad": lambda: conv_case("depthwise", 213, (1, 8, 10, 8), None, (3, 3), stride=(2, 2)),
    "dw3x3_dilation2": lambda: conv_case("depthwise", 214, (1, 9, 7, 4), None, (3, 3), dilation=(2, 2)),
    "dw2x3_mult2_batch2_valid": lambda: conv_case("depthwise", 215, (2, 5, 4, 6), None, (2, 3), padding="VALID",
                                                   mult=2),
    # fully connected: odd rows, K % 4 = 1 (K % 16 = 5), odd N; per-channel weights
    "fc_batch3_k37_n11": lambda: fc_case(221, 3, 37, 11),
    "fc_k64_n10_per_channel_relu6": lambda: fc_case(222, 1, 64, 10, act="RELU6", per_channel=True),
}
SIMD = {"cortex-m4": {"conv": "arm_dsp", "depthwise": "arm_dsp", "fc": "arm_dsp"},
        "cortex-m55": {"conv": "arm_mve", "depthwise": "arm_mve", "fc": "arm_mve"}}
# the Helium depthwise takes multiplier 1 only: a multiplier > 1 goes to the DSP kernel on cortex-m55
DSP_ON_M55 = ("dw3x3_mult3", "dw2x3_mult2_batch2_valid")


def _run(case, target, kernels, workdir):
    """Output, kernel variant and whether the memory plan ran the kernel in place (output over input)."""
    result = compile_model(case.model, target=target, name="k", kernels=kernels)
    steps = [s for s in result.steps if s.kernel.ops[0] in ("qnn.conv2d", "qnn.matmul")]
    assert len(steps) == 1, [s.kernel.ops for s in result.steps]
    build = build_target(result, target, workdir, case.inputs)
    (y,) = run_target(build)
    return y, steps[0].kernel.variant, steps[0].in_offsets[0] == steps[0].out_offset


@pytest.mark.parametrize("name", sorted(CASES))
def test_simd_kernel_equals_portable_and_tflm(name, tmp_path, monkeypatch):
    for target in SIMD:
        require_tools(target)
    case = CASES[name]()
    ref, variant, _ = _run(case, "cortex-m4", "ref", tmp_path / "ref")
    assert variant == "ref" or variant.startswith("inplace_")      # portable, maybe in place
    assert np.array_equal(ref, case.want), \
        f"portable: {np.sum(ref != case.want)} outputs differ from TFLM ({case.desc})"
    for target, want_variant in SIMD.items():
        y, variant, inplace = _run(case, target, "auto", tmp_path / target)
        if case.kind == "depthwise" and variant == "inplace_dw_rows":    # the DSP in-place line kernel
            assert inplace and np.array_equal(y, ref), f"{target} {variant}: {np.sum(y != ref)} outputs differ"
        if case.kind == "depthwise" and variant in ("inplace_dw_plane", "inplace_dw_rows"):
            # the memory plan chose a channel-by-channel in-place kernel: plan without in-place
            # options to run the quad one
            with monkeypatch.context() as m:
                m.setattr("tinyfuse.memory.arena.inplace_options", lambda fn, cost=None, cache=None: [])
                y, variant, inplace = _run(case, target, "auto", tmp_path / f"{target}_not_in_place")
        want = "arm_dsp" if target == "cortex-m55" and name in DSP_ON_M55 else want_variant[case.kind]
        assert variant == want, (target, variant)
        assert np.array_equal(y, ref), \
            f"{target} {variant}{' in place' if inplace else ''}: {np.sum(y != ref)} outputs differ ({case.desc})"


@pytest.mark.parametrize("model,target", [("kws_ref_model", "cortex-m4"), ("pretrainedResnet_quant", "cortex-m55"),
                                          ("kws_ref_model", "cortex-m55")])
def test_simd_sources_compile_warning_free_with_gcc_and_clang(model, target, tmp_path):
    """The generated arm_dsp / arm_mve C (ACLE intrinsics, inline asm, Helium intrinsics) builds with
    -Wall -Wextra -Wconversion -Werror under arm-none-eabi-gcc and clang."""
    import shutil
    import subprocess
    from tinyfuse.targets import get_target
    from tests.conftest import require_programs, shared_or_skip
    require_tools(target)
    path = shared_or_skip("models", "onnx", f"{model}.onnx")
    result = compile_model(path, target=target, disabled_passes=("poly_fuse",))
    assert {k.variant for k in result.kernels} & {"arm_dsp", "arm_mve"}
    src = result.write(tmp_path / "src") / f"{result.name}.c"
    flags = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Wconversion", "-Werror", "-c", str(src), "-o", str(tmp_path / "m.o")]
    cpu = [f for f in get_target(target).cflags if f.startswith(("-mcpu", "-mthumb", "-mfloat-abi", "-mfpu"))]
    compilers = [["arm-none-eabi-gcc"]]
    if shutil.which("clang") or os.environ.get("CI") == "true":
        require_programs("clang")           # CI installs clang: missing there is a failure
        compilers.append(["clang", "--target=arm-none-eabi", "-isystem", "/usr/lib/arm-none-eabi/include"])
    for cc in compilers:
        proc = subprocess.run([*cc, *cpu, *flags], capture_output=True, text=True)
        assert proc.returncode == 0, f"{cc[0]}: {proc.stderr[:3000]}"
