"""int8 softmax bit-exact with TensorFlow Lite Micro's fixed-point SOFTMAX kernel.

TFLM (micro/kernels/softmax_common.cc + kernels/internal/reference/softmax.h) computes the int8
softmax in fixed point: a Q5.26 scaled difference, gemmlowp's exp_on_negative_values, a Q12.19 sum
and a Newton-Raphson reciprocal. A float softmax rounded to int8 differs from it by one LSB on about
one random model in a hundred (REPRO below), so tinyfuse implements the same integer arithmetic:
compiler/quant.py (softmax_params, softmax_int8; QSoftmax.compute) and runtime_c tinyfuse/quant.h
(codegen_templates/softmax/ref_int8.c.j2).

  (a) the numpy reference equals TFLM on every one of N_CASES seeded one-op models (no gcc);
  (b) the generated C equals TFLM on C_CASES of them (ONNX QDQ twin:
      DequantizeLinear → Softmax(axis=-1) → QuantizeLinear(1/256, -128));
  (c) the C helpers of quant.h equal their numpy twins on many raw fixed-point values;
  (d) an output quantization other than (1/256, -128) takes the integer table path, within half an
      LSB of the real softmax here (exactness vs float64: test_int8_softmax_any_scale.py).
"""
from __future__ import annotations

import functools
import shutil
import subprocess

import numpy as np
import pytest

from tinyfuse import quant
from tinyfuse.codegen.emit import QUANT_SOURCE
import tinyfuse.ops  # noqa: F401  (registers the ops)
from tinyfuse.ir.op import get_op
from tests.builders import qdq as qb
from tests.builders import tflm_oneop
from tests.conftest import compile_and_run, skip_or_fail

N_CASES = 120
C_CASES = (0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89)     # REPRO and ten random ones

# The model that exposed the float softmax: index 10 is 98 in TFLM, 99 in a rounded float softmax.
REPRO = dict(in_q=(0.04094026, -16),
             x=np.array([[-112, -81, -114, -73, -75, -96, -79, 37, -17, 71, 127, -79]], np.int8))


def _case_inputs(i: int) -> dict:
    """Case i: REPRO for 0, else seeded random scale (0.005-0.5, log-uniform), zero point, row
    length (2-40), rows (1-4, sometimes a leading batch dimension) and input distribution."""
    if i == 0:
        return dict(REPRO, beta=1.0)
    rng = np.random.default_rng(7100 + i)
    scale = float(np.float32(np.exp(rng.uniform(np.log(0.005), np.log(0.5)))))
    zp = int(rng.integers(-128, 128))
    length, rows = int(rng.integers(2, 41)), int(rng.integers(1, 5))
    shape = (rows, length) if i % 4 else (2, rows, length)
    style = i % 5
    if style == 0:                                   # anything in int8
        x = rng.integers(-128, 128, shape)
    elif style == 1:                                 # around the zero point (real values near 0)
        x = np.round(zp + rng.normal(0, 30, shape))
    elif style == 2:                                 # a few large logits above a low floor
        x = rng.integers(-128, -60, shape)
        x[..., rng.integers(0, length)] = rng.integers(60, 128)
    elif style == 3:                                 # ties: few distinct values, saturated ends
        x = rng.choice([-128, -20, 0, 5, 127], shape)
    else:                                            # narrow spread: nearly uniform rows
        x = rng.integers(-5, 6, shape) + int(rng.integers(-100, 100))
    return dict(in_q=(scale, zp), x=np.clip(x, -128, 127).astype(np.int8), beta=1.0)


@functools.lru_cache(maxsize=None)
def _case(i: int):
    """(in_q, x, beta, TFLM output) of case i."""
    c = _case_inputs(i)
    oneop = tflm_oneop()
    (want,) = oneop.run(oneop.softmax(c["x"].shape, c["in_q"], beta=c["beta"]), [c["x"]])
    return c["in_q"], c["x"], c["beta"], want


