"""The numpy specification of TFLM's signal library (compiler/ops/fft.py, signal_math.py,
signal_stream.py) against hand-computed values and float64 arithmetic, and the converters' one-line
refusals. (TFLite Micro itself is the oracle of tests/c/test_signal_ops.py.)"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from tinyfuse.errors import TinyfuseError
from tinyfuse.ops import fft
from tinyfuse.ops import signal_math as sm
from tinyfuse.ops.signal_stream import framer_hold
from tinyfuse.resources import runtime_dir


def test_kiss_fft_factors_and_digit_reversal():
    assert fft.factors(256) == [(4, 64), (4, 16), (4, 4), (4, 1)]
    assert fft.factors(120) == [(4, 30), (2, 15), (3, 5), (5, 1)]
    assert fft.factors(8) == [(4, 2), (2, 1)]
    # 8 points, radix 4 then 2: stage 0 reads x[j::4] for j = 0..3, each pair (x[j], x[j + 4])
    assert fft.input_order(8).tolist() == [0, 4, 1, 5, 2, 6, 3, 7]


@pytest.mark.parametrize("n", [28, 44, 14, 2, 7])
def test_lengths_tflm_cannot_run_are_refused(n):
    with pytest.raises(TinyfuseError) as e:
        fft.check_length(n)
    assert "\n" not in str(e.value) and str(n) in str(e.value)


def test_fixed_point_twiddles_are_rounded_q15():
    tw = fft.twiddles(4, False, "int16")
    assert tw.tolist() == [[32767, 0], [0, -32767], [-32767, 0], [0, 32767]]
    assert fft.super_twiddles(4, False, "int16").tolist() == [[-23170, -23170], [-32767, 0]]


def test_float_rfft_irfft_match_float64_dft():
    rng = np.random.default_rng(0)
    for n in (16, 60, 240, 512):
        x = rng.standard_normal(n).astype(np.float32)
        want = np.fft.rfft(x.astype(np.float64))
        got = fft.rfft(x, n, "float32")
        assert np.allclose(got[:, 0] + 1j * got[:, 1], want, atol=1e-4 * np.abs(want).max())
        back = fft.irfft(got, n, "float32")
        assert np.allclose(back, x, atol=1e-5 * n)


def test_int16_rfft_is_the_dft_over_n():
    """KISS FFT's fixed point divides by the length (1/p at every stage): bin k ≈ DFT_k / N."""
    rng = np.random.default_rng(1)
    x = rng.integers(-20000, 20000, 512).astype(np.int16)
    got = fft.rfft(x, 512, "int16").astype(np.float64)
    want = np.fft.rfft(x.astype(np.float64)) / 512
    assert np.max(np.abs(got[:, 0] + 1j * got[:, 1] - want)) < 4
    impulse = np.zeros(8, np.int16)
    impulse[0] = 8192
    assert fft.rfft(impulse, 8, "int16").tolist() == [[1024, 0]] * 5


def test_integer_routines_by_hand():
    assert (sm.msb32(0), sm.msb32(1), sm.msb32(0x80000000)) == (32, 1, 32)
    assert [sm.sqrt32(v) for v in (0, 1, 2, 3, 16, 17, 0xFFFFFFFF)] == [0, 1, 1, 2, 4, 4, 65535]
    assert sm.sqrt64(2**40) == 2**20 and sm.sqrt64(2**64 - 1) == 2**32 - 1
    assert sm.max_abs16(np.array([3, -7, 5], np.int16)) == 7
    assert sm.max_abs16(np.array([-32768, 5], np.int16)) == 5      # -(-32768) wraps to -32768 in int16
    assert sm.fft_auto_scale_bits(np.array([0, 0], np.int16)) == 0
    assert sm.fft_auto_scale_bits(np.array([3, -100], np.int16)) == 8      # 100 < 2^7: 15 - 7
    assert (sm.pcan_shrink(4096), sm.pcan_shrink(8192)) == (16, 64)   # x^2/4 below 2.0, x - 1 above (Q12 → Q6)


def test_log_is_64_ln_x():
    for x in (2, 3, 1000, 2**20, 123456789, 2**32 - 1):
        assert abs(sm.filter_bank_log(x, 64, 0) - 64 * math.log(x)) <= 1.0
    assert sm.filter_bank_log(1, 64, 0) == 0 and sm.filter_bank_log(2**31, 64, 1) == 0   # scaled <= 1 (wrapped)


def test_header_log_table_is_the_formula():
    text = (runtime_dir() / "include" / "tinyfuse" / "signal.h").read_text()
    body = re.search(r"tf_sig_log_lut\[130\] = \{([^}]*)\}", text).group(1)
    assert [int(v) for v in body.replace("\n", " ").split(",")] == sm.LOG_LUT.tolist()


def test_spectral_subtraction_one_channel_by_hand():
    cfg = dict(smoothing=409, one_minus_smoothing=15975, alternate_smoothing=983, alternate_one_minus_smoothing=15401,
               min_signal_remaining=819, smoothing_bits=10, spectral_subtraction_bits=14, clamping=False)
    out, est = sm.spectral_subtraction(np.array([1000], np.uint32), np.array([0], np.uint32), cfg)
    # up = 1000 << 10; noise = up * 409 >> 14 = 25562; out = (up - 25562) >> 10 = 975 (floor 819000 >> 14 = 49)
    assert (int(est[0]), int(out[0])) == (25562, 975)


def test_framer_holds_and_counts():
    from tinyfuse.ir.op import get_op
    count = get_op("signal.stream_count")
    assert framer_hold(400, 160, True) == 240 and framer_hold(400, 160, False) == 320
    c, seen = np.array([0], np.int32), []
    for _ in range(4):          # no prefill: 160, 320 samples before the first frame of 400
        c, valid = count.compute(c, kind="framer", step=160, limit=320, threshold=240, first=0, discard=0)
        c = np.array([c], np.int32)
        seen.append(int(valid))
    assert seen == [0, 0, 1, 1] and int(c[0]) == 320
    # stacker, 5 channels, left 2, right 1: the first frame counts 3 times (15 samples), then 20: valid
    c = np.array([-1], np.int32)
    a, v = count.compute(c, kind="stacker", step=5, first=15, threshold=20, discard=5, limit=0)
    assert (a, v) == (15, 0)
    assert tuple(count.compute(np.array([15], np.int32), kind="stacker", step=5, first=15, threshold=20, discard=5,
                               limit=0)) == (15, 1)


def test_converter_refusals_are_one_line():
    from tinyfuse.frontend.tflite.reader import from_tflite
    from tests.builders import tflm_signal as ts
    cases = [ts.rfft((1, 28), 28, "int16"),                                   # N/2 = 14 = 2 · 7
             ts.one_op("SignalEnergy", [((8,), "int16")], [((4,), "uint32")], end_index=4, start_index=0, extra=1),
             ts.one_op("SignalRfft", [((1, 16), "int16")], [((1, 18), "int16")], T=2, fft_length=16)]
    for model in cases:
        with pytest.raises(TinyfuseError) as e:
            from_tflite(model)
        msg = str(e.value)
        assert "\n" not in msg and msg.startswith("operator 0 (CUSTOM 'Signal") and " v1, inputs " in msg, msg
