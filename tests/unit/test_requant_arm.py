"""The short requantize of requant_arm.h (numpy twin ``lower.requant_arm.rq2``) equals TFLM's
MultiplyByQuantizedMultiplier (``quant.mbqm``, double rounding) + zero point bit for bit: exhaustively
over every accumulator |acc| < 2^18 (a 3x3 depthwise sum is at most 9 * 128 * 127 < 2^18 before the
bias) for multipliers at the edges of [2^30, 2^31), a power of two (m = 2^30, where acc = -1 gives
x = 0), 0 and random ones, every right shift 1..12 and three zero points; then at the int32 limits
short_requant admits."""
import numpy as np
import pytest

from tinyfuse import quant
from tinyfuse.lower.requant_arm import I32, rq2

ACC = np.arange(-(1 << 18), 1 << 18, dtype=np.int64)
MULTS = [0, 1 << 30, (1 << 30) + 1, I32 - 1, 1518500250, 1431655765] + \
    [int(m) for m in np.random.default_rng(18).integers(1 << 30, I32, 3)]


@pytest.mark.parametrize("m", MULTS)
def test_rq2_equals_mbqm_over_every_depthwise_accumulator(m):
    for e in range(1, 13):
        want0 = quant.mbqm(ACC, m, -e)
        for zp in (-128, 0, 127):
            want = want0 + zp
            got = rq2(ACC, m, e, zp)
            bad = np.flatnonzero(got != want)
            assert bad.size == 0, f"m={m} e={e} zp={zp}: acc={ACC[bad[:5]]} got {got[bad[:5]]} want {want[bad[:5]]}"


def test_rq2_at_the_admitted_int32_limits():
    rng = np.random.default_rng(1)
    acc = np.concatenate([np.arange(-(1 << 30) + 1, -(1 << 30) + 4000), np.arange((1 << 30) - 4000, 1 << 30),
                          rng.integers(-(1 << 30) + 1, 1 << 30, 50_000)]).astype(np.int64)
    for m in MULTS:
        for e in (1, 2, 7, 20, 30):
            want = quant.mbqm(acc, m, -e)
            assert np.array_equal(rq2(acc, m, e, 0), want), (m, e)
