"""``qnn.lstm``: TFLite's int8 UNIDIRECTIONAL_SEQUENCE_LSTM (int8 activations and weights, int32
bias, int16 gates and cell state), bit-exact with TFLM (tflite-micro kernels/lstm_eval.h,
lstm_eval_common.cc and the reference_integer_ops FullyConnected / MulElementwise / Logistic and
Tanh int16 kernels they call). The arithmetic, per batch row and time step, gates g ∈ (i, f, c, o):

    fc_x[g] = sat16(mbqm(Σ_k w[g, j, k] · (x_k − x_zp) + bias[g, j], in_m[g], in_s[g]))
    fc_h[g] = sat16(mbqm(Σ_k r[g, j, k] · (h_k − h_zp), rec_m[g], rec_s[g]))     (no recurrent bias)
    z[g]    = sat16(fc_x[g] + fc_h[g]);  i, f, o = sigmoid16(z);  c̃ = tanh16(z[c], multiplier 3, shift 0)
    c       = sat16(sat16(mbqm(f · c, fc_m, fc_s)) + sat16(mbqm(i · c̃, ig_m, ig_s))),
              clamped to ±cell_clip (the int16 clip, 0 = none)
    h       = sat8(h_zp + mbqm(tanh16(c, cell_mul, cell_shift) · o, h_m, h_s));   output_t = h

The gate pre-activations have scale 2^-12 (Q3.12), the sigmoid/tanh outputs 2^-15 (Q0.15);
``mbqm`` is the double-rounding MultiplyByQuantizedMultiplier (compiler/quant.py). sigmoid16 and
tanh16 interpolate TFLite's 256-entry table of sigmoid(k/24) in Q0.16 (``SIGMOID_TABLE_Q16``, the
data of tensorflow/lite/kernels/internal/common.h ``sigmoid_table_uint16``): for tanh16,
tanh(x) = 2·sigmoid(2x) − 1.

Operands: ``x`` int8 [T, B, I] (time major), ``w`` int8 [4, H, I], ``r`` int8 [4, H, H], ``bias``
int32 [4, H], ``h0`` int8 [B, H], ``c0`` int16 [B, H]. Output int16 [T + 2, B, H]: rows 0..T−1 the
outputs (int8 values), row T the last h (int8 values), row T + 1 the last c; the converter casts the
int8 rows to int8 and slices (compiler/frontend/tflite/rnn.py).
"""
from __future__ import annotations

import numpy as np

from .. import quant
from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType

SIGMOID_TABLE_Q16 = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064,
    42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464,
    50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503,
    56823, 57133, 57433, 57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666,
    62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968,
    64030, 64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687,
    64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258, 65269, 65280, 65291,
    65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367, 65374, 65381, 65387, 65393, 65399, 65404,
    65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465,
    65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524, 65525, 65525,
    65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530,
    65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65535
], np.int64)
GATES = ("i", "f", "c", "o")        # operand order of w, r, bias (TFLite's operands 1-4, 5-8, 12-15)


def sigmoid16(x: np.ndarray) -> np.ndarray:
    """reference_integer_ops::Logistic on int16 Q3.12 → Q0.15 with input multiplier 0 (power of two:
    the input times 3, then 9 fraction bits interpolate between table entries)."""
    v = np.asarray(x, np.int64) * 3
    a = np.abs(v)
    uh = a >> 9
    inside = uh < 255
    ua = SIGMOID_TABLE_Q16[np.minimum(uh, 254)]
    ub = SIGMOID_TABLE_Q16[np.minimum(uh + 1, 255)]
    res = np.where(inside, (ua << 9) + (a & 0x1FF) * (ub - ua), 0x7FFF << 10)
    res = np.where(v >= 0, res + (1 << 9), (1 << 25) - res + (1 << 9) - 1)
    return (res >> 10).astype(np.int16)


def tanh_params(cell_scale_power: int) -> tuple[int, int]:
    """(multiplier, right shift) TFLM's lstm_internal::Tanh passes for an input of scale
    2^cell_scale_power, after Tanh's power-of-two case (multiplier 0 → 3 << shift, shift 0)."""
    left = 15 + cell_scale_power - 3
    if left < 0:
        return 3, -left
    return 3 << left, 0