def _report(got, want) -> str:
    d = got.astype(np.int32) - want.astype(np.int32)
    idx = np.argwhere(d)
    return f"{len(idx)} of {d.size} differ, max |d| {np.abs(d).max()}, first at {idx[:3].tolist()}"


# ----------------------------------------------------------------------------- (a) numpy reference
def test_repro_fixed_point():
    in_q, x, _, want = _case(0)
    assert want[0, 10] == 98
    got = quant.softmax_int8(x, quant.softmax_params(in_q[0]))
    np.testing.assert_array_equal(got, want)


def test_numpy_reference_equals_tflm():
    bad = []
    for i in range(N_CASES):
        in_q, x, beta, want = _case(i)
        got = quant.softmax_int8(x, quant.softmax_params(in_q[0], beta))
        assert got.dtype == np.int8 and got.shape == want.shape
        if not np.array_equal(got, want):
            bad.append(f"case {i} in_q={in_q} shape={x.shape}: {_report(got, want)}")
    assert not bad, "\n".join(bad)


def test_numpy_reference_beta_and_extreme_scales():
    """beta != 1 (TFLite's SoftmaxOptions) and scales far outside the random range, where the
    multiplier saturates (scale ≥ 32) or diff_min cuts almost everything."""
    oneop, rng = tflm_oneop(), np.random.default_rng(99)
    bad = []
    for k, (scale, beta) in enumerate([(0.05, 0.3), (0.02, 2.5), (0.1, 0.7), (1.0, 1.0), (4.0, 1.0),
                                       (40.0, 1.0), (0.0005, 1.0), (0.00002, 1.0), (0.3, 1.9)]):
        x = rng.integers(-128, 128, (3, 17)).astype(np.int8)
        x[0] = x[0, 0]                               # one all-equal row
        q = (scale, int(rng.integers(-128, 128)))
        (want,) = oneop.run(oneop.softmax(x.shape, q, beta=beta), [x])
        got = quant.softmax_int8(x, quant.softmax_params(scale, beta))
        if not np.array_equal(got, want):
            bad.append(f"scale={scale} beta={beta}: {_report(got, want)}")
    assert not bad, "\n".join(bad)


def test_qsoftmax_op_any_axis():
    """QSoftmax.compute takes the fixed-point path for (1/256, -128) on any axis."""
    op = get_op("qnn.softmax")
    in_q, x, _, want = _case(6)
    x3 = np.ascontiguousarray(np.moveaxis(x.reshape(-1, 1, x.shape[-1]), -1, 0))   # softmax axis 0
    attrs = dict(in_scale=in_q[0], in_zero_point=in_q[1], out_scale=1 / 256, out_zero_point=-128)
    got = op.compute(x3, axis=0, **attrs)
    np.testing.assert_array_equal(np.moveaxis(got, 0, -1).reshape(want.shape), want)
    np.testing.assert_array_equal(op.compute(x, axis=-1, **attrs), want)


def test_fallback_for_other_output_quantization():
    """No TFLM counterpart: the integer table path, within half an LSB of the real softmax."""
    op = get_op("qnn.softmax")
    for i in (1, 2, 3):
        in_q, x, _, _ = _case(i)
        for out_q in ((1 / 128, 0), (1 / 255, -128), (0.0041, -120)):
            assert not quant.softmax_is_fixed_point(in_q[0], *out_q)
            got = op.compute(x, axis=-1, in_scale=in_q[0], in_zero_point=in_q[1],
                             out_scale=out_q[0], out_zero_point=out_q[1])
            real = np.float64(np.float32(in_q[0])) * (x.astype(np.float64) - in_q[1])
            p = np.exp(real - real.max(-1, keepdims=True))
            p /= p.sum(-1, keepdims=True)
            ref = np.clip(p / np.float64(np.float32(out_q[0])) + out_q[1], -128, 127)
            assert np.abs(got.astype(np.float64) - ref).max() <= 0.5 + 1e-9
    assert quant.softmax_is_fixed_point(0.04, 1 / 256, -128)


