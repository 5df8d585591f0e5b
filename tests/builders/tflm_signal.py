"""One-op and small .tflite models of TFLM's signal library (custom ops ``Signal*``, tflite-micro
signal/micro/kernels) built with tflite-micro's model editor, their options a flexbuffer map as the
TensorFlow signal ops write it (keys sorted; TFLM reads them by position). TFLM runs the bytes.

    m = SignalNet()
    x = m.input((1, 480), "int16")
    y = m.op("SignalWindow", [x, m.const(np.ones(480, np.int16))], m.tensor((1, 480), "int16"), shift=12)
    model = m.build([y])
"""
from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from tests.builders.tflm_cases import tflm_oneop

TYPES = {"float32": "FLOAT32", "int8": "INT8", "int16": "INT16", "int32": "INT32", "uint32": "UINT32",
         "uint64": "UINT64", "bool": "BOOL", "uint8": "UINT8"}


class SignalNet:
    """A graph under construction (operators in execution order, inputs in order)."""

    def __init__(self):
        self.o = tflm_oneop()
        self.me, self.S = self.o.me, self.o.S
        self.ops, self.inputs, self._n = [], [], 0

    def tensor(self, shape, dtype: str, data=None, q=None, variable: bool = False):
        self._n += 1
        t = self.me.Tensor(shape=tuple(int(d) for d in shape), dtype=getattr(self.S.TensorType, TYPES[dtype]),
                           data=None if data is None else np.array(data, order="C"), name=f"t{self._n}",
                           quantization=None if q is None else self.me.Quantization(float(q[0]), int(q[1])))
        if variable:
            t._fb.isVariable = True
        return t

    def input(self, shape, dtype: str, q=None):
        t = self.tensor(shape, dtype, q=q)
        self.inputs.append(t)
        return t

    def const(self, array: np.ndarray, q=None):
        array = np.array(array, order="C")          # keeps a 0-d array 0-d (a scalar tensor)
        return self.tensor(array.shape, str(array.dtype), data=array, q=q)

    def op(self, name: str, inputs, outputs, **options):
        """A custom op ``name`` with its options (a flexbuffer map); ``outputs`` one tensor or a list."""
        outs = outputs if isinstance(outputs, list) else [outputs]
        op = self.me.Operator(opcode=self.S.BuiltinOperator.CUSTOM, custom_code=name, inputs=list(inputs),
                              outputs=outs)
        op._fb.customOptions = list(flexbuffers.Dumps(options))
        op._fb.customOptionsFormat = 0
        self.ops.append(op)
        return outputs

    def builtin(self, opcode: str, inputs, outputs, options: str | None = None, **fields):
        outs = outputs if isinstance(outputs, list) else [outputs]
        op = self.me.Operator(opcode=getattr(self.S.BuiltinOperator, opcode), inputs=list(inputs), outputs=outs)
        if options is not None:
            op._fb.builtinOptionsType = getattr(self.S.BuiltinOptions, options)
            op._fb.builtinOptions = getattr(self.S, options + "T")()
            for key, value in fields.items():
                setattr(op._fb.builtinOptions, key, value)
        self.ops.append(op)
        return outputs

    def build(self, outputs) -> bytes:
        tensors, seen = [], set()
        for op in self.ops:
            for t in [*op.inputs, *op.outputs]:
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    tensors.append(t)
        model = self.me.Model(description="tinyfuse signal")
        model.add_subgraph(tensors=tensors, operators=self.ops, outputs=list(outputs), inputs=self.inputs)
        return bytes(model.build())


def tflm_frames(model: bytes, frames: list[list[np.ndarray]], arena_size: int = 1 << 20) -> list[list[np.ndarray]]:
    """TFLM's outputs for each frame of ``frames`` (one interpreter, invoked frame after frame)."""
    import tflite_micro
    it = tflite_micro.runtime.Interpreter.from_bytes(bytes(model), arena_size=arena_size)
    n_out, out = _outputs(model), []
    for inputs in frames:
        for i, x in enumerate(inputs):
            it.set_input(np.ascontiguousarray(x), i)
        it.invoke()
        out.append([np.array(it.get_output(k), copy=True) for k in range(n_out)])
    return out


