"""The int16 pre-widened weights of the ``weights: int16`` tuning knob (lower/simd.widen_weights) hold
exactly the halfwords SXTB16 and SXTB16 ROR #8 make of each int8 weight word (Arm ARMv7-M ARM, SXTB16:
bytes 0 and 2 sign-extended into halfwords 0 and 1), so the SMLAD kernels compute the same sums."""
import numpy as np

from tinyfuse.lower.simd import widen_weights


def _sxtb16(word: int, ror8: bool) -> tuple[int, int]:
    """The two halfwords of SXTB16 (optionally ROR #8 first) of a 32-bit word, as signed ints."""
    if ror8:
        word = ((word >> 8) | (word << 24)) & 0xFFFFFFFF
    b0, b2 = word & 0xFF, (word >> 16) & 0xFF
    return tuple(b - 256 if b > 127 else b for b in (b0, b2))


def test_hand_computed_row():
    w = np.array([[1, -2, 3, -4, 127, -128, 0, 5]], dtype=np.int8)
    assert widen_weights(w).tolist() == [[1, 3, -2, -4, 127, 0, -128, 5]]
    assert widen_weights(w).dtype == np.int16


def test_words_equal_sxtb16_of_the_int8_words():
    rng = np.random.default_rng(0)
    w = rng.integers(-128, 128, size=(5, 24), dtype=np.int8)
    halves = widen_weights(w).reshape(5, 6, 2, 2)          # per group of 4 taps: word lo, word hi
    for o in range(5):
        for q in range(6):
            word = int(w[o, 4 * q:4 * q + 4].view(np.uint32)[0])   # little-endian, as LDR reads it
            assert tuple(halves[o, q, 0]) == _sxtb16(word, False)
            assert tuple(halves[o, q, 1]) == _sxtb16(word, True)
