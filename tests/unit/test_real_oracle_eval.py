"""The real-arithmetic evaluator of harness/real_oracle.py against values computed by hand: one
2x2 conv with a bias and a requantize by a real multiplier, where the fixed-point kernel and real
arithmetic differ; a two-stage kernel whose interior stage is checked; a missing fact."""
from __future__ import annotations

import numpy as np
import pytest

import tinyfuse.ops  # noqa: F401  (fills the op registry)
from tinyfuse.harness.real_oracle import MissingRealFacts, evaluate_real
from tinyfuse.ir import Constant, Function, Var, call
from tinyfuse.ir.types import TensorType
from tinyfuse.quant import quantize_multiplier

X = np.array([[[[10, -3, 7], [0, 5, -8], [2, 4, 1]]]], np.int8)      # [1, 1, 3, 3]
W = np.array([[[[1, 2], [3, -1]]]], np.int8)                         # [1, 1, 2, 2]
ZP_X, BIAS, ZP_OUT = -2, 3, 5


def conv_kernel(real: float, with_fact: bool = True) -> Function:
    x = Var("x", TensorType((1, 1, 3, 3), "int8"))
    acc = call("qnn.conv2d", x, Constant(W), input_zero_point=ZP_X, strides=(1, 1), padding=(0, 0, 0, 0),
               dilation=(1, 1), groups=1)
    acc = call("add", acc, Constant(np.full((1, 1, 1, 1), BIAS, np.int32)))
    m, sh = quantize_multiplier(real)
    y = call("qnn.requantize", acc, Constant(np.array(m, np.int32)), Constant(np.array(sh, np.int32)),
             output_zero_point=ZP_OUT, real_multiplier=(real,) if with_fact else None)
    return Function((x,), call("clip", y, a_min=-128, a_max=127))


def by_hand() -> np.ndarray:
    """acc[i, j] = Σ (x − zp_x)·w + bias over each 2x2 window, written out."""
    d = X[0, 0].astype(int) - ZP_X           # [[12, -1, 9], [2, 7, -6], [4, 6, 3]]
    acc = np.array([[d[0, 0] * 1 + d[0, 1] * 2 + d[1, 0] * 3 + d[1, 1] * -1 + BIAS,
                     d[0, 1] * 1 + d[0, 2] * 2 + d[1, 1] * 3 + d[1, 2] * -1 + BIAS],
                    [d[1, 0] * 1 + d[1, 1] * 2 + d[2, 0] * 3 + d[2, 1] * -1 + BIAS,
                     d[1, 1] * 1 + d[1, 2] * 2 + d[2, 1] * 3 + d[2, 2] * -1 + BIAS]])
    assert acc.tolist() == [[12, 47], [25, 13]]
    return acc


def test_one_conv_by_hand():
    """M = 0.1: real values 1.2, 4.7, 2.5, 1.3 (+5). Half to even (ONNX) takes the tie 2.5 → 2, half
    away (TFLite) → 3."""
    assert by_hand().tolist() == [[12, 47], [25, 13]]
    got, interior = evaluate_real(conv_kernel(0.1), [X], "half_even")
    assert got.tolist() == [[[[6, 10], [7, 6]]]] and interior == 1     # the Q31 stage rounds the tie up
    got, interior = evaluate_real(conv_kernel(0.1), [X], "half_away")
    assert got.tolist() == [[[[6, 10], [8, 6]]]] and interior == 0


def test_the_real_multiplier_not_the_q31_pair_decides():
    """A Q31 pair that encodes 0.2 while the real fact says 0.1: the real value follows the fact
    (acc 47 · 0.1 = 4.7, not 9.4)."""
    f = conv_kernel(0.1)
    req = f.body.args[0]
    m, sh = quantize_multiplier(0.2)
    wrong = call("qnn.requantize", req.args[0], Constant(np.array(m, np.int32)), Constant(np.array(sh, np.int32)),
                 output_zero_point=ZP_OUT, real_multiplier=(0.1,))
    got, interior = evaluate_real(Function(f.params, call("clip", wrong, a_min=-128, a_max=127)), [X], "half_away")
    assert got.tolist() == [[[[6, 10], [8, 6]]]]
    # the fixed-point stage by 0.2 (double rounding: 12·0.8 = 9.6 → 10, 10 / 4 = 2.5 → 3; 47 → 37.6 → 38
    # → 9.5 → 10): 3, 10, 5, 3 against the real 1, 5, 3, 1
    assert interior == 5


def test_interior_stage_uses_the_fixed_point_value_and_is_checked():
    """A second requantize by 2 after the first: the last stage is real on the first stage's
    fixed-point output (6, 10, 8, 6: Q31 0.1 is a hair above 0.1, so the tie 2.5 goes up), so
    2·(q − 5) + 0; with half to even the interior stage is 1 LSB from real (7 vs 8)."""
    f = conv_kernel(0.1)
    m, sh = quantize_multiplier(2.0)
    y = call("qnn.requantize", f.body, Constant(np.array(m, np.int32)), Constant(np.array(sh, np.int32)),
             input_zero_point=ZP_OUT, real_multiplier=(2.0,))
    got, interior = evaluate_real(Function(f.params, y), [X], "half_even")
    assert got.tolist() == [[[[2, 10], [6, 2]]]] and interior == 1


def test_a_requantize_without_its_real_multiplier_cannot_be_checked():
    with pytest.raises(MissingRealFacts, match="real_multiplier"):
        evaluate_real(conv_kernel(0.1, with_fact=False), [X], "half_even")


def test_a_lut_is_checked_against_its_float_function_not_its_table():
    """A sigmoid table (input scale 0.1, output 1/256, −128) off by 2 everywhere: the real value is
    round(256·sigmoid(0.1·x)) − 128: 0 at x = 0, 127 (saturated from 128) at 127, −128 at −128,
    and the table's stage is 2 LSB from it."""
    x = Var("x", TensorType((3,), "int8"))
    q = np.arange(-128, 128)
    table = np.clip(np.rint(256 / (1 + np.exp(-0.1 * q))) - 128 + 2, -128, 127).astype(np.int8)
    lut = call("qnn.lut", x, table=table, real_fn=("sigmoid", (), 0.1, 0, 1 / 256, -128))
    got, interior = evaluate_real(Function((x,), lut), [np.array([0, 127, -128], np.int8)], "half_away")
    assert got.tolist() == [0, 127, -128] and interior == 2
