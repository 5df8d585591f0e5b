"""Recurrent layers, float32: ``nn.lstm`` (ONNX LSTM-14) and ``nn.gru`` (ONNX GRU-14), one kernel
per layer that loops over the time steps (gate matmuls + activations, weights constant).

Operands, in the ONNX layout ``layout = 0`` (the converter transposes ``layout = 1`` models):
``x`` [T, B, I]; ``w`` [D, G·H, I]; ``r`` [D, G·H, H]; ``b`` [D, 2·G·H] (Wb then Rb); ``h0`` [D, B, H];
LSTM also ``c0`` [D, B, H] and the peepholes ``p`` [D, 3·H]. G = 4 (LSTM gates i, o, f, c) or
3 (GRU gates z, r, h); D = 2 for ``direction = "bidirectional"`` (forward then reverse), else 1.
Absent optional inputs arrive as zeros (the ONNX defaults).

Output, one packed float32 tensor the converter slices into the ONNX outputs (contiguous views):
LSTM [T + 2, D, B, H]: rows 0..T−1 are Y, row T is Y_h (the last h of each direction), row T + 1
is Y_c; GRU [T + 1, D, B, H]: Y then Y_h.

TFLite's LSTM variants (lstm_eval.cc, float; the converter compiler/frontend/tflite/rnn.py): ``cifg``
= 1 couples the input gate to the forget gate, i = 1 − f, and W, R have no input-gate rows ([D, 3·H, .],
gates o, f, c; the bias keeps its 2·4·H); two more
operands ``pw`` [D, P, H] and ``pb`` [D, P] project the output, h' = pw · (o ⊙ h(c')) + pb clamped to
±``proj_clip`` when > 0; then R is [D, 4·H, P], h0 [D, B, P] and the output is flat float32
[T·D·B·P + D·B·P + D·B·H]: Y [T, D, B, P], Y_h [D, B, P], Y_c [D, B, H] one after the other. The formulas (ONNX operator docs, default activations
f = sigmoid, g = h = tanh; ``clip`` > 0 clamps every gate pre-activation to [−clip, clip] as
onnxruntime does; ``cell_clip`` > 0 clamps c' to [−cell_clip, cell_clip] as TFLite's LSTM does;
0 means no clip)::

    LSTM  i = f(W_i x + R_i h + P_i ⊙ c + Wb_i + Rb_i)      f_ = f(W_f x + R_f h + P_f ⊙ c + Wb_f + Rb_f)
          c̃ = g(W_c x + R_c h + Wb_c + Rb_c)               c' = f_ ⊙ c + i ⊙ c̃
          o = f(W_o x + R_o h + P_o ⊙ c' + Wb_o + Rb_o)     h' = o ⊙ h(c')
    GRU   z = f(W_z x + R_z h + Wb_z + Rb_z)                r = f(W_r x + R_r h + Wb_r + Rb_r)
          h̃ = g(W_h x + R_h (r ⊙ h) + Rb_h + Wb_h)                     linear_before_reset = 0
          h̃ = g(W_h x + r ⊙ (R_h h + Rb_h) + Wb_h)                     linear_before_reset = 1
          h' = (1 − z) ⊙ h̃ + z ⊙ h
"""
from __future__ import annotations

import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType

DIRECTIONS = {"forward": 1, "reverse": 1, "bidirectional": 2}


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _check(op: str, gates: int, args, attrs) -> tuple[int, int, int, int, int]:
    """(T, B, I, H, D) after checking every operand's shape and dtype; TinyfuseError otherwise."""
    x, w, r, b, h0 = args[:5]
    hidden, direction = attrs["hidden_size"], attrs["direction"]
    out = args[7].shape[1] if len(args) == 9 and args[7].ndim == 3 else hidden     # the projection's P
    if direction not in DIRECTIONS:
        raise TinyfuseError(f"{op}: direction '{direction}' is not forward, reverse or bidirectional")
    d = DIRECTIONS[direction]
    if x.ndim != 3:
        raise TinyfuseError(f"{op}: x must be [T, B, I], got {list(x.shape)}")
    t, batch, inp = x.shape
    rows = (gates - bool(attrs.get("cifg"))) * hidden          # CIFG: no input-gate rows
    want = {"w": (w, (d, rows, inp)), "r": (r, (d, rows, out)),
            "b": (b, (d, 2 * gates * hidden)), "h0": (h0, (d, batch, out))}
    if len(args) > 5:
        want.update(c0=(args[5], (d, batch, hidden)), p=(args[6], (d, 3 * hidden)))
    if len(args) == 9:
        want.update(pw=(args[7], (d, out, hidden)), pb=(args[8], (d, out)))
    for what, (ty, shape) in want.items():
        if tuple(ty.shape) != shape or ty.dtype != "float32":
            raise TinyfuseError(f"{op}: {what} must be float32 {list(shape)} (x {list(x.shape)}, hidden_size "
                                f"{hidden}, {d} direction(s)), got {ty}")
    if x.dtype != "float32":
        raise TinyfuseError(f"{op}: x must be float32, got {x.dtype}")
    return t, batch, inp, hidden, d


