"""One-op UNIDIRECTIONAL_SEQUENCE_LSTM .tflite models (int8 with an int16 cell state, or float32),
built with the tflite-micro model editor as tflm_oneop builds its models: the h and c state are
variable tensors, so TFLM's interpreter carries them from one invoke() to the next (the oracle of
the stateful tests). Weights are seeded random; the output is the LSTM output itself."""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_cases import tflm_oneop


def _tensor(shape, dtype, name, q=None, data=None, variable=False):
    oneop = tflm_oneop()
    me, S = oneop.me, oneop.S
    code = {"int8": S.TensorType.INT8, "int16": S.TensorType.INT16, "int32": S.TensorType.INT32,
            "float32": S.TensorType.FLOAT32}[dtype]
    quant = None if q is None else me.Quantization(float(q[0]), int(q[1]))
    t = me.Tensor(shape=tuple(int(d) for d in shape), dtype=code, name=name, quantization=quant,
                  data=None if data is None else np.ascontiguousarray(data, dtype))
    t.is_variable = variable
    return t


def lstm(batch, steps, inp, hidden, seed=0, int8=True, time_major=False, cell_clip=0.0, x_q=(0.02, 3),
         h_q=(0.0078125, -5), cell_power=-11, activation="TANH", variable_state=True, cifg=False, proj=0,
         proj_bias=True, proj_clip=0.0, peephole=False) -> bytes:
    """UNIDIRECTIONAL_SEQUENCE_LSTM [B, T, I] (``time_major``: [T, B, I]) → [.., H] with TANH cell
    activation; int8: per-tensor int8 weights (zero point 0), int32 biases of scale s_x · s_w,
    int8 h quantized ``h_q`` (also the output's), int16 c of scale 2^cell_power. ``activation`` and
    ``variable_state`` (False: plain tensors) make models tinyfuse must refuse. ``cifg``: no input gate
    (operands 1, 5, 9, 12 absent; TFLM refuses it, int8 too). Float only: ``proj`` P > 0 (projection weights [P, H], a bias [P]
    with ``proj_bias``, the output and h [.., P], ``proj_clip``), ``peephole`` (operands 9-11)."""
    oneop = tflm_oneop()
    me, S = oneop.me, oneop.S
    rng = np.random.default_rng(seed)
    xs = (steps, batch, inp) if time_major else (batch, steps, inp)
    ys = xs[:2] + (hidden,)
    ins = [None] * 24
    if int8:
        ins[0] = _tensor(xs, "int8", "x", x_q)
        for k in range(8):
            shape, s_in = ((hidden, inp), x_q[0]) if k < 4 else ((hidden, hidden), h_q[0])
            ws = float(rng.uniform(0.004, 0.02))
            ins[1 + k] = _tensor(shape, "int8", f"w{k}", (ws, 0), rng.integers(-127, 128, shape))
            if k < 4:
                b_scale = float(np.float32(s_in) * np.float32(ws))
                ins[12 + k] = _tensor((hidden,), "int32", f"b{k}", (b_scale, 0), rng.integers(-3000, 3000, hidden))
        ins[18] = _tensor((batch, hidden), "int8", "h", h_q, variable=variable_state)
        ins[19] = _tensor((batch, hidden), "int16", "c", (2.0 ** cell_power, 0), variable=variable_state)
        out = _tensor(ys, "int8", "y", h_q)
    else:
        ins, out = _float_operands(rng, xs, batch, hidden, variable_state, cifg, proj, proj_bias, peephole)
    if cifg:
        ins[1] = ins[5] = ins[9] = ins[12] = None
    op = me.Operator(opcode=S.BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_LSTM, inputs=ins, outputs=[out])
    op._fb.builtinOptionsType = S.BuiltinOptions.UnidirectionalSequenceLSTMOptions
    op._fb.builtinOptions = S.UnidirectionalSequenceLSTMOptionsT()
    opts = op._fb.builtinOptions
    opts.fusedActivationFunction = getattr(S.ActivationFunctionType, activation)
    opts.cellClip, opts.timeMajor, opts.projClip = cell_clip, time_major, proj_clip
    m = me.Model(description="tinyfuse tflm_lstm")
    m.add_subgraph(tensors=[t for t in ins if t is not None] + [out], operators=[op], outputs=[out],
                   inputs=[ins[0]])
    return bytes(m.build())


def _float_operands(rng, xs, batch, hidden, variable_state, cifg, proj, proj_bias, peephole):
    ins = [None] * 24
    out_size = proj or hidden
    ins[0] = _tensor(xs, "float32", "x")
    for k in range(8):
        shape = (hidden, xs[2]) if k < 4 else (hidden, out_size)
        ins[1 + k] = _tensor(shape, "float32", f"w{k}", data=rng.standard_normal(shape) * 0.4)
    for k in range(4):
        ins[12 + k] = _tensor((hidden,), "float32", f"b{k}", data=rng.standard_normal(hidden) * 0.2)
    if peephole:
        for k in range(3):
            ins[9 + k] = _tensor((hidden,), "float32", f"p{k}", data=rng.standard_normal(hidden) * 0.3)
    if proj:
        ins[16] = _tensor((proj, hidden), "float32", "wp", data=rng.standard_normal((proj, hidden)) * 0.5)
        if proj_bias:
            ins[17] = _tensor((proj,), "float32", "bp", data=rng.standard_normal(proj) * 0.2)
    ins[18] = _tensor((batch, out_size), "float32", "h", variable=variable_state)
    ins[19] = _tensor((batch, hidden), "float32", "c", variable=variable_state)
    return ins, _tensor(xs[:2] + (out_size,), "float32", "y")
