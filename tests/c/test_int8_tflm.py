"""int8 kernels bit-exact with TensorFlow Lite Micro, one kernel kind at a time.

For every case the same integers (input, weights, bias) and the same quantization parameters go
into two models:
  (a) a one-op int8 TFLite model (../shared/tools/tflm_oneop.py), run by TFLM: the exact oracle;
  (b) its ONNX QDQ twin (tests/builders/qdq.py), which tinyfuse compiles to C.
tinyfuse's output must equal TFLM's bit for bit (ONNX → legalize_qdq → int8 C kernels with the
TFLite/CMSIS-NN arithmetic of ../shared/docs/QUANT.md).

The twin is validated independently of tinyfuse: onnxruntime runs it (QDQ in float, round half
to even) and must land within a few LSB of TFLM. That check proves (a) and (b) describe the same
computation, so a tinyfuse mismatch is a tinyfuse bug, not a test bug. The ORT tests come first
in the file so they all run even with -x when tinyfuse fails.

Shapes are chosen to catch bugs: odd widths, channels not a multiple of 4, stride 2 SAME on even
inputs (asymmetric 0/1 padding), dilation 2, depth multiplier 3, 1x1 and non-square kernels, batch
2, fused NONE / RELU / RELU6, seeded random scales and zero points.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from tests.builders import (Case, binary_case, concat_case, conv_case, fc_case, pool_case, reshape_case,
                            unary_case)
from tests.conftest import compile_and_run, ort_run

ORT_TOL_LSB = 2                      # ORT requantizes in float (half-even): ±1 per op expected
ANCHORS = {"conv": "qnn.conv2d", "depthwise": "qnn.conv2d", "fc": "qnn.matmul"}
NO_ARITHMETIC = ("max_pool", "concat", "reshape")   # QUANT.md: pure data movement, no requantize


# ----------------------------------------------------------------------------- the cases
def _specs():
    s = {}

    def conv(seeds, x, o, k, stride=(1, 1), padding="SAME", dilation=(1, 1), act="NONE"):
        for seed in seeds:
            sid = (f"conv-{'x'.join(map(str, x))}-o{o}-k{k[0]}x{k[1]}-s{stride[0]}{stride[1]}-{padding}"
                   f"-d{dilation[0]}-{act}-seed{seed}")
            s[sid] = functools.partial(conv_case, "conv", seed, x, o, k, stride, padding, dilation, act)

    def dw(seeds, x, mult, k, stride=(1, 1), padding="SAME", dilation=(1, 1), act="NONE"):
        for seed in seeds:
            sid = (f"depthwise-{'x'.join(map(str, x))}-m{mult}-k{k[0]}x{k[1]}-s{stride[0]}{stride[1]}-{padding}"
                   f"-d{dilation[0]}-{act}-seed{seed}")
            s[sid] = functools.partial(conv_case, "depthwise", seed, x, None, k, stride, padding, dilation,
                                       act, mult)

    two = (0, 1)
    conv(two, (1, 7, 5, 3), 8, (3, 3))                                        # odd H/W, C=3
    conv(two, (1, 9, 11, 5), 6, (3, 3), (2, 2), act="RELU")                   # odd input, stride 2
    conv(two, (1, 8, 10, 3), 5, (3, 3), (2, 2), act="RELU6")                  # even input: pads 0/1
    conv(two, (1, 7, 5, 6), 4, (3, 3), dilation=(2, 2))                       # dilation 2
    conv(two, (1, 9, 11, 6), 5, (1, 1), padding="VALID", act="RELU")          # 1x1
    conv((2,), (1, 6, 8, 4), 7, (5, 3), (1, 2), padding="VALID", act="RELU6")  # non-square, VALID
    conv((3,), (2, 5, 7, 3), 6, (3, 3), act="RELU")                          # batch 2
    conv((4,), (1, 16, 16, 8), 16, (3, 3), (2, 2), act="RELU")               # SIMD-friendly sizes
    conv((5,), (1, 10, 4, 1), 12, (10, 4), (2, 2), act="RELU")               # KWS first layer style
    dw(two, (1, 7, 5, 3), 1, (3, 3))
    dw(two, (1, 9, 11, 5), 3, (3, 3), act="RELU")                              # multiplier 3
    dw(two, (1, 8, 10, 6), 1, (3, 3), (2, 2), act="RELU6")                     # pads 0/1
    dw(two, (1, 8, 8, 3), 3, (3, 3), (2, 2))                                   # mult 3, stride 2
    dw(two, (1, 9, 7, 5), 1, (3, 3), dilation=(2, 2), act="RELU")              # dilation 2
    dw((2,), (1, 10, 6, 4), 2, (3, 3), padding="VALID", dilation=(2, 2))
    dw((3,), (1, 12, 12, 8), 1, (3, 3), act="RELU6")
    dw((4,), (2, 6, 5, 3), 1, (5, 5), act="NONE")                              # k5 > W: pads 2/2

    for seed in two:
        for b, k, n, act, pc in ((1, 10, 6, "NONE", False), (3, 17, 5, "RELU", False),
                                 (2, 64, 12, "RELU6", False), (1, 250, 10, "NONE", False)):
            s[f"fc-{b}x{k}-n{n}-{act}-seed{seed}"] = functools.partial(fc_case, seed, b, k, n, act, pc)
    s["fc-2x33-n7-RELU-perchannel-seed2"] = functools.partial(fc_case, 2, 2, 33, 7, "RELU", True)

    for kind in ("add", "mul"):
        for seed in two:
            for a, b, act in (((1, 7, 5, 3), (1, 7, 5, 3), "NONE"), ((1, 9, 11, 5), (1, 9, 11, 5), "RELU"),
                              ((2, 4, 6, 6), (2, 4, 6, 6), "RELU6")):
                s[f"{kind}-{'x'.join(map(str, a))}-{act}-seed{seed}"] = functools.partial(
                    binary_case, kind, seed, a, b, act)
        s[f"{kind}-1x5x7x6-bcast-1x1x1x6-seed2"] = functools.partial(binary_case, kind, 2, (1, 5, 7, 6), (1, 1, 1, 6))

    for kind in ("avg_pool", "max_pool"):
        for seed, (x, f, st, pad, act) in enumerate((
                ((1, 8, 10, 3), (2, 2), (2, 2), "VALID", "NONE"),
                ((1, 7, 5, 5), (3, 3), (2, 2), "SAME", "NONE"),     # odd input, SAME
                ((1, 8, 10, 6), (3, 3), (2, 2), "SAME", "RELU"),    # pads 0/1
                ((1, 9, 11, 3), (3, 3), (1, 1), "SAME", "RELU6"),   # border windows: valid counts
                ((2, 5, 5, 4), (5, 5), (1, 1), "VALID", "NONE"))):  # global pool
            s[f"{kind}-{'x'.join(map(str, x))}-f{f[0]}-s{st[0]}-{pad}-{act}-seed{seed}"] = functools.partial(
                pool_case, kind, seed, x, f, st, pad, act)

    for seed, x in enumerate(((1, 10), (3, 12), (2, 35), (1, 4, 6, 7))):
        s[f"softmax-{'x'.join(map(str, x))}-seed{seed}"] = functools.partial(unary_case, "softmax", seed, x)
    for kind in ("logistic", "tanh"):
        for seed in two:
            s[f"{kind}-4x64-all-int8-seed{seed}"] = functools.partial(unary_case, kind, seed, (4, 64), True)
        s[f"{kind}-1x7x5x3-seed2"] = functools.partial(unary_case, kind, 2, (1, 7, 5, 3))

    for seed, shapes in enumerate((((1, 5, 7, 3), (1, 5, 7, 5)), ((1, 4, 6, 2), (1, 4, 6, 3), (1, 4, 6, 6)),
                                   ((2, 3, 5, 1), (2, 3, 5, 4)))):
        s[f"concat-{'+'.join(str(sh[3]) for sh in shapes)}ch-{'x'.join(map(str, shapes[0][:3]))}-seed{seed}"] = \
            functools.partial(concat_case, seed, shapes)
    for seed, (x, new) in enumerate((((1, 5, 7, 3), (1, 105)), ((1, 4, 6, 6), (4, 36)), ((2, 3, 5, 1), (2, -1)))):
        s[f"reshape-{'x'.join(map(str, x))}-to-{'x'.join(map(str, new))}-seed{seed}"] = functools.partial(
            reshape_case, seed, x, new)
    return s


SPECS = _specs()
IDS = list(SPECS)


@functools.lru_cache(maxsize=None)
def get_case(case_id: str) -> Case:
    return SPECS[case_id]()


def _lsb_report(got, want) -> str:
    d = np.abs(got.astype(np.int32) - want.astype(np.int32))
    bad = np.argwhere(d)
    first = tuple(int(i) for i in bad[0]) if len(bad) else None
    return (f"{len(bad)}/{d.size} differ, max {int(d.max())} LSB, first at {first}: "
            f"got {got[first] if first else '-'} want {want[first] if first else '-'}")


# ----------------------------------------------------------------------------- tests
def test_case_list_covers_every_kind():
    kinds = {i.split("-")[0] for i in IDS}
    assert kinds == {"conv", "depthwise", "fc", "add", "mul", "avg_pool", "max_pool", "softmax", "logistic",
                     "tanh", "concat", "reshape"}


@pytest.mark.parametrize("case_id", IDS)
def test_qdq_twin_matches_tflm_within_lsb(case_id):
    """Test-of-the-test: onnxruntime on the ONNX QDQ twin ≈ TFLM (float requantize: ±1-2 LSB)."""
    c = get_case(case_id)
    (ort,) = ort_run(c.model, c.feeds)
    assert ort.dtype == np.int8 and ort.shape == c.want.shape, (ort.dtype, ort.shape, c.want.shape)
    d = np.abs(ort.astype(np.int32) - c.want.astype(np.int32))
    assert d.max() <= ORT_TOL_LSB, f"{case_id}: ORT vs TFLM {_lsb_report(ort, c.want)} ({c.desc})"
    if c.kind in NO_ARITHMETIC:
        assert d.max() == 0
    # the case is not degenerate: the outputs are not all one saturated value
    assert len(np.unique(c.want)) > (2 if c.want.size > 8 else 1), f"{case_id}: outputs {np.unique(c.want)}"


@pytest.mark.parametrize("case_id", IDS)
def test_tinyfuse_bit_exact_with_tflm(case_id, tmp_path):
    c = get_case(case_id)
    (got,), result = compile_and_run(c.model, c.inputs, tmp_path)
    assert got.dtype == np.int8 and got.shape == c.want.shape, (got.dtype, got.shape, c.want.shape)
    assert np.array_equal(got, c.want), f"{case_id}: tinyfuse vs TFLM {_lsb_report(got, c.want)} ({c.desc})"

    kernels = [(k.name, list(k.ops)) for k in result.kernels]
    float_islands = [k for k in kernels if {"qnn.quantize", "qnn.dequantize"} & set(k[1])]
    assert not float_islands, f"{case_id}: kernels still (de)quantizing in float: {float_islands}"
    n_requant = sum(ops.count("qnn.requantize") for _, ops in kernels)
    if c.kind in ANCHORS:
        anchor = [k for k in kernels if ANCHORS[c.kind] in k[1]]
        assert len(anchor) == 1, f"{case_id}: one {ANCHORS[c.kind]} kernel expected: {kernels}"
        ops = anchor[0][1]
        assert ops[:3] == [ANCHORS[c.kind], "add", "qnn.requantize"] and ops[3:] in ([], ["clip"]), \
            f"{case_id}: anchor kernel ops {ops}"
        assert n_requant == 1, f"{case_id}: exactly one requantize expected: {kernels}"
    elif c.kind in NO_ARITHMETIC:
        assert n_requant == 0, f"{case_id}: same (scale, zero point) in and out needs no requantize: {kernels}"
