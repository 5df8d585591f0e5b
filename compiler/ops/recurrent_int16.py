"""``qnn.lstm16``: TFLite's 16x8 UNIDIRECTIONAL_SEQUENCE_LSTM (int16 activations and hidden state,
int8 weights, int64 bias, int16 gates and cell state), bit-exact with TFLM's
EvalLstm<int16_t, int8_t, int16_t, int64_t> (tflite-micro kernels/unidirectional_sequence_lstm.cc,
lstm_eval.h). It is ``qnn.lstm`` (compiler/ops/recurrent_int8.py) with two differences:

- the gate fully connected layers are reference_integer_ops::FullyConnected with an int64 bias: the
  sum Σ w·(x − x_zp) + bias is int64 and is requantized by TFLM's int64 MultiplyByQuantizedMultiplier
  (the Q31 multiplier reduced to Q15, one rounding shift: ``quant.mbqm64``), then clamped to int16;
  the recurrent layer (no bias) likewise;
- the hidden state and the output are int16: h = sat16(h_zp + mbqm(tanh16(c) · o, h_m, h_s)).

Operands: ``x`` int16 [T, B, I] (time major), ``w`` int8 [4, H, I], ``r`` int8 [4, H, H], ``bias``
int64 [4, H], ``h0`` int16 [B, H], ``c0`` int16 [B, H]. Output int16 [T + 2, B, H]: rows 0..T−1 the
outputs, row T the last h, row T + 1 the last c. Attributes as ``qnn.lstm``.
"""
from __future__ import annotations

import numpy as np

from .. import quant
from ..errors import TinyfuseError
from ..ir.op import register_op
from ..ir.types import TensorType
from .recurrent_int8 import QLSTM, _mul16, _sat, sigmoid16, tanh16

I16 = (-32768, 32767)


@register_op
class QLSTM16(QLSTM):
    """TFLM's 16x8 LSTM (module docstring): x, w, r, bias, h0, c0 → int16 [T + 2, B, H]."""
    name = "qnn.lstm16"

    def infer(self, args, attrs):
        x, w, r, b, h0, c0 = args
        ok = x.ndim == 3 and w.ndim == 3 and w.shape[0] == 4
        t, batch, inp = x.shape if x.ndim == 3 else (0, 0, 0)
        hidden = w.shape[1] if ok else 0
        want = [(x, (t, batch, inp), "int16"), (w, (4, hidden, inp), "int8"), (r, (4, hidden, hidden), "int8"),
                (b, (4, hidden), "int64"), (h0, (batch, hidden), "int16"), (c0, (batch, hidden), "int16")]
        if not ok or any(tuple(a.shape) != s or a.dtype != d for a, s, d in want):
            raise TinyfuseError(f"qnn.lstm16: needs int16 x [T, B, I], int8 w [4, H, I], int8 r [4, H, H], int64 "
                                f"bias [4, H], int16 h0 [B, H], int16 c0 [B, H]; got {x}, {w}, {r}, {b}, {h0}, {c0}")
        return TensorType((t + 2, batch, hidden), "int16")

    def compute(self, x, w, r, bias, h0, c0, x_zp, h_zp, in_m, in_s, rec_m, rec_s, fc_m, fc_s, ig_m, ig_s,
                h_m, h_s, cell_clip, cell_mul, cell_shift):
        t_len = x.shape[0]
        out = np.zeros((t_len + 2,) + h0.shape, np.int16)
        h, c = h0.astype(np.int64), c0.astype(np.int64)
        w64, r64, b64 = w.astype(np.int64), r.astype(np.int64), bias.astype(np.int64)
        for t in range(t_len):
            xs = x[t].astype(np.int64) - x_zp
            z = []
            for g in range(4):
                fx = _sat(quant.mbqm64(xs @ w64[g].T + b64[g], in_m[g], in_s[g]), *I16)
                fh = _sat(quant.mbqm64((h - h_zp) @ r64[g].T, rec_m[g], rec_s[g]), *I16)
                z.append(_sat(fx + fh, *I16))
            i, f, o = (sigmoid16(z[k]).astype(np.int64) for k in (0, 1, 3))
            cand = tanh16(z[2], 3, 0).astype(np.int64)
            c = _sat(_mul16(f, c, fc_m, fc_s) + _mul16(i, cand, ig_m, ig_s), *I16)
            if cell_clip > 0:
                c = np.clip(c, -cell_clip, cell_clip)
            h = _mul16(tanh16(c, cell_mul, cell_shift), o, h_m, h_s, *I16, h_zp)
            out[t] = h
        out[t_len], out[t_len + 1] = h, c
        return out