# ----------------------------------------------------------------------------- (b) generated C
@pytest.mark.parametrize("i", C_CASES)
def test_generated_c_equals_tflm(i, tmp_path):
    in_q, x, beta, want = _case(i)
    assert beta == 1.0
    model = qb.unary("Softmax", x.shape, in_q)
    (got,), result = compile_and_run(model, [x], tmp_path)
    assert got.dtype == np.int8 and got.shape == want.shape
    assert np.array_equal(got, want), f"case {i} in_q={in_q} shape={x.shape}: {_report(got, want)}"
    kernels = [list(k.ops) for k in result.kernels]
    assert ["qnn.softmax"] in kernels, kernels
    c_files = list(tmp_path.rglob("*.c"))
    assert c_files
    code = "\n".join(f.read_text() for f in c_files)
    assert "tf_exp_on_negative_values(" in code and "exp((double)" not in code


def test_generated_c_fallback(tmp_path):
    """Output (1/128, 0): the integer table path in C equals QSoftmax.compute."""
    in_q, x, _, _ = _case(2)
    out_q = (1 / 128, 0)
    g = qb._Graph()
    y = g.node("Softmax", [g.dq(g.input("x", x.shape), in_q)], "softmax", axis=-1)
    model = g.finish(y, out_q, False, nchw=False)
    (got,), _ = compile_and_run(model, [x], tmp_path)
    want = get_op("qnn.softmax").compute(x, axis=-1, in_scale=in_q[0], in_zero_point=in_q[1],
                                         out_scale=out_q[0], out_zero_point=out_q[1])
    np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------------------- (c) C helpers
_HELPER_MAIN = r"""
#include <stdio.h>
#include "tinyfuse_quant.h"
int main(void)
{
  long v;
  int32_t e;
  while (scanf("%ld", &v) == 1) {
    const int32_t a = (int32_t)v;
    const int32_t r = v > 0 ? tf_softmax_reciprocal(a, &e) : 0;
    printf("%ld %ld %ld %ld\n", (long)(v <= 0 ? tf_exp_on_negative_values(a) : 0),
           (long)(v >= 0 ? tf_one_over_one_plus_x(a) : 0), (long)r, (long)(v > 0 ? e : 0));
  }
  return 0;
}
"""


def test_c_helpers_equal_numpy(tmp_path):
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        skip_or_fail("no C compiler (gcc or cc)")
    (tmp_path / "tinyfuse_quant.h").write_text(QUANT_SOURCE.read_text())
    (tmp_path / "main.c").write_text(_HELPER_MAIN)
    exe = tmp_path / "helpers"
    subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-fsanitize=undefined",
                    "-fno-sanitize-recover=all", "-o", str(exe), str(tmp_path / "main.c")], check=True)
    rng = np.random.default_rng(5)
    neg = np.concatenate([[0, -1, -(1 << 24), -(1 << 26), -(31 << 26), -(1 << 31), -(1 << 31) + 1],
                          -rng.integers(0, 31 << 26, 6000), -rng.integers(0, 1 << 20, 2000)])
    pos = np.concatenate([[1, 2, (1 << 19), (1 << 20) - 1, (1 << 30), (1 << 31) - 1],
                          rng.integers(1, 1 << 31, 6000), rng.integers(1 << 19, 1 << 25, 2000)])
    vals = np.concatenate([neg, pos]).astype(np.int64)
    out = subprocess.run([str(exe)], input="\n".join(map(str, vals)), capture_output=True, text=True,
                         check=True).stdout.split()
    got = np.array(out, np.int64).reshape(-1, 4)
    n = len(neg)
    np.testing.assert_array_equal(got[:n, 0], quant.exp_on_negative_values(neg))
    np.testing.assert_array_equal(got[n:, 1], quant.one_over_one_plus_x(pos))
    # the reciprocal of a sum: 1/(1 + x) of the sum's bits below its leading one
    lz = 32 - np.frexp(pos.astype(np.float64))[1]
    np.testing.assert_array_equal(got[n:, 2], quant.one_over_one_plus_x((pos << lz) - (1 << 31)))
    np.testing.assert_array_equal(got[n:, 3], 12 - lz + 23)
