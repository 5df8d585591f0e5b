"""Every failure the TFLM twin fuzzer found in a SIMD kernel variant (tests/fuzz/tflm_twin.py --variant
arm_dsp | arm_mve | arm_fpu, or --qemu), as a hand-built model of its smallest form: compiled for the
Arm target, the kernel variant checked, built on the host through the SIMD stand-ins (simd_host.h) and
compared with TFLM and, where the rule is short, hand-computed values. The seed in a name is the seed
of the variant's campaign that first showed it; the docstring says what was wrong and where it was fixed."""
from __future__ import annotations

import numpy as np
import pytest

from tests.builders import tflm_twin_models as tm
from tests.builders.tflm_cases import tflm_oneop
from tests.builders.tflm_twin_models import Net
from tests.conftest import require_programs


def simd_run(model: bytes, inputs: list, target: str, tmp_path, variant: str) -> list:
    """tinyfuse's outputs of ``model`` compiled for ``target``, built on the host through simd_host.h
    (ASan + UBSan, guard regions, a non-zero arena); asserts a kernel got ``variant``."""
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.multi import build_host_multi, run_host_multi
    require_programs("gcc")
    result = compile_model(model, target=target)
    assert variant in {k.variant for k in result.kernels}, [(k.name, k.variant) for k in result.kernels]
    exe = build_host_multi([result], tmp_path / target, sanitize=True, guard=64, arena_fill=0xA5, simd_host=True)
    return run_host_multi(exe, [result], [inputs])[0]


def _float_depthwise(x_shape, w, b, stride=(1, 1), padding="VALID", act="NONE") -> bytes:
    net = Net()
    c = w.shape[3]
    oh, ow = (tm.out_size(n, k, s, 1, padding) for n, k, s in zip(x_shape[1:3], w.shape[1:3], stride))
    y = net.op("DEPTHWISE_CONV_2D", [net.input(x_shape), net.const(w), net.const(b)],
               net.act((x_shape[0], oh, ow, c)), "DepthwiseConv2DOptions", padding=tm.PAD[padding],
               strideH=stride[0], strideW=stride[1], dilationHFactor=1, dilationWFactor=1,
               fusedActivationFunction=tm.ACT[act], depthMultiplier=1)
    return net.build([y])


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_fpu_seed1_depthwise_1x1_is_not_a_pointwise_matmul(target, tmp_path):
    """A float depthwise conv with a 1x1 kernel, stride 1, no padding (seed 1 of --variant arm_fpu:
    [1, 12, 3, 64], 1719 of 2304 outputs wrong) ran arm_fpu's pointwise path, which reads the input in
    place as the rows of a dense [C x K] matmul: every output channel summed all input channels
    through the depthwise weights. Fixed in lower/conv/fpu.py: only groups 1 take that path; a
    depthwise 1x1 runs the depthwise blocks."""
    x = np.array([1, 2, 3, -1, -2, 4, 0, 5, -3, 2, 2, 1], np.float32).reshape(1, 2, 2, 3)
    w = np.array([2, -1, 3], np.float32).reshape(1, 1, 1, 3)
    b = np.array([0.5, 1, -2], np.float32)
    model = _float_depthwise(x.shape, w, b)
    want = x * w.reshape(3) + b                  # every value exact in float32
    np.testing.assert_array_equal(tflm_oneop().run(model, [x])[0], want)
    (got,) = simd_run(model, [x], target, tmp_path, "arm_fpu")
    np.testing.assert_array_equal(got, want)


def _int8_conv(x_shape, k, oc, depthwise: bool) -> bytes:
    rng, net, q = np.random.default_rng(3), Net(), (0.05, 3)
    w = rng.integers(-127, 128, (1, *k, oc) if depthwise else (oc, *k, x_shape[3])).astype(np.int8)
    y, _ = tm.conv(net, net.input(x_shape, q), x_shape, q, w, rng.integers(-500, 500, oc).astype(np.int32),
                   np.full(oc, 1e-4, np.float32), (0.1, -5), (1, 1), "VALID", (1, 1), "NONE", 1 if depthwise else 0)
    return net.build([y])


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_graph_seed1049_large_windows_are_not_unrolled(target, tmp_path):
    """An int8 global average pool whose scales differ becomes a depthwise conv of ones; over a 30 x 60
    map (graph fuzzer --target cortex-m4, seed 1049) the arm_dsp depthwise unrolled all 1800 taps: a
    21,630-line kernel for 9000 MACs that gcc -O1 had not compiled after 27 minutes (arm_mve: ~2 lines
    a tap, the same growth), and the arm_dsp row-wise im2col of a C % 4 != 0 conv unrolls every word of
    its window the same way. Fixed in strategy/conv.py (MAX_UNROLLED_TAPS: the SIMD depthwise
    forms, the Helium dw_plane and the chain stages decline larger windows, the portable kernel loops)
    and lower/conv/im2col_rows.py (MAX_ROW_WORDS: the looped int16 im2col beyond). The kernels stay small
    and equal TFLM."""
    rng = np.random.default_rng(4)
    for x_shape, k, oc, dw in (((1, 30, 60, 5), (30, 60), 5, True), ((1, 24, 24, 5), (24, 24), 4, False)):
        from tinyfuse.driver import compile_model
        model = _int8_conv(x_shape, k, oc, dw)
        lines = max(kern.code.count("\n") for kern in compile_model(model, target=target).kernels)
        assert lines < 1000, f"{x_shape} {k}: a {lines}-line kernel"
        x = rng.integers(-128, 128, x_shape).astype(np.int8)
        (got,) = simd_run(model, [x], target, tmp_path / f"{dw}", "ref" if dw else
                          {"cortex-m4": "arm_dsp", "cortex-m55": "arm_mve"}[target])
        np.testing.assert_array_equal(got, tflm_oneop().run(model, [x])[0])
