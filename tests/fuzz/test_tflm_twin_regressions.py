"""Every failure the TFLM twin fuzzer (tests/fuzz/tflm_twin.py) found, as a hand-built model of its
smallest form, through the whole compile → C → gcc → run path against TFLM and, where the rule is short,
hand-computed values. The seed in a name is the fuzzer seed that first showed it; the docstring says what
was wrong and where it was fixed."""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_cases import tflm_oneop
from tests.builders.tflm_twin_models import Net
from tests.conftest import compile_and_run


def _float_quantize(shape, q) -> bytes:
    net = Net()
    y = net.op("QUANTIZE", [net.input(shape, None)], net.act(shape, q))
    return net.build([y])


def test_seed18_float_quantize_rounds_ties_away_from_zero(tmp_path):
    """QUANTIZE float32 → int8 rounded x / scale half to even (ONNX's rule); TFLM's AffineQuantize
    rounds half away from zero (TfLiteRound), so every tie came out one step off (seed 18: 1 of 36,
    -112 vs -113). Fixed: qnn.quantize has ``rounding``; the TFLite converter asks "half_away"."""
    q = (0.25, -3)
    x = (np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 40.5, -31.5]) * 0.25).astype(np.float32).reshape(1, 8)
    model = _float_quantize(x.shape, q)
    want = np.array([[-6, -5, -4, -2, -1, 0, 38, -35]], np.int8)     # round half away, + zero point -3
    np.testing.assert_array_equal(tflm_oneop().run(model, [x])[0], want)
    (got,), _ = compile_and_run(model, [x], tmp_path)
    np.testing.assert_array_equal(got, want)


def _gather(x_shape, indices, axis, out_shape) -> bytes:
    q = (0.01, -90)
    net = Net()
    y = net.op("GATHER", [net.input(x_shape, q), net.const(np.array(indices, np.int32))], net.act(out_shape, q),
               "GatherOptions", axis=axis)
    return net.build([y])


def test_seed1220_gather_output_shape_is_checked(tmp_path):
    """GATHER reshaped its result to the output tensor's declared shape, so a model declaring [5] for
    x [5, 1], indices [1], axis 1 (TFLM computes [5, 1]) compiled to a different output shape (seed
    1220; the fuzzer meant scalar indices, which the model editor writes as shape [1]). Fixed in
    frontend/tflite_ops_misc.py: the computed shape is checked against the declared one (one-line
    error); the consistent model equals TFLM."""
    import pytest
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import TinyfuseError
    x = np.arange(-2, 3, dtype=np.int8).reshape(5, 1)
    with pytest.raises(TinyfuseError, match=r"computes \[5, 1\] int8 for output"):
        compile_model(_gather((5, 1), [0], 1, (5,)))
    model = _gather((5, 1), [0], 1, (5, 1))
    want = tflm_oneop().run(model, [x])[0]
    (got,), _ = compile_and_run(model, [x], tmp_path)
    np.testing.assert_array_equal(want, x)
    np.testing.assert_array_equal(got, want)


def test_seed1309_relu6_where_six_is_beyond_int8(tmp_path):
    """RELU6 int8 whose 6.0 quantizes above 127 (scale 0.0139, zero point 114: 114 + 430) was refused
    ("6.0 is outside the int8 range"); TFLM saturates it (FloatToQuantizedType) and clamps to
    [zero point, 127]. Fixed in frontend/tflite_ops.py convert_relu."""
    for q in ((0.013949704356491566, 114), (0.01, -100)):
        net = Net()
        x = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
        y = net.op("RELU6", [net.input(x.shape, q)], net.act(x.shape, q))
        model = net.build([y])
        want = np.clip(x, q[1], 127).astype(np.int8)
        np.testing.assert_array_equal(tflm_oneop().run(model, [x])[0], want)
        (got,), _ = compile_and_run(model, [x], tmp_path)
        np.testing.assert_array_equal(got, want)
