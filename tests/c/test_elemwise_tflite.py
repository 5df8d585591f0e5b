"""The element-wise TFLite builtins (frontend/tflite/math.py, logic.py) against TensorFlow Lite Micro:
compiled → C → gcc → run, and the numpy interpreter on the frontend's IR, both byte for byte with TFLM's
outputs in every type TFLM's kernel takes (float32 outputs too: both sides run the same IEEE operations
and libm functions on the host). The int8 kernels are checked on every input value (256) or every input
pair (65,536) for several quantizations; int8 DIV outside the pairs where TFLM's shift is undefined."""
from __future__ import annotations

import numpy as np
import pytest

from tests.builders.tflm_cases import tflm_oneop
from tests.builders.tflm_twin_models import Net
from tests.conftest import compile_and_run

RNG = np.random.default_rng(7)
ALL = np.arange(-128, 128, dtype=np.int8).reshape(1, 16, 16)
PAIRS = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128), indexing="ij")
A_ALL, B_ALL = (p.astype(np.int8).reshape(1, 256, 256) for p in PAIRS)


def twin(tmp_path, model: bytes, inputs: list, masks=None) -> list[np.ndarray]:
    """TFLM's outputs, asserting tinyfuse's C gives the same bytes (outside ``masks``), and its interpreter too
    but for float32 outputs, computed in float64 and rounded: within 2 float32 ULP there."""
    from tinyfuse.frontend.tflite.reader import from_tflite
    from tinyfuse.ir.interpreter import run_module
    want = tflm_oneop().run(model, inputs)
    got, _ = compile_and_run(model, inputs, tmp_path)
    interp = run_module(from_tflite(model), inputs)
    for i, w in enumerate(want):
        keep = ~masks[i] if masks is not None else np.ones(w.shape, bool)
        if w.dtype == np.float32:
            np.testing.assert_array_max_ulp(np.asarray(interp[i]), w, maxulp=2)
        for what, g in (("C", got[i]), ("interpreter", interp[i]))[:1 if w.dtype == np.float32 else 2]:
            g = np.asarray(g)
            assert g.dtype == w.dtype and g.shape == w.shape, (what, g.dtype, g.shape, w.dtype, w.shape)
            bad = (g.view(np.uint8 if g.dtype.itemsize == 1 else f"u{g.dtype.itemsize}") !=
                   w.view(np.uint8 if w.dtype.itemsize == 1 else f"u{w.dtype.itemsize}")) & keep
            assert not bad.any(), f"output {i} ({what}): {bad.sum()} of {bad.size} differ, first at " \
                                  f"{np.argwhere(bad)[0].tolist()}: {g[bad][0]} vs TFLM {w[bad][0]}"
    return want


def unary_model(op: str, shape, dtype="float32", in_q=None, out_q=None, out_dtype=None, options=None, **fields):
    net = Net()
    x = net.input(shape, in_q, dtype)
    y = net.op(op, [x], net.act(shape, out_q, "y", out_dtype or dtype), options, **fields)
    return net.build([y])


# ----------------------------------------------------------------------------------------- float32

FLOAT_UNARY = ["ABS", "CEIL", "FLOOR", "ROUND", "EXP", "LOG", "SIN", "COS", "SQRT", "RSQRT", "SQUARE", "NEG", "ELU"]


@pytest.mark.parametrize("op", FLOAT_UNARY)
def test_float_unary(tmp_path, op):
    x = (RNG.standard_normal((2, 5, 7)) * 4).astype(np.float32)
    x.reshape(-1)[:8] = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.0, -0.25]       # ROUND's ties, ±0
    if op in ("LOG", "SQRT", "RSQRT"):
        x = np.abs(x) + np.float32(1e-3)
    twin(tmp_path, unary_model(op, x.shape), [x])


def binary_model(op, a_shape, b_shape, dtype="float32", a_q=None, b_q=None, out_q=None, out_dtype=None,
                 options=None, **fields):
    net = Net()
    a, b = net.input(a_shape, a_q, dtype), net.input(b_shape, b_q, dtype)
    out_shape = np.broadcast_shapes(a_shape, b_shape)
    y = net.op(op, [a, b], net.act(out_shape, out_q, "y", out_dtype or dtype), options, **fields)
    return net.build([y])


