"""int8 softmax with an output quantization other than TFLM's (1/256, -128) (issue 14).

onnxruntime's quantizer gives Softmax an output scale of 1/255. tinyfuse computes it in integers
only (quant.softmax_int8_table, codegen_templates/softmax/ref_int8.c.j2): 256-entry exp tables per
scale, a 64-bit sum, an exact division rounding half to even. The oracle here is independent: the
ONNX definition in float64, y = QuantizeLinear(Softmax(DequantizeLinear(x))), i.e.
rint(exp(r − max r) / Σ exp(r − max r) / s_out) + z_out saturated, rint = half to even as ONNX
QuantizeLinear specifies. Both the numpy twin and the generated C must equal it exactly, for
1/255 and other scales, rows of 1..1000 elements, random and adversarial rows (all equal, one max,
the rest at −128, exact halves).
"""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse import quant
import tinyfuse.ops  # noqa: F401  (registers the ops)
from tinyfuse.ir.op import get_op
from tests.builders import qdq as qb
from tests.conftest import compile_and_run

OUT_QS = ((1 / 255, -128), (1 / 128, 0), (0.0041, -120), (1 / 256, 0), (0.02, -128), (1 / 1024, -128))
IN_SCALES = (0.005, 0.0371, 0.1, 0.5, 2.0)
LENGTHS = (1, 2, 3, 7, 64, 255, 256, 1000)


def reference(x, in_q, out_q):
    """ONNX DequantizeLinear → Softmax(axis=-1) → QuantizeLinear in float64 (scales as float32)."""
    r = (x.astype(np.float64) - in_q[1]) * np.float64(np.float32(in_q[0]))
    e = np.exp(r - r.max(-1, keepdims=True))
    q = np.rint(e / e.sum(-1, keepdims=True) / np.float64(np.float32(out_q[0])))
    return np.clip(q + out_q[1], -128, 127).astype(np.int8)


def rows(n: int, rng) -> np.ndarray:
    """Random rows of length n and the adversarial ones: all equal, one max over −128, two maxima,
    the full int8 range, a narrow spread."""
    out = [rng.integers(-128, 128, n), np.full(n, 17), np.full(n, -128), np.full(n, -128), np.full(n, -128),
           np.arange(n) % 256 - 128, rng.integers(-3, 4, n) + 40]
    out[3][rng.integers(0, n)] = 127
    out[4][[0, n - 1]] = 127
    return np.clip(np.stack(out), -128, 127).astype(np.int8)


def _report(got, want) -> str:
    idx = np.argwhere(got != want)
    return f"{len(idx)} of {got.size} differ, first at {idx[:3].tolist()}"


def test_numpy_twin_exact_vs_float64():
    op, rng, bad, checked = get_op("qnn.softmax"), np.random.default_rng(255), [], 0
    for out_q in OUT_QS:
        for s_in in IN_SCALES:
            for n in LENGTHS:
                in_q = (s_in, int(rng.integers(-128, 128)))
                x = rows(n, rng)
                assert not quant.softmax_is_fixed_point(s_in, *out_q)
                got = op.compute(x, axis=-1, in_scale=in_q[0], in_zero_point=in_q[1],
                                 out_scale=out_q[0], out_zero_point=out_q[1])
                want = reference(x, in_q, out_q)
                checked += x.size
                if not np.array_equal(got, want):
                    bad.append(f"out_q={out_q} in_q={in_q} n={n}: {_report(got, want)}")
    assert checked > 300_000 and not bad, "\n".join(bad)


def test_exact_half_rounds_to_even():
    """n equal elements give p/s_out = 1/(n·s_out) exactly: 0.5 for (1/128, 256) and (1/64, 128) → 0
    (ONNX half to even), 1 for (1/64, 64), 0.25 for (1/128, 512) → 0."""
    op = get_op("qnn.softmax")
    for out_s, n, want in ((1 / 128, 256, 0), (1 / 64, 128, 0), (1 / 64, 64, 1), (1 / 128, 512, 0)):
        x = np.full((1, n), 5, np.int8)
        got = op.compute(x, axis=-1, in_scale=0.1, in_zero_point=0, out_scale=out_s, out_zero_point=0)
        assert (got == want).all() and (reference(x, (0.1, 0), (out_s, 0)) == want).all()


def test_axis_not_last():
    op, rng = get_op("qnn.softmax"), np.random.default_rng(3)
    x = rng.integers(-128, 128, (2, 33, 5)).astype(np.int8)
    got = op.compute(x, axis=1, in_scale=0.07, in_zero_point=3, out_scale=1 / 255, out_zero_point=-128)
    want = np.moveaxis(reference(np.moveaxis(x, 1, -1), (0.07, 3), (1 / 255, -128)), -1, 1)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n,out_q,s_in", [(1000, (1 / 255, -128), 0.0371), (10, (1 / 255, -128), 0.1),
                                          (256, (1 / 128, 0), 0.005), (64, (0.0041, -120), 0.5),
                                          (1, (1 / 255, -128), 2.0), (300, (1 / 1024, -128), 0.02)])
def test_generated_c_exact_vs_float64(n, out_q, s_in, tmp_path):
    rng = np.random.default_rng(n)
    x = rows(n, rng)
    in_q = (s_in, int(rng.integers(-128, 128)))
    g = qb._Graph()
    y = g.node("Softmax", [g.dq(g.input("x", x.shape), in_q)], "softmax", axis=-1)
    model = g.finish(y, out_q, False, nchw=False)
    (got,), result = compile_and_run(model, [x], tmp_path)
    want = reference(x, in_q, out_q)
    assert got.dtype == np.int8 and np.array_equal(got, want), _report(got, want)
    assert ["qnn.softmax"] in [list(k.ops) for k in result.kernels]
    code = "\n".join(f.read_text() for f in tmp_path.rglob("*.c"))
    assert code and "exp(" not in code and "double" not in code


def test_fixed_point_exps_in_the_arena(tmp_path):
    """TFLM's (1/256, -128) path keeps its row of int32 exps in the kernel's scratch, planned in the
    arena (1000 classes: 4000 bytes), not on the C stack; the C still equals the fixed-point twin."""
    rng = np.random.default_rng(14)
    x = rng.integers(-128, 128, (3, 1000)).astype(np.int8)   # random rows (TFLM rejects 512+ ties)
    in_q = (0.0371, 5)
    model = qb.unary("Softmax", x.shape, in_q)
    (got,), result = compile_and_run(model, [x], tmp_path)
    np.testing.assert_array_equal(got, quant.softmax_int8(x, quant.softmax_params(in_q[0])))
    (step,) = [s for s in result.steps if s.kernel.ops == ["qnn.softmax"]]
    assert step.kernel.scratch_bytes == 4000 and result.arena_bytes >= 2 * x.size + 4000
    code = "\n".join(f.read_text() for f in tmp_path.rglob("*.c"))
    assert "int32_t e[" not in code and "(int32_t *)scratch" in code
