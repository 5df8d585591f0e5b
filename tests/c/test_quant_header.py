"""The C header runtime_c/include/tinyfuse/quant.h (built with gcc as a shared library) against
compiler/quant.py on random inputs: requantization (both roundings) and the int8 add."""
import ctypes

import numpy as np
import pytest

from tinyfuse import quant
from tests.conftest import quant_header_lib


@pytest.fixture(scope="module")
def quant_lib(tmp_path_factory):
    return quant_header_lib(tmp_path_factory.mktemp("q"), "-O2")


def _ptr(a):
    return a.ctypes.data_as(ctypes.c_void_p)


@pytest.mark.parametrize("rounding", ["double", "single"])
def test_c_requantize_matches_numpy(quant_lib, rounding):
    rng = np.random.default_rng(7)
    for real in [1e-5, 0.0031, 0.27, 0.5, 0.999, 1.7, 37.0]:
        m, s = quant.quantize_multiplier(real)
        lim = int(min(2 ** 26, 2 ** 30 / real))   # results must fit int32, as in a real kernel
        x = rng.integers(-lim, lim, 4096).astype(np.int32)
        x[:4] = [0, 1, -1, lim - 1]
        y = np.zeros_like(x)
        quant_lib.mbqm(_ptr(x), _ptr(y), len(x), m, s, int(rounding == "single"))
        assert np.array_equal(y, quant.requantize(x, m, s, rounding)), real


def test_c_add_matches_numpy(quant_lib):
    rng = np.random.default_rng(8)
    for _ in range(20):
        sa, sb, so = rng.uniform(0.001, 0.2, 3)
        za, zb, zo = rng.integers(-128, 128, 3)
        p = quant.add_params(sa, sb, so)
        a = rng.integers(-128, 128, 1024).astype(np.int8)
        b = rng.integers(-128, 128, 1024).astype(np.int8)
        y = np.zeros(1024, np.int8)
        params = np.array([za, p["m1"], p["sh1"], zb, p["m2"], p["sh2"], p["mo"], p["sho"], zo], np.int32)
        quant_lib.qadd(_ptr(a), _ptr(b), _ptr(y), 1024, _ptr(params))
        assert np.array_equal(y, quant.saturate(quant.qadd(a, za, b, zb, zo, p)))