@pytest.mark.parametrize("op,options,act", [("MAXIMUM", None, 0), ("MINIMUM", None, 0), ("FLOOR_DIV", None, 0),
                                            ("FLOOR_MOD", None, 0), ("DIV", "DivOptions", 1),
                                            ("DIV", "DivOptions", 3), ("SQUARED_DIFFERENCE", None, 0)])
def test_float_binary_broadcast(tmp_path, op, options, act):
    a = (RNG.standard_normal((2, 3, 4)) * 5).astype(np.float32)
    b = (RNG.standard_normal((3, 1)) * 3).astype(np.float32)
    b[b == 0] = 1.0
    fields = {"fusedActivationFunction": act} if options else {}
    twin(tmp_path, binary_model(op, a.shape, b.shape, options=options, **fields), [a, b])


COMPARE = ["EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL"]


def compare_model(shape_a, shape_b, dtype, qa=None, qb=None, ops=COMPARE):
    """One model with every comparison of the same two inputs (one bool output each)."""
    net = Net()
    a, b = net.input(shape_a, qa, dtype), net.input(shape_b, qb, dtype)
    out = np.broadcast_shapes(shape_a, shape_b)
    ys = [net.op(op, [a, b], net.act(out, None, "y", "bool")) for op in ops]
    return net.build(ys)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_comparisons(tmp_path, dtype):
    a = RNG.integers(-3, 4, (2, 3, 4)).astype(dtype)
    b = RNG.integers(-3, 4, (1, 4)).astype(dtype)
    twin(tmp_path, compare_model(a.shape, b.shape, dtype), [a, b])


def test_bool_ops(tmp_path):
    """LOGICAL_AND / OR / NOT, EQUAL and NOT_EQUAL of bools, SELECT_V2 on a computed condition, CAST of bool."""
    a, b = RNG.random((3, 4)) < 0.5, RNG.random((1, 4)) < 0.5
    x, z = RNG.standard_normal((3, 4)).astype(np.float32), RNG.standard_normal((4,)).astype(np.float32)
    net = Net()
    ta, tb, tx, tz = net.input(a.shape, None, "bool"), net.input(b.shape, None, "bool"), net.input(x.shape), \
        net.input(z.shape)
    ys = [net.op(op, [ta, tb], net.act((3, 4), None, "y", "bool")) for op in ("LOGICAL_AND", "LOGICAL_OR",
                                                                                "EQUAL", "NOT_EQUAL")]
    ys.append(net.op("LOGICAL_NOT", [ta], net.act((3, 4), None, "y", "bool")))
    ys.append(net.op("SELECT_V2", [ys[0], tx, tz], net.act((3, 4))))
    ys += [net.op("CAST", [ta], net.act((3, 4), None, "y", t)) for t in ("float32", "int8", "int32")]
    twin(tmp_path, net.build(ys), [a, b, x, z])


def test_int32_ops(tmp_path):
    """MAXIMUM, MINIMUM, DIV (truncating, fused RELU), SQUARED_DIFFERENCE (wrapping) on int32, CASTs from it."""
    a = RNG.integers(-2 ** 31, 2 ** 31, (4, 5), dtype=np.int64).astype(np.int32)
    b = RNG.integers(-9, 10, (4, 5)).astype(np.int32)
    b[(b == 0) | (b == -1)] = 3
    net = Net()
    ta, tb = net.input(a.shape, None, "int32"), net.input(b.shape, None, "int32")
    ys = [net.op(op, [ta, tb], net.act(a.shape, None, "y", "int32")) for op in ("MAXIMUM", "MINIMUM",
                                                                               "SQUARED_DIFFERENCE")]
    ys.append(net.op("DIV", [ta, tb], net.act(a.shape, None, "y", "int32"), "DivOptions", fusedActivationFunction=1))
    ys += [net.op("CAST", [tb], net.act(a.shape, None, "y", t)) for t in ("float32", "int8")]
    twin(tmp_path, net.build(ys), [a, b])


