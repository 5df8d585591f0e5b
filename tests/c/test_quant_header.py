"""The C header runtime_c/include/tinyfuse/quant.h (built with gcc as a shared library) against
compiler/quant.py on random inputs: requantization (both roundings) and the int8 add."""
import ctypes
import subprocess

import numpy as np
import pytest

from tinyfuse import quant
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def quant_lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("q")
    src = d / "q.c"
    src.write_text("""
#include "tinyfuse/quant.h"
void mbqm(const int32_t *x, int32_t *y, int n, int32_t m, int32_t s, int single) {
  for (int i = 0; i < n; ++i) y[i] = single ? tf_mbqm_single(x[i], m, s) : tf_mbqm(x[i], m, s);
}
void qadd(const int8_t *a, const int8_t *b, int8_t *y, int n, const int32_t *p) {
  for (int i = 0; i < n; ++i)
    y[i] = tf_sat_i8(tf_qadd(a[i], p[0], p[1], p[2], b[i], p[3], p[4], p[5], p[6], p[7], p[8]));
}
""")
    so = d / "q.so"
    subprocess.run(["gcc", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                    f"-I{ROOT / 'runtime_c' / 'include'}", str(src), "-o", str(so)], check=True)
    return ctypes.CDLL(str(so))


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