def tanh16(x: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """reference_integer_ops::Tanh on int16 → Q0.15: (x · multiplier + round) >> shift, then the
    table interpolated with 8 fraction bits."""
    rnd = (1 << (shift - 1)) if shift > 0 else 0
    v = (np.asarray(x, np.int64) * multiplier + rnd) >> shift
    a = np.abs(v)
    uh = a >> 8
    inside = uh < 255
    ua = SIGMOID_TABLE_Q16[np.minimum(uh, 254)]
    ub = SIGMOID_TABLE_Q16[np.minimum(uh + 1, 255)]
    res = np.where(inside, (ua << 8) + (a & 0xFF) * (ub - ua), 0xFFFF << 8)
    res = np.where(v >= 0, res - (1 << 23) + (1 << 7), -res + (1 << 23) + (1 << 7) - 1)
    return (res >> 8).astype(np.int16)


def _sat(x, lo, hi):
    return np.clip(np.asarray(x, np.int64), lo, hi)


def _mul16(a, b, m, s, lo=-32768, hi=32767, zero_point=0):
    """MulElementwise of two int16 vectors (offsets 0): sat(zp + mbqm(a · b, m, s))."""
    return _sat(zero_point + quant.mbqm(np.asarray(a, np.int64) * np.asarray(b, np.int64), m, s), lo, hi)


@register_op
class QLSTM(OpDef):
    """TFLM's int8 LSTM (module docstring): x, w, r, bias, h0, c0 → int16 [T + 2, B, H]."""
    name, pattern, num_inputs = "qnn.lstm", OpPattern.OPAQUE, 6
    attrs = {"x_zp": 0, "h_zp": 0, "in_m": (0,) * 4, "in_s": (0,) * 4, "rec_m": (0,) * 4, "rec_s": (0,) * 4,
             "fc_m": 0, "fc_s": 0, "ig_m": 0, "ig_s": 0, "h_m": 0, "h_s": 0, "cell_clip": 0,
             "cell_mul": 3, "cell_shift": 0}
    cost_family = "dense"

    def infer(self, args, attrs):
        x, w, r, b, h0, c0 = args
        ok = x.ndim == 3 and w.ndim == 3 and w.shape[0] == 4
        t, batch, inp = x.shape if x.ndim == 3 else (0, 0, 0)
        hidden = w.shape[1] if ok else 0
        want = [(x, (t, batch, inp), "int8"), (w, (4, hidden, inp), "int8"), (r, (4, hidden, hidden), "int8"),
                (b, (4, hidden), "int32"), (h0, (batch, hidden), "int8"), (c0, (batch, hidden), "int16")]
        if not ok or any(tuple(a.shape) != s or a.dtype != d for a, s, d in want):
            raise TinyfuseError(f"qnn.lstm: needs int8 x [T, B, I], w [4, H, I], r [4, H, H], int32 bias [4, H], "
                                f"int8 h0 [B, H], int16 c0 [B, H]; got {x}, {w}, {r}, {b}, {h0}, {c0}")
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
                fx = _sat(quant.mbqm(xs @ w64[g].T + b64[g], in_m[g], in_s[g]), -32768, 32767)
                fh = _sat(quant.mbqm((h - h_zp) @ r64[g].T, rec_m[g], rec_s[g]), -32768, 32767)
                z.append(_sat(fx + fh, -32768, 32767))
            i, f, o = (sigmoid16(z[k]).astype(np.int64) for k in (0, 1, 3))
            cand = tanh16(z[2], 3, 0).astype(np.int64)
            c = _sat(_mul16(f, c, fc_m, fc_s) + _mul16(i, cand, ig_m, ig_s), -32768, 32767)
            if cell_clip > 0:
                c = np.clip(c, -cell_clip, cell_clip)
            h = _mul16(tanh16(c, cell_mul, cell_shift), o, h_m, h_s, -128, 127, h_zp)
            out[t] = h
        out[t_len], out[t_len + 1] = h, c
        return out
