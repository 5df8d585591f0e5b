"""The spectral ops of TFLM's signal library (tflite-micro signal/micro/kernels, custom ops ``Signal*``),
each one kernel of its own (OPAQUE), bit-exact with TFLM: the numpy ``compute`` follows
``ops/signal_math.py`` and ``ops/fft.py``, the C follows the same operations.

Shapes and dtypes (``...`` any outer dims; a TFLM op runs its 1-D routine on each row):

- ``signal.window(x int16 [..., W], w int16 [W]; shift)`` → int16: sat16((x · w) >> shift) (SignalWindow);
- ``signal.fft_auto_scale(x int16 [N])`` → int16 [N + 1]: x · 2^b, then b = max(0, 15 − msb(max|x|))
  (SignalFftAutoScale's two outputs, packed; the converter slices them);
- ``signal.rfft(x T [..., L]; fft_length)`` → T [..., fft_length + 2] (re, im of bins 0..N/2; L <= N,
  zero padded) and ``signal.irfft(X T [..., N + 2]; fft_length)`` → T [..., N], T int16, int32 or float32
  (SignalRfft / SignalIrfft: KISS FFT, ops/fft.py);
- ``signal.energy(x int16 [2K]; start_index, end_index)`` → uint32 [K]: re² + im² on [start, end), 0 elsewhere
  (TFLM leaves those elements unwritten);
- ``signal.filter_bank(x uint32 [S], weights, unweights int16 [Wn], freq_starts, weight_starts, widths
  int16 [C + 1]; num_channels)`` → uint64 [C] (SignalFilterBank);
- ``signal.filter_bank_sqrt(x uint64 [C], bits int32 [1])`` → uint32 [C]: isqrt(x) >> bits;
- ``signal.filter_bank_log(x uint32 [C]; output_scale, input_correction_bits)`` → int16 [C];
- ``signal.spectral_subtraction(x uint32 [C], noise uint32 [C]; ...)`` → uint32 [2C]: the output, then the
  new noise estimate (the op's state; SignalFilterBankSpectralSubtraction's second output is a copy);
- ``signal.pcan(x uint32 [C], noise uint32 [C], lut int16 [L]; snr_shift)`` → uint32 [C] (SignalPCAN).
"""
from __future__ import annotations

import numpy as np

from . import fft
from . import signal_math as sm
from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType


class SignalOp(OpDef):
    pattern = OpPattern.OPAQUE

    def need(self, ok: bool, args, what: str) -> None:
        if not ok:
            got = ", ".join(str(a) for a in args)
            raise TinyfuseError(f"{self.name}: {what} (operands {got})")


@register_op
class Window(SignalOp):
    name, num_inputs = "signal.window", 2
    attrs = {"shift": 0}

    def infer(self, args, attrs):
        x, w = args
        self.need(x.dtype == w.dtype == "int16" and w.ndim == 1 and x.ndim >= 1 and x.shape[-1] == w.shape[0]
                  and 0 <= attrs["shift"] < 32, args, "needs int16 x [..., W], int16 weights [W] and 0 <= shift < 32")
        return x

    def compute(self, x, w, shift):
        return np.clip((x.astype(np.int64) * w) >> shift, -32768, 32767).astype(np.int16)


@register_op
class FftAutoScale(SignalOp):
    name, num_inputs = "signal.fft_auto_scale", 1

    def infer(self, args, attrs):
        (x,) = args
        self.need(x.dtype == "int16" and x.ndim == 1, args, "needs int16 [N]")
        return TensorType((x.shape[0] + 1,), "int16")

    def compute(self, x):
        bits = sm.fft_auto_scale_bits(x)
        y = [sm.wrap(int(v) << bits, 16) for v in x.tolist()]
        return np.array(y + [bits], np.int16)


def _fft_types(self, args, attrs, last: int) -> tuple:
    (x,) = args
    n = attrs["fft_length"]
    try:
        fft.check_length(n)
    except TinyfuseError as e:
        raise TinyfuseError(f"{self.name}: {e}") from None
    self.need(x.dtype in fft.KINDS and x.ndim >= 1 and 1 <= x.shape[-1] <= last, args,
              f"needs int16, int32 or float32 [..., <= {last}] for fft_length {n}")
    return x


@register_op
class Rfft(SignalOp):
    name, num_inputs = "signal.rfft", 1
    attrs = {"fft_length": 0}

    def infer(self, args, attrs):
        x = _fft_types(self, args, attrs, attrs["fft_length"])
        return TensorType(x.shape[:-1] + (attrs["fft_length"] + 2,), x.dtype)

    def compute(self, x, fft_length):
        rows = x.reshape(-1, x.shape[-1])
        out = [fft.rfft(r, fft_length, str(x.dtype)).reshape(-1) for r in rows]
        return np.stack(out).astype(x.dtype).reshape(x.shape[:-1] + (fft_length + 2,))


@register_op
class Irfft(SignalOp):
    name, num_inputs = "signal.irfft", 1
    attrs = {"fft_length": 0}

    def infer(self, args, attrs):
        n = attrs["fft_length"]
        x = _fft_types(self, args, attrs, n + 2)
        self.need(x.shape[-1] == n + 2, args, f"needs [..., {n + 2}] (bins 0..{n // 2}, re and im)")
        return TensorType(x.shape[:-1] + (n,), x.dtype)

    def compute(self, x, fft_length):
        rows = x.reshape(-1, x.shape[-1])
        out = [fft.irfft(r.reshape(-1, 2), fft_length, str(x.dtype)) for r in rows]
        return np.stack(out).astype(x.dtype).reshape(x.shape[:-1] + (fft_length,))


