"""16x8 UNIDIRECTIONAL_SEQUENCE_LSTM (int16 input, output and output state, int8 weights, int64 bias,
int16 cell state) → ``qnn.lstm16`` (compiler/ops/recurrent_int16.py), with TFLM's parameters computed as
for the int8 LSTM (rnn_int8.py ``lstm_params``: TFLM's PrepareGateParametersInteger is the same for both
kernels). The h / c variable tensors are the state (``Graph.assign_variable``)."""
from __future__ import annotations

import numpy as np

from ...ir import Constant, Expr, call
from .registry import Graph, Op, transpose
from .rnn_int8 import _weights, lstm_params


def convert_int16_lstm(g: Graph, op: Op, x: Expr, time_major: bool) -> Expr:
    """``x``: the int16 input as [T, B, I] already; returns the op's int16 output (TFLite layout).
    Raises TinyfuseError (one line) for peepholes, a projection, or state / output / bias types other
    than TFLM's 16x8 kernel takes."""
    x_t, h_t, c_t, out = op.inputs[0], op.inputs[18], op.inputs[19], op.outputs[0]
    if any(k < len(op.inputs) and op.inputs[k] is not None for k in (9, 10, 11, 16, 17)):
        raise op.error("peepholes (operands 9-11) or a projection (16, 17) in a 16x8 LSTM are not supported")
    if h_t.dtype != "int16" or c_t.dtype != "int16" or out.dtype != "int16" or out.q != h_t.q:
        raise op.error(f"16x8 LSTM needs an int16 output state, an int16 cell state and an int16 output quantized "
                       f"as the output state; got {h_t}, {c_t}, output {out} {out.q} vs {h_t.q}")
    w, w_scales = _weights(op, 1, "input weights", "int8")
    r, r_scales = _weights(op, 5, "recurrent weights", "int8")
    bias, _ = _weights(op, 12, "bias", "int64")
    t_len, batch, inp = x.ty.shape
    hidden = r.shape[1]
    if w.shape != (4, hidden, inp) or r.shape != (4, hidden, hidden) or bias.shape != (4, hidden) \
            or h_t.shape != (batch, hidden) or c_t.shape != (batch, hidden):
        raise op.error(f"weights {list(w.shape)}, recurrent weights {list(r.shape)}, bias {list(bias.shape)} and "
                       f"state {list(h_t.shape)} do not fit input [T={t_len}, B={batch}, I={inp}]")
    params = lstm_params(op, x_t, h_t, c_t, w_scales, r_scales)
    name = op.span
    consts = [Constant(v, f"{name}_{k}") for v, k in ((w, "w"), (r, "r"), (bias.astype(np.int64), "b"))]
    packed = call("qnn.lstm16", x, *consts, g.value(h_t), g.value(c_t), span=name, **params)
    size = batch * hidden
    y = call("slice_view", packed, offset=0, newshape=(t_len, batch, hidden), span=name)
    g.assign_variable(h_t, call("slice_view", packed, offset=t_len * size, newshape=(batch, hidden), span=name), op)
    g.assign_variable(c_t, call("slice_view", packed, offset=(t_len + 1) * size, newshape=(batch, hidden),
                                span=name), op)
    return y if time_major else transpose(y, (1, 0, 2), name)
