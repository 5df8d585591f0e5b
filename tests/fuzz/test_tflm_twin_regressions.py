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
