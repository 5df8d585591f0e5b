"""Requantization with multipliers above 1 (issue 13): a left shift that takes acc · 2^shift beyond int32
saturates instead of wrapping.

Oracles: float64 real arithmetic (dequantize, compute, quantize with the model's own scale and zero
point, saturate), independent of tinyfuse's fixed-point code; and, where TFLM's int32 shift does not
overflow, the C must still equal compiler/quant.py's TFLM arithmetic bit for bit.
"""
from __future__ import annotations

import ctypes
import warnings

import numpy as np
import pytest

from tests.builders import multiplier_conv_case
from tests.conftest import compile_and_run, quant_header_lib, shared_or_skip
from tinyfuse import quant

MULTIPLIERS = [2.0 ** k for k in range(1, 36)] + [1.7, 37.0, 3000.5, 2.0 ** 20 * 1.3]


@pytest.fixture(scope="module")
def mbqm_ubsan(tmp_path_factory):
    """quant.h's requantization built with UBSan trapping: any signed overflow or bad shift aborts."""
    return quant_header_lib(tmp_path_factory.mktemp("sat"), "-O1", "-fsanitize=undefined",
                            "-fno-sanitize-recover=all", "-fsanitize-undefined-trap-on-error")


def _c_mbqm(lib, acc: np.ndarray, m: int, s: int, rounding: str) -> np.ndarray:
    acc = np.ascontiguousarray(acc, np.int32)
    y = np.zeros_like(acc)
    lib.mbqm(acc.ctypes.data_as(ctypes.c_void_p), y.ctypes.data_as(ctypes.c_void_p), len(acc), m, s,
             int(rounding == "single"))
    return y


def _accumulators(rng) -> np.ndarray:
    edges = [0, 1, -1, 2, -2, 127, -128, 2**15, -2**15, 2**20 + 3, -2**20 - 3, 2**30, -2**30,
             2**31 - 1, -2**31]
    return np.concatenate([np.array(edges, np.int64), rng.integers(-2**31, 2**31, 3000),
                           rng.integers(-2**12, 2**12, 1000)]).astype(np.int32)


@pytest.mark.parametrize("rounding", ["double", "single"])
def test_requantize_matches_real_arithmetic(mbqm_ubsan, rounding):
    """int8(requantize(acc) + zp) equals clip(round(acc · real) + zp) of float64 real arithmetic within 1 LSB
    (exactly for powers of two, where the Q31 multiplier is exact), for every int32 accumulator."""
    rng = np.random.default_rng(13)
    acc = _accumulators(rng)
    for real in MULTIPLIERS:
        m, s = quant.quantize_multiplier(real)
        for zp in (-128, 0, 5, 127):
            got = np.clip(_c_mbqm(mbqm_ubsan, acc, m, s, rounding).astype(np.int64) + zp, -128, 127)
            want = np.clip(np.rint(acc.astype(np.float64) * real) + zp, -128, 127)
            diff = np.abs(got - want)
            assert diff.max() <= (0 if real == 2.0 ** round(np.log2(real)) else 1), (real, zp, diff.max())


@pytest.mark.parametrize("rounding", ["double", "single"])
def test_c_equals_numpy_spec_everywhere(mbqm_ubsan, rounding):
    """quant.h and compiler/quant.py agree on every accumulator and shift, the saturating region included."""
    rng = np.random.default_rng(14)
    acc = _accumulators(rng)
    for real in MULTIPLIERS + [1e-5, 0.27, 0.999]:
        m, s = quant.quantize_multiplier(real)
        assert np.array_equal(_c_mbqm(mbqm_ubsan, acc, m, s, rounding), quant.requantize(acc, m, s, rounding)), real


def _tflm_wrapping(acc, m, s):
    """TFLM's MultiplyByQuantizedMultiplier (int32 left shift that wraps), valid where it does not wrap."""
    left, right = max(s, 0), max(-s, 0)
    return quant.rdbp(quant.srdhm(quant.wrap32(np.asarray(acc, np.int64) << left), m), right)


def test_no_change_where_tflm_does_not_overflow():
    """Where acc · 2^shift fits int32 the saturating arithmetic is TFLM's, bit for bit."""
    rng = np.random.default_rng(15)
    for real in MULTIPLIERS:
        m, s = quant.quantize_multiplier(real)
        if s > 31:
            continue                              # C's int32 shift by >= 32 is undefined: no TFLM value
        lim = 2**31 >> max(s, 0)                  # acc · 2^shift in [-2^31, 2^31)
        acc = rng.integers(-lim, lim, 2000)
        assert np.array_equal(quant.mbqm(acc, m, s), _tflm_wrapping(acc, m, s)), real


@pytest.mark.parametrize("case", ["per_tensor_256", "per_channel_2^1..2^35"])
def test_conv_multiplier_above_one(tmp_path, case):
    """The portable kernel on the host equals the real-arithmetic model exactly (powers of two: no ties)."""
    model, x, want = multiplier_conv_case(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # check_overflow rightly warns about these accumulators
        (out,), _ = compile_and_run(model, [x], tmp_path)
    assert np.array_equal(out.reshape(want.shape), want), np.argwhere(out.reshape(want.shape) != want)[:5]
    assert (want == 127).any() and (want == -128).any()


def test_multiplier_above_one_equals_tflm_where_tflm_does_not_overflow(tmp_path):
    """A .tflite 1x1 conv with per-channel multipliers 2^1 … 2^24 and small accumulators (acc · 2^shift fits
    int32, where TFLM's arithmetic is defined): tinyfuse equals TFLM bit for bit."""
    import sys
    tools = shared_or_skip("tools", "tflm_oneop.py").parent
    sys.path.insert(0, str(tools))
    import tflm_oneop
    rng = np.random.default_rng(17)
    x = rng.integers(-3, 4, (1, 5, 5, 4)).astype(np.int8)
    w = rng.integers(-2, 3, (24, 1, 1, 4)).astype(np.int8)
    scales = np.array([2.0 ** (k + 1) for k in range(24)], np.float32) / 64
    bias = np.zeros(24, np.int32)
    model = tflm_oneop.conv2d(x.shape, w, bias, (1 / 8, 1), scales, (1 / 512, 0))
    want = tflm_oneop.run(model, [x])[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (out,), _ = compile_and_run(model, [x], tmp_path)
    assert np.array_equal(out.reshape(want.shape), want)
    assert (want == 127).any() and (want == -128).any() and (np.abs(want) < 100).any()