def _steps(t: int, direction: str, k: int) -> range:
    """Time order of direction k: reverse (and the second half of bidirectional) run backwards."""
    backwards = direction == "reverse" or (direction == "bidirectional" and k == 1)
    return range(t - 1, -1, -1) if backwards else range(t)


def _clip(v: np.ndarray, clip: float) -> np.ndarray:
    return np.clip(v, -clip, clip) if clip > 0 else v


@register_op
class LSTM(OpDef):
    """ONNX LSTM-14, float32 (module docstring): x, w, r, b, h0, c0, p → [T + 2, D, B, H]."""
    name, pattern, num_inputs = "nn.lstm", OpPattern.OPAQUE, None     # 7, or 9 with the projection
    attrs = {"hidden_size": 1, "direction": "forward", "clip": 0.0, "cell_clip": 0.0, "cifg": 0, "proj_clip": 0.0}
    cost_family = "dense"   # gate matmuls dominate

    def infer(self, args, attrs):
        if len(args) not in (7, 9):
            raise TinyfuseError(f"{self.name}: takes 7 operands, or 9 with a projection, got {len(args)}")
        t, batch, _, hidden, d = _check(self.name, 4, args, attrs)
        if len(args) == 9:
            p = args[7].shape[1]
            return TensorType(((t + 1) * d * batch * p + d * batch * hidden,), "float32")
        return TensorType((t + 2, d, batch, hidden), "float32")

    def compute(self, x, w, r, b, h0, c0, p, *proj, hidden_size, direction, clip, cell_clip, cifg, proj_clip):
        hs = hidden_size
        t_len = x.shape[0]
        out = np.zeros((t_len + 1,) + h0.shape, np.float32)
        cells = np.zeros(c0.shape, np.float32)
        if cifg:                        # the input-gate rows, never read, as zeros
            w, r = (np.concatenate([np.zeros((a.shape[0], hs, a.shape[2]), a.dtype), a], axis=1) for a in (w, r))
        for k in range(w.shape[0]):
            h, c = h0[k].astype(np.float32), c0[k].astype(np.float32)
            bias = b[k, :4 * hs] + b[k, 4 * hs:]
            pi, po, pf = p[k, :hs], p[k, hs:2 * hs], p[k, 2 * hs:]
            for t in _steps(t_len, direction, k):
                g = x[t] @ w[k].T + h @ r[k].T + bias
                f = _sigmoid(_clip(g[:, 2 * hs:3 * hs] + pf * c, clip))
                i = 1 - f if cifg else _sigmoid(_clip(g[:, :hs] + pi * c, clip))
                c = _clip(f * c + i * np.tanh(_clip(g[:, 3 * hs:], clip)), cell_clip)
                o = _sigmoid(_clip(g[:, hs:2 * hs] + po * c, clip))
                h = (o * np.tanh(c)).astype(np.float32)
                if proj:
                    h = _clip(h @ proj[0][k].T + proj[1][k], proj_clip).astype(np.float32)
                out[t, k] = h
            out[t_len, k], cells[k] = h, c
        if proj:
            return np.concatenate([out.reshape(-1), cells.reshape(-1)])
        return np.concatenate([out, cells[None]])


@register_op
class GRU(OpDef):
    """ONNX GRU-14, float32 (module docstring): x, w, r, b, h0 → [T + 1, D, B, H]."""
    name, pattern, num_inputs = "nn.gru", OpPattern.OPAQUE, 5
    attrs = {"hidden_size": 1, "direction": "forward", "clip": 0.0, "linear_before_reset": 0}
    cost_family = "dense"   # gate matmuls dominate

    def infer(self, args, attrs):
        t, batch, _, hidden, d = _check(self.name, 3, args, attrs)
        return TensorType((t + 1, d, batch, hidden), "float32")

    def compute(self, x, w, r, b, h0, hidden_size, direction, clip, linear_before_reset):
        hs = hidden_size
        t_len = x.shape[0]
        out = np.zeros((t_len + 1,) + h0.shape, np.float32)
        for k in range(w.shape[0]):
            h = h0[k].astype(np.float32)
            wb, rb = b[k, :3 * hs], b[k, 3 * hs:]
            for t in _steps(t_len, direction, k):
                gx = x[t] @ w[k].T + wb
                gh = h @ r[k, :2 * hs].T + rb[:2 * hs]
                z = _sigmoid(_clip(gx[:, :hs] + gh[:, :hs], clip))
                rr = _sigmoid(_clip(gx[:, hs:2 * hs] + gh[:, hs:], clip))
                rh = r[k, 2 * hs:]
                if linear_before_reset:
                    cand = gx[:, 2 * hs:] + rr * (h @ rh.T + rb[2 * hs:])
                else:
                    cand = gx[:, 2 * hs:] + (rr * h) @ rh.T + rb[2 * hs:]
                h = ((1 - z) * np.tanh(_clip(cand, clip)) + z * h).astype(np.float32)
                out[t, k] = h
            out[t_len, k] = h
        return out
