"""The TFLM twin fuzzer's draws of TFLM's signal-library ops (custom ``Signal*``; tests/builders/
tflm_signal.py): random shapes, parameters and full-range inputs, one invocation each (the stateful ops
start from their reset state; tests/c/test_signal_ops.py streams them over many frames). Every output
is compared byte for byte. Draws stay where TFLM writes every output element on the first frame:
ENERGY over the whole spectrum, FRAMER with prefill (or frame_size == frame_step), STACKER without
right context."""
from __future__ import annotations

import numpy as np

from tests.builders import tflm_signal as ts
from tests.fuzz.twin_draw import Draw, dim, pick


def _i16(rng, shape) -> np.ndarray:
    if rng.random() < 0.5:
        return rng.integers(-32768, 32768, shape).astype(np.int16)
    return np.clip(rng.normal(0, 10 ** rng.uniform(0, 4), shape), -32768, 32767).astype(np.int16)


def _fft_length(rng) -> int:
    """N with N / 2 = 2^a 3^b 5^c (the radices TFLM's KISS FFT runs), 4 <= N <= 1280."""
    while True:
        half = 2 ** int(rng.integers(0, 8)) * 3 ** int(rng.integers(0, 3)) * 5 ** int(rng.integers(0, 2))
        if 2 <= half <= 640:
            return 2 * half


def _data(rng, dtype, shape):
    if dtype == "int16":
        return _i16(rng, shape)
    if dtype == "int32":
        return rng.integers(-2**31, 2**31, shape, dtype=np.int64).astype(np.int32)
    return (rng.standard_normal(shape) * 10 ** rng.uniform(-2, 4)).astype(np.float32)


def draw_window(rng) -> Draw:
    w_len, outer = dim(rng, 64), dim(rng, 3)
    w = _i16(rng, w_len)
    shift = int(rng.integers(0, 20))
    return Draw("SignalWindow", ts.window((outer, w_len), w, shift), [_i16(rng, (outer, w_len))],
                dict(shape=[outer, w_len], shift=shift))


def draw_fft_auto_scale(rng) -> Draw:
    n = dim(rng, 300)
    x = _i16(rng, n) >> int(rng.integers(0, 16))
    return Draw("SignalFftAutoScale", ts.fft_auto_scale(n), [x.astype(np.int16)], dict(n=n))


