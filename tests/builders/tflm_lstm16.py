"""One-op 16x8 UNIDIRECTIONAL_SEQUENCE_LSTM .tflite models (int16 input, output and hidden state, int8
weights, int64 biases, int16 cell state), built with the tflite-micro model editor as tests/builders/
tflm_lstm.py builds the int8 ones: the h and c state are variable tensors, so TFLM's interpreter carries
them from one invoke() to the next. TFLM runs them with EvalLstm<int16_t, int8_t, int16_t, int64_t>
(kernels/unidirectional_sequence_lstm.cc)."""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_cases import tflm_oneop


def _tensor(shape, dtype, name, q=None, data=None, variable=False):
    oneop = tflm_oneop()
    me, S = oneop.me, oneop.S
    code = {"int8": S.TensorType.INT8, "int16": S.TensorType.INT16, "int64": S.TensorType.INT64}[dtype]
    quant = None if q is None else me.Quantization(float(q[0]), int(q[1]))
    t = me.Tensor(shape=tuple(int(d) for d in shape), dtype=code, name=name, quantization=quant,
                  data=None if data is None else np.ascontiguousarray(data, dtype))
    t.is_variable = variable
    return t


def lstm16(batch, steps, inp, hidden, seed=0, time_major=False, cell_clip=0.0, x_q=(2.0 ** -12, 0),
           h_q=(2.0 ** -15, 0), cell_power=-11, w_scale=(0.004, 0.02), bias_range=2 ** 20) -> bytes:
    """UNIDIRECTIONAL_SEQUENCE_LSTM [B, T, I] (``time_major``: [T, B, I]) → int16 [.., H], TANH cell
    activation: per-tensor int8 weights (zero point 0, scales drawn from ``w_scale``), int64 biases of
    scale s_x · s_w drawn in ±``bias_range``, int16 h quantized ``h_q`` (also the output's), int16 c of
    scale 2^cell_power. Seeded random weights."""
    oneop = tflm_oneop()
    me, S = oneop.me, oneop.S
    rng = np.random.default_rng(seed)
    xs = (steps, batch, inp) if time_major else (batch, steps, inp)
    ins = [None] * 24
    ins[0] = _tensor(xs, "int16", "x", x_q)
    for k in range(8):
        shape, s_in = ((hidden, inp), x_q[0]) if k < 4 else ((hidden, hidden), h_q[0])
        ws = float(rng.uniform(*w_scale))
        ins[1 + k] = _tensor(shape, "int8", f"w{k}", (ws, 0), rng.integers(-127, 128, shape))
        if k < 4:
            b_scale = float(np.float32(s_in) * np.float32(ws))
            ins[12 + k] = _tensor((hidden,), "int64", f"b{k}", (b_scale, 0),
                                  rng.integers(-bias_range, bias_range + 1, hidden))
    ins[18] = _tensor((batch, hidden), "int16", "h", h_q, variable=True)
    ins[19] = _tensor((batch, hidden), "int16", "c", (2.0 ** cell_power, 0), variable=True)
    out = _tensor(xs[:2] + (hidden,), "int16", "y", h_q)
    op = me.Operator(opcode=S.BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_LSTM, inputs=ins, outputs=[out])
    op._fb.builtinOptionsType = S.BuiltinOptions.UnidirectionalSequenceLSTMOptions
    op._fb.builtinOptions = S.UnidirectionalSequenceLSTMOptionsT()
    opts = op._fb.builtinOptions
    opts.fusedActivationFunction = S.ActivationFunctionType.TANH
    opts.cellClip, opts.timeMajor = cell_clip, time_major
    m = me.Model(description="tinyfuse tflm_lstm16")
    m.add_subgraph(tensors=[t for t in ins if t is not None] + [out], operators=[op], outputs=[out],
                   inputs=[ins[0]])
    return bytes(m.build())
