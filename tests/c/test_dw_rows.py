"""The DSP in-place line-buffered depthwise kernel (lower/depthwise_rows_arm.py, variant inplace_dw_rows)
and the DSP quad depthwise kernel with the short requantize (lower/depthwise_arm.py) against TFLite
Micro, bit for bit: compiled for cortex-m4 and built on the host through simd_host.h (the portable
twins of the DSP intrinsics and of requant_arm.h) under AddressSanitizer and UndefinedBehaviorSanitizer
with guard regions. Cases: lines along rows and along columns, odd and even line lengths, a fused RELU6
clamp, the Epilogue path (short requantize off), a stride-2 channel-multiplier-2 quad kernel.
The same kernels on qemu: tests/target/test_int8_targets.py (KWS)."""
import contextlib
from unittest import mock

import numpy as np
import pytest

from tests.builders import conv_case
from tests.conftest import require_programs
from tinyfuse.driver import compile_model
from tinyfuse.harness.multi import build_host_multi, run_host_multi

CASES = {   # name: (seed, input NHWC, padding, activation, short requantize on, stride, multiplier, variant)
    "dwr_cols": (11, (1, 9, 6, 8), "SAME", "NONE", True, 1, 1, "inplace_dw_rows"),    # lines are columns, length 9
    "dwr_rows": (12, (1, 4, 7, 5), "SAME", "RELU6", True, 1, 1, "inplace_dw_rows"),   # lines are rows, length 7
    "dwr_even": (13, (1, 6, 8, 3), "SAME", "NONE", True, 1, 1, "inplace_dw_rows"),    # rows of even length 8
    "dwr_epi": (14, (1, 5, 6, 4), "SAME", "RELU", False, 1, 1, "inplace_dw_rows"),    # the group's Epilogue stores
    "dwq_m2_s2": (15, (1, 9, 8, 6), "SAME", "RELU6", True, 2, 2, "arm_dsp"),        # quads + one-by-one channels
}


@pytest.fixture(scope="module")
def compiled():
    out = []
    for name, (seed, shape, pad, act, short, stride, mult, _) in CASES.items():
        case = conv_case("dw", seed, shape, 0, (3, 3), (stride, stride), padding=pad, act=act, mult=mult)
        patch = mock.patch("tinyfuse.lower.depthwise_rows_arm.short_requant", return_value=None) if not short \
            else contextlib.nullcontext()
        with patch:
            result = compile_model(case.tflm, target="cortex-m4", name=name)
        out.append((name, case, result))
    return out


def test_the_kernel_is_chosen_and_uses_its_header(compiled):
    for name, _, result in compiled:
        dw = [k for k in result.kernels if "qnn.conv2d" in k.ops]
        assert [k.variant for k in dw] == [CASES[name][7]], (name, [k.variant for k in dw])
        short = "tf_rq2(" in dw[0].code and "tf_mbqm(" not in dw[0].code
        assert short == CASES[name][4], (name, short)


def test_equals_tflm_under_asan_ubsan_with_guards(compiled, tmp_path):
    require_programs("gcc")
    results = [r for _, _, r in compiled]
    exe = build_host_multi(results, tmp_path, sanitize=True, guard=64, arena_fill=0xA5, simd_host=True)
    outs = run_host_multi(exe, results, [list(c.inputs) for _, c, _ in compiled])
    for (name, case, _), (got,) in zip(compiled, outs):
        assert np.array_equal(got.reshape(case.want.shape), case.want), \
            f"{name}: {int(np.sum(got.reshape(case.want.shape) != case.want))} outputs differ from TFLM"