def test_add_n_and_cast_float(tmp_path):
    xs = [RNG.standard_normal((2, 3, 5)).astype(np.float32) * 2 ** k for k in range(4)]
    net = Net()
    ts = [net.input(x.shape) for x in xs]
    ys = [net.op("ADD_N", ts, net.act(xs[0].shape))]
    ys += [net.op("CAST", [ts[0]], net.act(xs[0].shape, None, "y", t)) for t in ("int8", "int32")]
    twin(tmp_path, net.build(ys), xs)


def test_face_mesh_prelu_as_mul_and_maximum(tmp_path):
    """MediaPipe's PReLU written as MAXIMUM(x, MUL(x, alpha)) (0 < alpha < 1), float32."""
    x = RNG.standard_normal((1, 6, 6, 4)).astype(np.float32)
    net = Net()
    tx = net.input(x.shape)
    m = net.op("MUL", [tx, net.const(np.array([0.1, 0.2, 0.05, 0.7], np.float32))], net.act(x.shape), "MulOptions")
    y = net.op("MAXIMUM", [tx, m], net.act(x.shape))
    want = twin(tmp_path, net.build([y]), [x])
    np.testing.assert_allclose(want[0], np.where(x > 0, x, x * np.array([0.1, 0.2, 0.05, 0.7], np.float32)))


# ----------------------------------------------------------------------------------------- int8

@pytest.mark.parametrize("op,in_q,out_q", [
    ("ABS", (0.05, 3), (0.05, -100)), ("ABS", (0.05, -128), (0.02, -128)), ("ABS", (0.3, 127), (0.7, 0)),
    ("RSQRT", (0.05, -20), (0.02, -100)), ("RSQRT", (0.5, -128), (0.004, -128)), ("RSQRT", (0.01, 0), (0.1, 3)),
    ("ELU", (0.05, 3), (0.04, 20)), ("ELU", (0.2, 127), (0.1, 0)), ("ELU", (0.01, -128), (0.03, -50))])
def test_int8_unary_tables_every_value(tmp_path, op, in_q, out_q):
    """TFLM's int8 ABS / RSQRT (integer) and ELU (float32 table) on all 256 input values (RSQRT: from the
    zero point on; below it TFLM's Invoke fails)."""
    x = ALL if op != "RSQRT" else np.maximum(ALL, np.int8(in_q[1]))
    twin(tmp_path, unary_model(op, x.shape, "int8", in_q, out_q), [x])


def test_int8_comparisons_every_pair(tmp_path):
    """The six int8 comparisons rescale both operands (comparisons.cc): different scales, all 65,536 pairs."""
    twin(tmp_path, compare_model(A_ALL.shape, B_ALL.shape, "int8", (0.05, 3), (0.0371, -17)), [A_ALL, B_ALL])


@pytest.mark.parametrize("qa,qb,qo", [((0.05, 3), (0.02, -7), (0.01, -128)), ((0.1, -128), (0.1, 127), (2.0, 5)),
                                      ((0.003, 0), (0.5, 10), (0.001, -30))])
def test_int8_squared_difference_every_pair(tmp_path, qa, qb, qo):
    twin(tmp_path, binary_model("SQUARED_DIFFERENCE", A_ALL.shape, B_ALL.shape, "int8", qa, qb, qo), [A_ALL, B_ALL])


@pytest.mark.parametrize("qa,qb,qo", [((0.05, 3), (0.05, 4), (0.05, -2)), ((0.1, 0), (0.02, -7), (0.5, -2)),
                                      ((0.3, 5), (0.01, 0), (0.9, -2)), ((0.02, -128), (0.3, 127), (0.01, 1))])
def test_int8_div_every_pair(tmp_path, qa, qb, qo):
    """TFLM's int8 DIV on all pairs but the divisor's zero point, compared where TFLM's final
    RoundingDivideByPOT exponent is at most 31 (beyond, its C++ shift is undefined)."""
    from tests.fuzz.twin_draw_elem import _div_undefined
    b = np.where(B_ALL == qb[1], np.int8(qb[1] - 1 if qb[1] > -128 else qb[1] + 1), B_ALL).astype(np.int8)
    masks = [_div_undefined(A_ALL, b, qa, qb, qo)]
    assert masks[0].mean() < 0.05
    twin(tmp_path, binary_model("DIV", A_ALL.shape, b.shape, "int8", qa, qb, qo, options="DivOptions",
                                fusedActivationFunction=0), [A_ALL, b], masks)


