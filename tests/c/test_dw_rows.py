"""The DSP in-place line-buffered depthwise kernel (lower/conv/depthwise_rows.py, variant inplace_dw_rows)
and the DSP quad depthwise kernel with the short requantize (lower/conv/depthwise_dsp.py) against TFLite
Micro, bit for bit: compiled for cortex-m4 and built on the host through simd_host.h (the portable
twins of the DSP intrinsics and of requant_arm.h) under AddressSanitizer and UndefinedBehaviorSanitizer
with guard regions. Cases: lines along rows and along columns, odd and even line lengths (9, 7, 8, 6: four-output steps
followed by none, a pair, a single or a pair and a single), a fused RELU6
clamp, the Epilogue path (short requantize off), stride 2, a stride-2 channel-multiplier-2 quad kernel.
A small MobileNetV1 (onnxruntime QDQ) runs the stride-2 in-place kernel between pointwise convs; its
oracle is the compiled IR evaluated in numpy (quant.py's fixed-point arithmetic, not the C kernels).
The same kernels on qemu: tests/target/test_int8_targets.py (KWS)."""
import contextlib
from unittest import mock

import numpy as np
import pytest

from tests.builders import conv_case
from tests.conftest import require_programs
from tinyfuse.driver import compile_model
from tinyfuse.lower.kernel import split_group
from tinyfuse.harness.multi import build_host_multi, run_host_multi

CASES = {   # name: (seed, input NHWC, padding, activation, short requantize on, stride, multiplier, variant)
    "dwr_cols": (11, (1, 9, 6, 8), "SAME", "NONE", True, 1, 1, "inplace_dw_rows"),    # lines are columns, length 9
    "dwr_rows": (12, (1, 4, 7, 5), "SAME", "RELU6", True, 1, 1, "inplace_dw_rows"),   # lines are rows, length 7
    "dwr_even": (13, (1, 6, 8, 3), "SAME", "NONE", True, 1, 1, "inplace_dw_rows"),    # rows of even length 8
    "dwr_epi": (14, (1, 5, 6, 4), "SAME", "RELU", False, 1, 1, "inplace_dw_rows"),    # the group's Epilogue stores
    "dwr_s2": (16, (1, 6, 5, 64), "SAME", "NONE", True, 2, 1, "inplace_dw_rows"),   # stride 2 in place
    "dwq_m2_s2": (15, (1, 9, 8, 6), "SAME", "RELU6", True, 2, 2, "arm_dsp"),        # quads + one-by-one channels
}


def _mobilenet(tmp):
    from tests.builders.mobilenet_v1 import mobilenet_v1, quantize_static_qdq
    from tinyfuse.harness.oracles import numpy_outputs
    q = quantize_static_qdq(mobilenet_v1(hw=8, widths=(16, 64, 64, 128), head=False, seed=1), tmp, activation="QInt8")
    result = compile_model(q, target="cortex-m4", name="dwr_mbv1")
    x = np.random.default_rng(5).standard_normal((1, 3, 8, 8)).astype(np.float32)
    return result, [x], numpy_outputs(result, [x])[0]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    out = []
    for name, (seed, shape, pad, act, short, stride, mult, _) in CASES.items():
        case = conv_case("dw", seed, shape, 0, (3, 3), (stride, stride), padding=pad, act=act, mult=mult)
        patch = mock.patch("tinyfuse.lower.conv.depthwise_rows.short_requant", return_value=None) if not short \
            else contextlib.nullcontext()
        with patch:
            result = compile_model(case.tflm, target="cortex-m4", name=name)
        out.append((name, list(case.inputs), case.want, result))
    return out, _mobilenet(tmp_path_factory.mktemp("mbv1"))


def test_the_kernel_is_chosen_and_uses_its_header(compiled):
    cases, (mbv1, _, _) = compiled
    strides = [split_group(s.call.op)[0].attrs["strides"] for k, s in zip(mbv1.kernels, mbv1.steps)
               if k.variant == "inplace_dw_rows"]
    assert (2, 2) in strides and (1, 1) in strides, strides
    for name, _, _, result in cases:
        dw = [k for k in result.kernels if "qnn.conv2d" in k.ops]
        assert [k.variant for k in dw] == [CASES[name][7]], (name, [k.variant for k in dw])
        short = "tf_rq2(" in dw[0].code and "tf_mbqm(" not in dw[0].code
        assert ("int16_t *ring" in dw[0].code) == (CASES[name][6] == 1), name   # the line kernel for multiplier 1
        assert short == CASES[name][4], (name, short)


def test_equals_tflm_under_asan_ubsan_with_guards(compiled, tmp_path):
    require_programs("gcc")
    cases, (mbv1, x, want) = compiled
    runs = [*cases, ("dwr_mbv1", x, want, mbv1)]
    results = [r for *_, r in runs]
    exe = build_host_multi(results, tmp_path, sanitize=True, guard=64, arena_fill=0xA5, simd_host=True)
    outs = run_host_multi(exe, results, [inputs for _, inputs, _, _ in runs])
    for (name, _, want, _), (got,) in zip(runs, outs):
        assert np.array_equal(got.reshape(want.shape), want), \
            f"{name}: {int(np.sum(got.reshape(want.shape) != want))} outputs differ from the oracle"
