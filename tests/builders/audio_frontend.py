"""TFLM micro_speech's audio preprocessor (tflite-micro tensorflow/lite/micro/examples/micro_speech/
audio_preprocessor.py, its models audio_preprocessor_float.tflite / _int8.tflite), rebuilt with the
flatbuffer builder from the same operator sequence and parameters (FeatureParams' defaults: 16 kHz,
30 ms windows, 40 mel channels 125..7500 Hz, spectral subtraction 0.025 / 0.06, PCAN 0.95 / 80 / 21
bits, log scale 64), so tests need neither the model file nor network access. The constant tables
are computed as the signal ops' Python wrappers compute them (Hann window, mel filter bank with
alignment 4 and block size 4, PCAN's wide-dynamic-function gain table).

    model = audio_preprocessor(int8=True)     # int16 [1, 480] audio → int8 [40] (float32 with int8=False)
"""
from __future__ import annotations

import math

import numpy as np

from tests.builders.tflm_signal import SignalNet

RATE, WINDOW, CHANNELS, LOW, HIGH = 16000, 480, 40, 125.0, 7500.0
FFT, FFT_LOG2, WEIGHT_BITS, ALIGN, BLOCK = 512, 9, 12, 4, 4
SPECTRAL = dict(smoothing=0.025, alternate_smoothing=0.06, smoothing_bits=10, min_signal_remaining=0.05,
                clamping=False, spectral_subtraction_bits=14)
PCAN = dict(strength=0.95, offset=80.0, gain_bits=21, smoothing_bits=10)


def hann(n: int = WINDOW, bits: int = 12) -> np.ndarray:
    i = np.arange(n)
    return np.round((0.5 - 0.5 * np.cos(np.pi * 2 / n * (i + 0.5))) * 2 ** bits).astype(np.int16)


def mel(f) -> np.float32:
    return np.float32(1127.0) * np.float32(math.log1p(float(np.float32(f) / np.float32(700.0))))


def _centers(n: int) -> np.ndarray:
    lo, hi = mel(LOW), mel(HIGH)
    return lo + (hi - lo) / np.float32(n) * np.arange(1, n + 1, dtype=np.float32)