def test_int8_add_n_maximum_select_cast_zeros(tmp_path):
    """ADD_N (TFLM's sum includes one extra −z term), MAXIMUM / MINIMUM / SELECT_V2 on the stored bytes,
    CAST of int8 values, ZEROS_LIKE (the stored 0) feeding a MAXIMUM."""
    q = (0.05, 13)
    xs = [RNG.integers(-128, 128, (3, 4, 5)).astype(np.int8) for _ in range(3)]
    c = RNG.random((4, 5)) < 0.5
    net = Net()
    ts = [net.input(x.shape, q) for x in xs]
    tc = net.input(c.shape, None, "bool")
    ys = [net.op("ADD_N", ts, net.act(xs[0].shape, (0.11, -9)))]
    ys += [net.op(op, ts[:2], net.act(xs[0].shape, (0.2, 1))) for op in ("MAXIMUM", "MINIMUM")]
    ys.append(net.op("SELECT_V2", [tc, ts[0], ts[1]], net.act(xs[0].shape, q)))
    ys += [net.op("CAST", [ts[2]], net.act(xs[0].shape, None, "y", t)) for t in ("float32", "int32")]
    z = net.op("ZEROS_LIKE", [ts[0]], net.act(xs[0].shape, q))
    ys.append(net.op("MAXIMUM", [ts[1], z], net.act(xs[0].shape, q)))
    want = twin(tmp_path, net.build(ys), [*xs, c])
    np.testing.assert_array_equal(want[-1], np.maximum(xs[1], 0))


# ----------------------------------------------------------------------------------------- int16

@pytest.mark.parametrize("q", [None, (0.0007, 0)])
def test_int16_select_v2_copies_stored_values(tmp_path, q):
    """SELECT_V2 of int16 (raw, or quantized with another output scale: TFLM copies the stored values)."""
    c = RNG.random((3, 1, 5)) < 0.5
    x = RNG.integers(-32768, 32768, (3, 4, 5)).astype(np.int16)
    y = RNG.integers(-32768, 32768, (4, 1)).astype(np.int16)
    net = Net()
    tc, tx, ty = net.input(c.shape, None, "bool"), net.input(x.shape, q, "int16"), net.input(y.shape, q, "int16")
    out = net.op("SELECT_V2", [tc, tx, ty], net.act(x.shape, q and (0.003, 0), "y", "int16"))
    want = twin(tmp_path, net.build([out]), [c, x, y])
    np.testing.assert_array_equal(want[0], np.where(c, x, y))


def test_zeros_like_model_output_equals_tflm(tmp_path):
    """ZEROS_LIKE as the model output: its value folds to a constant, written by the copy kernel a
    constant model output gets (was refused); TFLM's zeros as the oracle."""
    want = twin(tmp_path, unary_model("ZEROS_LIKE", (2, 3)), [RNG.standard_normal((2, 3)).astype(np.float32)])
    np.testing.assert_array_equal(want[0], np.zeros((2, 3), np.float32))


# ----------------------------------------------------------------------------------------- refusals

@pytest.mark.parametrize("model,message", [
    (lambda: unary_model("SIN", (2, 3), "int8", (0.1, 0), (0.1, 0)), r"SIN v1.*element type int8"),
    (lambda: unary_model("ABS", (2, 3), "int16"), r"ABS v1.*element type int16"),
    (lambda: compare_model((2, 3), (2, 3), "int8", (1.5, 0), (0.5, 0), ["LESS"]), r"LESS v1.*scale >= 1"),
    (lambda: unary_model("LOGISTIC", (2, 3), "int16"), r"LOGISTIC v1.*int16 tensor .* has no quantization"),
])
def test_refusals_are_one_line(model, message):
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import TinyfuseError
    with pytest.raises(TinyfuseError, match=message) as e:
        compile_model(model())
    assert "\n" not in str(e.value)