def _outputs(model: bytes) -> int:
    o = tflm_oneop()
    return o.S.Model.GetRootAs(bytes(model), 0).Subgraphs(0).OutputsLength()


# ----------------------------------------------------------------------------- one-op models
FFT_T = {"int16": 7, "int32": 2, "float32": 0}


def one_op(name: str, ins: list, outs: list, consts=(), **options) -> bytes:
    """A model of custom op ``name``: inputs ``ins`` [(shape, dtype)], constant inputs ``consts``
    (arrays, after the inputs), outputs ``outs`` [(shape, dtype)]; the model's outputs are all of them."""
    m = SignalNet()
    xs = [m.input(s, d) for s, d in ins] + [m.const(c) for c in consts]
    ys = [m.tensor(s, d) for s, d in outs]
    m.op(name, xs, ys, **options)
    return m.build(ys)


def window(shape, weights: np.ndarray, shift: int) -> bytes:
    return one_op("SignalWindow", [(shape, "int16")], [(shape, "int16")], [weights], shift=shift)


def fft_auto_scale(n: int) -> bytes:
    return one_op("SignalFftAutoScale", [((n,), "int16")], [((n,), "int16"), ((), "int32")])


def rfft(shape, fft_length: int, dtype: str, inverse: bool = False) -> bytes:
    out = tuple(shape[:-1]) + ((fft_length,) if inverse else (fft_length + 2,))
    return one_op("SignalIrfft" if inverse else "SignalRfft", [(shape, dtype)], [(out, dtype)], T=FFT_T[dtype],
                  fft_length=fft_length)


def energy(k: int, start: int, end: int) -> bytes:
    return one_op("SignalEnergy", [((2 * k,), "int16")], [((k,), "uint32")], end_index=end, start_index=start)


def filter_bank(spectrum: int, tables: list[np.ndarray], channels: int) -> bytes:
    """``tables``: weights, unweights, channel frequency starts, weight starts, widths (int16)."""
    return one_op("SignalFilterBank", [((spectrum,), "uint32")], [((channels,), "uint64")], tables,
                  num_channels=channels)


def filter_bank_sqrt(channels: int, bits: int) -> bytes:
    """The shift ``bits`` a constant int32 scalar (tinyfuse takes no scalar model inputs)."""
    return one_op("SignalFilterBankSquareRoot", [((channels,), "uint64")], [((channels,), "uint32")],
                  [np.array(bits, np.int32)])


def filter_bank_log(channels: int, output_scale: int, correction: int) -> bytes:
    return one_op("SignalFilterBankLog", [((channels,), "uint32")], [((channels,), "int16")],
                  input_correction_bits=correction, output_scale=output_scale)


def spectral_subtraction(channels: int, **config) -> bytes:
    c = (channels,)
    return one_op("SignalFilterBankSpectralSubtraction", [(c, "uint32")], [(c, "uint32"), (c, "uint32")],
                  num_channels=channels, **config)


def pcan(channels: int, lut: np.ndarray, snr_shift: int) -> bytes:
    c = (channels,)
    return one_op("SignalPCAN", [(c, "uint32"), (c, "uint32")], [(c, "uint32")], [lut], snr_shift=snr_shift)


def framer(shape, frame_size: int, frame_step: int, prefill: bool) -> bytes:
    n = shape[-1] // frame_step
    return one_op("SignalFramer", [(shape, "int16")], [(tuple(shape[:-1]) + (n, frame_size), "int16"), ((), "bool")],
                  frame_size=frame_size, frame_step=frame_step, prefill=prefill)


def stacker(channels: int, left: int, right: int, step: int) -> bytes:
    size = channels * (left + right + 1)
    return one_op("SignalStacker", [((channels,), "int16")], [((size,), "int16"), ((), "bool")],
                  num_channels=channels, stacker_left_context=left, stacker_right_context=right, stacker_step=step)


def overlap_add(shape, frame_step: int, dtype: str) -> bytes:
    out = tuple(shape[:-2]) + (shape[-2] * frame_step,)
    return one_op("SignalOverlapAdd", [(shape, dtype)], [(out, dtype)], T=FFT_T[dtype], frame_step=frame_step)


def delay(shape, delay_length: int) -> bytes:
    return one_op("SignalDelay", [(shape, "int16")], [(shape, "int16")], delay_length=delay_length)