def _layout(spectrum: int, centers, hz: float):
    """Per channel (frequency start, weight start, padded width) and the real (start, width)."""
    tables = np.zeros((3, CHANNELS + 1), np.int64)
    real = np.zeros((2, CHANNELS + 1), np.int64)
    start = freq0 = round(1 + LOW / hz)
    wstart, zeros = 0, False
    for c in range(CHANNELS + 1):
        f = freq0
        while mel(f * hz) <= centers[c]:
            f += 1
        width = f - freq0
        real[:, c] = freq0, width
        if width == 0:
            tables[:, c] = 0, 0, BLOCK
            if not zeros:
                zeros = True
                tables[1, :c] += BLOCK
                wstart += BLOCK
        else:
            aligned = freq0 // (ALIGN // 2) * (ALIGN // 2)
            padded = ((freq0 - aligned + width - 1) // BLOCK + 1) * BLOCK
            tables[:, c] = aligned, wstart, padded
            wstart += padded
        freq0 = f
    return start, tables, real, wstart


def filter_bank_tables(spectrum: int = FFT // 2 + 1) -> tuple[int, int, list[np.ndarray]]:
    """(start index, end index, [weights, unweights, frequency starts, weight starts, widths])."""
    hz = (RATE / 2) / (spectrum - 1)
    centers = _centers(CHANNELS + 1)
    start, tables, real, count = _layout(spectrum, centers, hz)
    w, uw, end = np.zeros(count, np.int16), np.zeros(count, np.int16), 0
    for c in range(CHANNELS + 1):
        f, offset = int(real[0, c]), int(real[0, c] - tables[0, c])
        low = mel(LOW) if c == 0 else centers[c - 1]
        for j in range(int(real[1, c])):
            weight = np.float32(centers[c] - mel(f * hz)) / np.float32(centers[c] - low)
            k = int(tables[1, c]) + offset + j
            w[k], uw[k] = int(weight * (1 << WEIGHT_BITS)), int((1 - weight) * (1 << WEIGHT_BITS))
            f += 1
        end = max(end, f)
    return start, end, [w, uw, *(t.astype(np.int16) for t in tables)]


def _gain(x: int, input_bits: int) -> int:
    v = np.float32(2 ** PCAN["gain_bits"]) * np.float32(
        (np.float32(x) / np.float32(2 ** input_bits) + np.float32(PCAN["offset"])) ** np.float32(-PCAN["strength"]))
    return 32767 if v > 32767 else int(np.float32(v + np.float32(0.5)))


def pcan_lut(correction_bits: int) -> np.ndarray:
    """The 125 int16 entries of WideDynamicFunction's piecewise-quadratic gain table."""
    bits = PCAN["smoothing_bits"] - correction_bits
    lut = np.zeros(4 * 32 - 3 + 6, np.int64)           # index 4·interval − 6 + k, from 0
    lut[0], lut[1] = _gain(0, bits), _gain(1, bits)
    for interval in range(2, 33):
        x0 = 1 << (interval - 1)
        x1, x2 = x0 + (x0 >> 1), (x0 + x0 - 1) if interval == 32 else 2 * x0
        y0, y1, y2 = (_gain(x, bits) for x in (x0, x1, x2))
        a1 = 4 * (y1 - y0) - (y2 - y0)
        lut[4 * interval - 6:4 * interval - 2] = y0, a1, (y2 - y0) - a1, 0
    return lut[:4 * 32 - 3].astype(np.int16)


def spectral_options(channels: int = CHANNELS) -> dict:
    s = SPECTRAL
    one = 1 << s["spectral_subtraction_bits"]
    even, odd = int(s["smoothing"] * one), int(s["alternate_smoothing"] * one)
    return dict(alternate_one_minus_smoothing=one - odd, alternate_smoothing=odd, clamping=s["clamping"],
                min_signal_remaining=int(s["min_signal_remaining"] * one), num_channels=channels,
                one_minus_smoothing=one - even, smoothing=even, smoothing_bits=s["smoothing_bits"],
                spectral_subtraction_bits=s["spectral_subtraction_bits"])


def _front(m: SignalNet, x):
    """WINDOW → RESHAPE → FFT_AUTO_SCALE → RFFT → ENERGY → the band kept (CAST, STRIDED_SLICE, zeros
    around: CONCATENATION, CAST) → FILTER_BANK → SQUARE_ROOT → SPECTRAL_SUBTRACTION → PCAN → LOG: int16 [40]."""
    i32 = lambda v: m.const(np.array(v, np.int32))  # noqa: E731
    start, end, tables = filter_bank_tables()
    y = m.op("SignalWindow", [x, m.const(hann())], m.tensor((1, WINDOW), "int16"), shift=12)
    y = m.builtin("RESHAPE", [y, i32([-1])], m.tensor((WINDOW,), "int16"))
    y, bits = m.op("SignalFftAutoScale", [y], [m.tensor((WINDOW,), "int16"), m.tensor((), "int32")])
    y = m.op("SignalRfft", [y], m.tensor((FFT + 2,), "int16"), T=7, fft_length=FFT)
    y = m.op("SignalEnergy", [y], m.tensor((FFT // 2 + 1,), "uint32"), end_index=end, start_index=start)
    y = m.builtin("CAST", [y], m.tensor((FFT // 2 + 1,), "int32"))
    y = m.builtin("STRIDED_SLICE", [y, i32([start]), i32([end]), i32([1])], m.tensor((end - start,), "int32"),
                  "StridedSliceOptions")
    y = m.builtin("CONCATENATION", [i32(np.zeros(start)), y, i32(np.zeros(FFT // 2 + 1 - end))],
                  m.tensor((FFT // 2 + 1,), "int32"), "ConcatenationOptions", axis=0)
    y = m.builtin("CAST", [y], m.tensor((FFT // 2 + 1,), "uint32"))
    y = m.op("SignalFilterBank", [y, *(m.const(t) for t in tables)], m.tensor((CHANNELS,), "uint64"),
             num_channels=CHANNELS)
    y = m.op("SignalFilterBankSquareRoot", [y, bits], m.tensor((CHANNELS,), "uint32"))
    y, noise = m.op("SignalFilterBankSpectralSubtraction", [y], [m.tensor((CHANNELS,), "uint32"),
                                                                 m.tensor((CHANNELS,), "uint32")], **spectral_options())
    correction = FFT_LOG2 - WEIGHT_BITS // 2
    y = m.op("SignalPCAN", [y, noise, m.const(pcan_lut(correction))], m.tensor((CHANNELS,), "uint32"), snr_shift=6)
    return m.op("SignalFilterBankLog", [y], m.tensor((CHANNELS,), "int16"), input_correction_bits=correction,
                output_scale=64)


def audio_preprocessor(int8: bool) -> bytes:
    """The whole preprocessor: int16 [1, 480] → float32 [40] (features / 25.6) or int8 [40]
    (clamp((feature · 256 + 333) / 666 − 128), C's truncating division)."""
    m = SignalNet()
    x = m.input((1, WINDOW), "int16")
    y = _front(m, x)
    if not int8:
        y = m.builtin("CAST", [y], m.tensor((CHANNELS,), "float32"))
        y = m.builtin("MUL", [y, m.const(np.array(0.0390625, np.float32))], m.tensor((CHANNELS,), "float32"),
                      "MulOptions")
        return m.build([y])
    i32 = lambda v: m.const(np.array(v, np.int32))  # noqa: E731
    c = (CHANNELS,)
    y = m.builtin("CAST", [y], m.tensor(c, "int32"))
    y = m.builtin("MUL", [y, i32(256)], m.tensor(c, "int32"), "MulOptions")
    y = m.builtin("ADD", [y, i32(333)], m.tensor(c, "int32"), "AddOptions")
    y = m.builtin("DIV", [y, i32(666)], m.tensor(c, "int32"), "DivOptions")
    y = m.builtin("ADD", [y, i32(-128)], m.tensor(c, "int32"), "AddOptions")
    y = m.builtin("MINIMUM", [y, i32(127)], m.tensor(c, "int32"))
    y = m.builtin("MAXIMUM", [y, i32(-128)], m.tensor(c, "int32"))
    y = m.builtin("CAST", [y], m.tensor(c, "int8"))
    return m.build([y])


def speech_like(n_frames: int, seed: int = 0) -> list[np.ndarray]:
    """int16 [1, 480] windows hopping 320 samples over 16 kHz audio: silence, a harmonic chirp
    (120..300 Hz fundamental, 8 harmonics, amplitude envelope) in noise, silence."""
    rng = np.random.default_rng(seed)
    total = 320 * (n_frames - 1) + 480
    t = np.arange(total) / 16000
    f0 = 120 + 180 * t / t[-1]
    phase = 2 * np.pi * np.cumsum(f0) / 16000
    voice = sum(np.sin(k * phase) / k for k in range(1, 9))
    env = np.clip(np.sin(np.pi * np.clip((t - 0.15 * t[-1]) / (0.7 * t[-1]), 0, 1)), 0, 1)
    audio = 9000 * env * voice + rng.normal(0, 300, total)
    audio = np.clip(np.round(audio), -32768, 32767).astype(np.int16)
    return [audio[None, i * 320:i * 320 + 480].copy() for i in range(n_frames)]