@register_op
class Energy(SignalOp):
    name, num_inputs = "signal.energy", 1
    attrs = {"start_index": 0, "end_index": 0}

    def infer(self, args, attrs):
        (x,) = args
        k = x.shape[0] // 2 if x.ndim == 1 else 0
        self.need(x.dtype == "int16" and x.ndim == 1 and x.shape[0] % 2 == 0
                  and 0 <= attrs["start_index"] <= attrs["end_index"] <= k, args,
                  f"needs int16 [2K] and 0 <= start_index {attrs['start_index']} <= end_index "
                  f"{attrs['end_index']} <= K")
        return TensorType((k,), "uint32")

    def compute(self, x, start_index, end_index):
        c = x.astype(np.int64).reshape(-1, 2)
        e = (c[:, 0] * c[:, 0] + c[:, 1] * c[:, 1]) & sm.U32
        e[:start_index] = 0
        e[end_index:] = 0
        return e.astype(np.uint32)


@register_op
class FilterBank(SignalOp):
    name, num_inputs = "signal.filter_bank", 6
    attrs = {"num_channels": 0}

    def infer(self, args, attrs):
        x, w, uw, freq, wstart, width = args
        c = attrs["num_channels"]
        tables = (w, uw, freq, wstart, width)
        self.need(x.dtype == "uint32" and all(t.dtype == "int16" and t.ndim == 1 for t in tables) and x.ndim == 1
                  and c >= 1 and all(t.shape == (c + 1,) for t in (freq, wstart, width)) and w.shape == uw.shape,
                  args, f"needs uint32 [S], int16 weights and unweights, int16 [{c + 1}] channel tables")
        return TensorType((c,), "uint64")

    def compute(self, x, w, uw, freq, wstart, width, num_channels):
        return sm.filter_bank(x, w, uw, freq, wstart, width, num_channels)


@register_op
class FilterBankSqrt(SignalOp):
    name, num_inputs = "signal.filter_bank_sqrt", 2

    def infer(self, args, attrs):
        x, bits = args
        self.need(x.dtype == "uint64" and x.ndim == 1 and bits.dtype == "int32" and bits.size == 1, args,
                  "needs uint64 [C] and one int32 shift")
        return TensorType(x.shape, "uint32")

    def compute(self, x, bits):
        b = int(np.asarray(bits).reshape(-1)[0])
        return np.array([sm.sqrt64(int(v)) >> b for v in x.tolist()], np.uint32)


@register_op
class FilterBankLog(SignalOp):
    name, num_inputs = "signal.filter_bank_log", 1
    attrs = {"output_scale": 0, "input_correction_bits": 0}

    def infer(self, args, attrs):
        (x,) = args
        self.need(x.dtype == "uint32" and x.ndim == 1 and 0 <= attrs["input_correction_bits"] < 32, args,
                  "needs uint32 [C] and 0 <= input_correction_bits < 32")
        return TensorType(x.shape, "int16")

    def compute(self, x, output_scale, input_correction_bits):
        return np.array([sm.filter_bank_log(int(v), output_scale, input_correction_bits) for v in x.tolist()],
                        np.int16)


PCAN_LUT = 4 * 32 - 6 + 3     # the gain table entries WideDynamicFunction can read (msb up to 32)
SPECTRAL_KEYS = ("alternate_one_minus_smoothing", "alternate_smoothing", "clamping", "min_signal_remaining",
                 "num_channels", "one_minus_smoothing", "smoothing", "smoothing_bits", "spectral_subtraction_bits")


@register_op
class SpectralSubtraction(SignalOp):
    name, num_inputs = "signal.spectral_subtraction", 2
    attrs = {k: 0 for k in SPECTRAL_KEYS}

    def infer(self, args, attrs):
        x, noise = args
        c = attrs["num_channels"]
        self.need(x.dtype == noise.dtype == "uint32" and x.shape == noise.shape == (c,)
                  and 0 <= attrs["smoothing_bits"] < 32 and 0 <= attrs["spectral_subtraction_bits"] < 64, args,
                  f"needs uint32 [{c}] input and noise estimate, shifts in range")
        return TensorType((2 * c,), "uint32")

    def compute(self, x, noise, **attrs):
        out, est = sm.spectral_subtraction(x, noise, attrs)
        return np.concatenate([out, est]).astype(np.uint32)


@register_op
class Pcan(SignalOp):
    name, num_inputs = "signal.pcan", 3
    attrs = {"snr_shift": 0}

    def infer(self, args, attrs):
        x, noise, lut = args
        c = x.shape[0] if x.ndim == 1 else 0
        self.need(x.dtype == noise.dtype == "uint32" and noise.shape == x.shape and x.ndim == 1
                  and lut.dtype == "int16" and lut.ndim == 1 and lut.shape[0] >= PCAN_LUT and 0 <= attrs["snr_shift"] < 64,
                  args, f"needs uint32 [{c}] input and noise, an int16 gain table of >= {PCAN_LUT} entries "
                  "(WideDynamicFunction reads up to entry 4 * 32 - 4)")
        return x

    def compute(self, x, noise, lut, snr_shift):
        return np.array([sm.pcan(int(a), int(n), lut, snr_shift) for a, n in zip(x.tolist(), noise.tolist())],
                        np.uint32)
