"""int8 UNIDIRECTIONAL_SEQUENCE_LSTM → ``qnn.lstm`` with TFLM's parameters, computed as TFLM's
Prepare computes them (tflite-micro kernels/lstm_eval_common.cc PrepareGateParametersInteger,
CreateInterGateMulParams, CreateLstmCellStateInfo; kernel_util.cc GetQuantizedConvolutionMultipler):

- gate FCs: real multiplier = double(float(s_in · s_w)) / 2^-12 (the product of the two float32
  scales rounded to float32 first), for x with operands 1-4 and for h with operands 5-8;
- inter-gate products from Q0.15 (2^-15): f·c → c: 2^-15 · s_c / s_c; i·c̃ → c: 2^-30 / s_c;
  o·tanh(c) → h: 2^-30 / s_h with h's zero point, all double products of the float scales;
- the cell state's scale must be a power of two 2^p (CheckedLog2); tanh(c) then scales its input by
  (15 + p − 3) bits; cell_clip becomes the int16 clip trunc(clip / s_c) in [−32768, 32767].

The h / c variable tensors are the state (``Graph.assign_variable``); the op's int16 rows holding
int8 values (outputs, h) are cast back to int8.
"""
from __future__ import annotations

import math

import numpy as np

from ... import quant
from ...ir import Constant, Expr, call
from ...ops.recurrent_int8 import tanh_params
from .registry import Graph, Op, Tensor, transpose

GATE_SCALE, ACT_SCALE = 2.0 ** -12, 2.0 ** -15      # Q3.12 gate inputs, Q0.15 activations


def _weights(op: Op, first: int, what: str, dtype: str) -> tuple[np.ndarray, list[float]]:
    """Operands first..first+3 (gates i, f, c, o) stacked, and their per-tensor scales."""
    arrays, scales = [], []
    for k in range(4):
        t = op.inputs[first + k] if first + k < len(op.inputs) else None
        if t is None or t.data is None or t.dtype != dtype:
            raise op.error(f"{what} of gate {'ifco'[k]} must be a constant {dtype} tensor (int8 CIFG models, without "
                           "the input gate, are not supported: TFLM refuses them too)")
        if dtype == "int8" and (t.scale is None or t.scale.size != 1 or int(t.zero_point[0]) != 0):
            raise op.error(f"{what} '{t.name}' must be quantized per tensor with zero point 0 (TFLM's int8 LSTM)")
        arrays.append(t.data)
        scales.append(float(t.scale[0]) if t.scale is not None and t.scale.size else 0.0)
    return np.stack(arrays), scales


def _fc_multipliers(s_in: float, scales: list[float]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    pairs = [quant.quantize_multiplier(float(np.float32(s_in) * np.float32(s)) / GATE_SCALE) for s in scales]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def lstm_params(op: Op, x: Tensor, h: Tensor, c: Tensor, w_scales, r_scales) -> dict:
    """The ``qnn.lstm`` attributes of TFLM's Prepare (module docstring)."""
    s_x, s_h, s_c = (float(np.float32(t.scale[0])) for t in (x, h, c))
    log2 = math.log(s_c) / math.log(2.0)
    power = round(log2)
    if abs(log2 - power) >= 1e-3 or int(c.zero_point[0]) != 0:
        raise op.error(f"cell state scale {s_c} (zero point {int(c.zero_point[0])}) is not a power of two with "
                       "zero point 0, as TFLM's int16 cell state needs")
    in_m, in_s = _fc_multipliers(s_x, w_scales)
    rec_m, rec_s = _fc_multipliers(s_h, r_scales)
    fc_m, fc_s = quant.quantize_multiplier(ACT_SCALE * s_c / s_c)
    ig_m, ig_s = quant.quantize_multiplier(ACT_SCALE * ACT_SCALE / s_c)
    h_m, h_s = quant.quantize_multiplier(ACT_SCALE * ACT_SCALE / s_h)
    clip = float(np.float32(op.opt("cellClip", 0.0) or 0.0))
    cell_clip = int(min(max(clip / s_c, -32768.0), 32767.0)) if clip > 0 else 0
    cell_mul, cell_shift = tanh_params(power)
    return dict(x_zp=int(x.zero_point[0]), h_zp=int(h.zero_point[0]), in_m=in_m, in_s=in_s, rec_m=rec_m,
                rec_s=rec_s, fc_m=fc_m, fc_s=fc_s, ig_m=ig_m, ig_s=ig_s, h_m=h_m, h_s=h_s, cell_clip=cell_clip,
                cell_mul=cell_mul, cell_shift=cell_shift)


def convert_int8_lstm(g: Graph, op: Op, x: Expr, time_major: bool) -> Expr:
    """``x``: the int8 input as [T, B, I] already; returns the op's int8 output (TFLite layout)."""
    x_t, h_t, c_t, out = op.inputs[0], op.inputs[18], op.inputs[19], op.outputs[0]
    if any(k < len(op.inputs) and op.inputs[k] is not None for k in (9, 10, 11)):
        raise op.error("peepholes (operands 9-11) in an int8 LSTM are not supported (TFLM refuses them too)")
    if h_t.dtype != "int8" or c_t.dtype != "int16" or out.dtype != "int8" or out.q != h_t.q:
        raise op.error(f"int8 LSTM needs an int8 output state, an int16 cell state and an int8 output quantized "
                       f"as the output state; got {h_t}, {c_t}, output {out} {out.q} vs {h_t.q}")
    w, w_scales = _weights(op, 1, "input weights", "int8")
    r, r_scales = _weights(op, 5, "recurrent weights", "int8")
    bias, _ = _weights(op, 12, "bias", "int32")
    t_len, batch, inp = x.ty.shape
    hidden = r.shape[1]
    if w.shape != (4, hidden, inp) or r.shape != (4, hidden, hidden) or bias.shape != (4, hidden) \
            or h_t.shape != (batch, hidden) or c_t.shape != (batch, hidden):
        raise op.error(f"weights {list(w.shape)}, recurrent weights {list(r.shape)}, bias {list(bias.shape)} and "
                       f"state {list(h_t.shape)} do not fit input [T={t_len}, B={batch}, I={inp}]")
    params = lstm_params(op, x_t, h_t, c_t, w_scales, r_scales)
    name = op.span
    consts = [Constant(v, f"{name}_{k}") for v, k in ((w, "w"), (r, "r"), (bias.astype(np.int32), "b"))]
    packed = call("qnn.lstm", x, *consts, g.value(h_t), g.value(c_t), span=name, **params)
    size = batch * hidden
    rows = call("slice_view", packed, offset=0, newshape=(t_len, batch, hidden), span=name)
    y = call("cast", rows, dtype="int8", span=name)
    h_new = call("slice_view", packed, offset=t_len * size, newshape=(batch, hidden), span=name)
    g.assign_variable(h_t, call("cast", h_new, dtype="int8", span=name), op)
    g.assign_variable(c_t, call("slice_view", packed, offset=(t_len + 1) * size, newshape=(batch, hidden),
                                span=name), op)
    return y if time_major else transpose(y, (1, 0, 2), name)