def draw_fft(rng, inverse: bool = False) -> Draw:
    n, dtype, rows = _fft_length(rng), pick(rng, ["int16", "int32", "float32"]), dim(rng, 3)
    length = n + 2 if inverse else int(rng.integers(max(1, n // 2), n + 1))
    op = "SignalIrfft" if inverse else "SignalRfft"
    return Draw(op, ts.rfft((rows, length), n, dtype, inverse), [_data(rng, dtype, (rows, length))],
                dict(fft_length=n, dtype=dtype, shape=[rows, length]))


def draw_energy(rng) -> Draw:
    k = dim(rng, 300)
    return Draw("SignalEnergy", ts.energy(k, 0, k), [_i16(rng, 2 * k)], dict(k=k))


def draw_filter_bank(rng) -> Draw:
    spectrum, channels = int(rng.integers(12, 300)), dim(rng, 48)
    widths = rng.integers(1, 9, channels + 1)
    starts = np.sort(rng.integers(0, spectrum - 8, channels + 1))
    w = rng.integers(-32768, 32768, int(widths.sum())) if rng.random() < 0.3 else rng.integers(0, 4097, int(widths.sum()))
    tables = [a.astype(np.int16) for a in (w, 4096 - w, starts, np.concatenate([[0], np.cumsum(widths)[:-1]]), widths)]
    x = rng.integers(0, 2**32, spectrum, dtype=np.int64).astype(np.uint32)
    return Draw("SignalFilterBank", ts.filter_bank(spectrum, tables, channels), [x],
                dict(spectrum=spectrum, channels=channels))


def draw_filter_bank_sqrt(rng) -> Draw:
    c, bits = dim(rng, 64), int(rng.integers(0, 16))
    x = rng.integers(0, 2**63, c, dtype=np.int64).astype(np.uint64) >> np.uint64(int(rng.integers(0, 63)))
    return Draw("SignalFilterBankSquareRoot", ts.filter_bank_sqrt(c, bits), [x], dict(c=c, bits=bits))


def draw_filter_bank_log(rng) -> Draw:
    c, scale, corr = dim(rng, 64), int(rng.integers(1, 4096)), int(rng.integers(0, 12))
    x = rng.integers(0, 2**32, c, dtype=np.int64).astype(np.uint32) >> np.uint32(int(rng.integers(0, 32)))
    return Draw("SignalFilterBankLog", ts.filter_bank_log(c, scale, corr), [x], dict(c=c, scale=scale, corr=corr))


def draw_spectral_subtraction(rng) -> Draw:
    c, bits = dim(rng, 64), int(rng.integers(8, 16))
    one = 1 << bits
    s, alt = int(rng.integers(0, one)), int(rng.integers(0, one))
    cfg = dict(alternate_one_minus_smoothing=one - alt, alternate_smoothing=alt, clamping=bool(rng.random() < 0.5),
               min_signal_remaining=int(rng.integers(0, one)), one_minus_smoothing=one - s, smoothing=s,
               smoothing_bits=int(rng.integers(0, 12)), spectral_subtraction_bits=bits)
    x = rng.integers(0, 2**20, c).astype(np.uint32)
    return Draw("SignalFilterBankSpectralSubtraction", ts.spectral_subtraction(c, **cfg), [x], dict(c=c, **cfg))


def draw_pcan(rng) -> Draw:
    c, shift = dim(rng, 64), int(rng.integers(0, 12))
    lut = rng.integers(-32768, 32768, 125).astype(np.int16)
    ins = [rng.integers(0, 2**24, c).astype(np.uint32), rng.integers(0, 2**32, c, dtype=np.int64).astype(np.uint32)]
    return Draw("SignalPCAN", ts.pcan(c, lut, shift), ins, dict(c=c, snr_shift=shift))


def draw_framer(rng) -> Draw:
    step = dim(rng, 40)
    size = step if rng.random() < 0.3 else step + int(rng.integers(1, 80))
    shape = tuple(dim(rng, 3) for _ in range(int(rng.integers(0, 2)))) + (step * dim(rng, 4),)
    return Draw("SignalFramer", ts.framer(shape, size, step, size != step), [_i16(rng, shape)],
                dict(shape=list(shape), frame_size=size, frame_step=step))


def draw_stacker(rng) -> Draw:
    c, left = dim(rng, 16), int(rng.integers(0, 4))
    step = int(rng.integers(1, left + 2))
    return Draw("SignalStacker", ts.stacker(c, left, 0, step), [_i16(rng, c)], dict(c=c, left=left, step=step))


def draw_overlap_add(rng) -> Draw:
    dtype, f = pick(rng, ["int16", "float32"]), dim(rng, 40)
    shape = (dim(rng, 3), dim(rng, 4), f)
    step = int(rng.integers(1, f + 1))
    return Draw("SignalOverlapAdd", ts.overlap_add(shape, step, dtype), [_data(rng, dtype, shape)],
                dict(shape=list(shape), frame_step=step, dtype=dtype))


def draw_delay(rng) -> Draw:
    shape, d = (dim(rng, 3), dim(rng, 40)), int(rng.integers(0, 50))
    return Draw("SignalDelay", ts.delay(shape, d), [_i16(rng, shape)], dict(shape=list(shape), delay=d))


DRAWS = {"SignalWindow": draw_window, "SignalFftAutoScale": draw_fft_auto_scale, "SignalRfft": draw_fft,
         "SignalIrfft": lambda rng: draw_fft(rng, inverse=True), "SignalEnergy": draw_energy,
         "SignalFilterBank": draw_filter_bank, "SignalFilterBankSquareRoot": draw_filter_bank_sqrt,
         "SignalFilterBankLog": draw_filter_bank_log, "SignalFilterBankSpectralSubtraction": draw_spectral_subtraction,
         "SignalPCAN": draw_pcan, "SignalFramer": draw_framer, "SignalStacker": draw_stacker,
         "SignalOverlapAdd": draw_overlap_add, "SignalDelay": draw_delay}
