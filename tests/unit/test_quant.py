"""The int8 arithmetic: compiler/quant.py (numpy) against hand-computed values. (The C header
runtime_c/include/tinyfuse/quant.h against compiler/quant.py, with gcc: tests/c/test_quant_header.py.)"""

import numpy as np

from tinyfuse import quant


def test_quantize_multiplier_hand_values():
    assert quant.quantize_multiplier(0.5) == (1 << 30, 0)
    assert quant.quantize_multiplier(1.0) == (1 << 30, 1)
    assert quant.quantize_multiplier(0.75) == (round(0.75 * 2 ** 31), 0)
    # q just below 1 rounds to 2^31: halve it and bump the shift
    assert quant.quantize_multiplier(1 - 2 ** -40) == (1 << 30, 1)
    assert quant.quantize_multiplier(0.0) == (0, 0)


def test_mbqm_hand_values():
    m, s = quant.quantize_multiplier(0.5)
    # SaturatingRoundingDoublingHighMul's nudge rounds +1.5 → 2 but -1.5 → -1 and -2.5 → -2 (TFLM)
    assert quant.mbqm(np.array([3, -3, 4, -5]), m, s).tolist() == [2, -1, 2, -2]
    m, s = quant.quantize_multiplier(0.25)
    assert quant.mbqm(np.array([6, -6, 2, -2]), m, s).tolist() == [2, -2, 1, -1]


def test_round_half_away():
    assert quant.round_half_away([0.5, 1.5, -0.5, -2.5, 2.4]).tolist() == [1, 2, -1, -3, 2]


def test_activation_range():
    # relu6 with scale 6/255 zp -128: Q(0) = -128, Q(6) = -128 + 255 = 127
    assert quant.activation_range([(0.0, 6.0)], 6 / 255, -128) == (-128, 127)
    assert quant.activation_range([(0.0, None)], 0.1, 5) == (5, 127)
