"""Recurrent layers, float32: ``nn.lstm`` (ONNX LSTM-14) and ``nn.gru`` (ONNX GRU-14), one kernel
per layer that loops over the time steps (gate matmuls + activations, weights constant).

Operands, in the ONNX layout ``layout = 0`` (the converter transposes ``layout = 1`` models):
``x`` [T, B, I]; ``w`` [D, G·H, I]; ``r`` [D, G·H, H]; ``b`` [D, 2·G·H] (Wb then Rb); ``h0`` [D, B, H];
LSTM also ``c0`` [D, B, H] and the peepholes ``p`` [D, 3·H]. G = 4 (LSTM gates i, o, f, c) or
3 (GRU gates z, r, h); D = 2 for ``direction = "bidirectional"`` (forward then reverse), else 1.
Absent optional inputs arrive as zeros (the ONNX defaults). An optional last operand ``lens``, int32
[B] (ONNX ``sequence_lens``), runs batch row b over its first ``lens[b]`` steps only (reverse: from step
lens[b] − 1 down to 0); Y is zero past a row's length and Y_h / Y_c hold the state after the row's own
last step, as onnxruntime computes them (zeros for a row of length 0); a length outside [0, T]
is clamped to it.

``activations``: () for the defaults, else one (name, alpha, beta) triple per activation and direction
(LSTM f, g, h; GRU f, g; forward first) from ``ACTIVATIONS`` (the ONNX LSTM-14 / GRU-14 list).
LSTM ``input_forget`` = 1 couples the gates: f_ = 1 − i (as onnxruntime's deep_cpu_lstm).

Output, one packed float32 tensor the converter slices into the ONNX outputs (contiguous views):
LSTM [T + 2, D, B, H]: rows 0..T−1 are Y, row T is Y_h (the last h of each direction), row T + 1
is Y_c; GRU [T + 1, D, B, H]: Y then Y_h.

TFLite's LSTM variants (lstm_eval.cc, float; the converter compiler/frontend/tflite/rnn.py): ``cifg``
= 1 couples the input gate to the forget gate, i = 1 − f, and W, R have no input-gate rows ([D, 3·H, .],
gates o, f, c; the bias keeps its 2·4·H); two more
operands ``pw`` [D, P, H] and ``pb`` [D, P] project the output, h' = pw · (o ⊙ h(c')) + pb clamped to
±``proj_clip`` when > 0; then R is [D, 4·H, P], h0 [D, B, P] and the output is flat float32
[T·D·B·P + D·B·P + D·B·H]: Y [T, D, B, P], Y_h [D, B, P], Y_c [D, B, H] one after the other.

LSTM operand positions follow from their count: 7 = x, w, r, b, h0, c0, p; 8 = those and ``lens``
(ONNX only); 9 = those and ``pw``, ``pb`` (TFLite only). ONNX has no projection and TFLite no
sequence_lens, so a layer never has both; ``cifg`` and ``input_forget`` together are refused. The
formulas (ONNX operator docs, default activations
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


# ONNX RNN activation functions (LSTM-14 / GRU-14 operator docs): name → f(v, alpha, beta), float64
ACTIVATIONS = {
    "relu": lambda v, a, b: np.maximum(v, 0.0),
    "tanh": lambda v, a, b: np.tanh(v),
    "sigmoid": lambda v, a, b: 1.0 / (1.0 + np.exp(-v)),
    "affine": lambda v, a, b: a * v + b,
    "leakyrelu": lambda v, a, b: np.where(v >= 0, v, a * v),
    "thresholdedrelu": lambda v, a, b: np.where(v > a, v, 0.0),
    "scaledtanh": lambda v, a, b: a * np.tanh(b * v),
    "hardsigmoid": lambda v, a, b: np.clip(a * v + b, 0.0, 1.0),
    "elu": lambda v, a, b: np.where(v >= 0, v, a * (np.exp(np.minimum(v, 0.0)) - 1.0)),
    "softsign": lambda v, a, b: v / (1.0 + np.abs(v)),
    "softplus": lambda v, a, b: np.logaddexp(0.0, v),
}
DEFAULTS = {"nn.lstm": ("sigmoid", "tanh", "tanh"), "nn.gru": ("sigmoid", "tanh")}


def direction_activations(op: str, activations, k: int) -> list[tuple[str, float, float]]:
    """The (name, alpha, beta) of each activation slot (LSTM f, g, h; GRU f, g) of direction k."""
    n = len(DEFAULTS[op])
    if not activations:
        return [(a, 0.0, 0.0) for a in DEFAULTS[op]]
    return [tuple(a) for a in activations[k * n:(k + 1) * n]]


def _act(slot, v: np.ndarray) -> np.ndarray:
    name, alpha, beta = slot
    return ACTIVATIONS[name](np.asarray(v, np.float64), alpha, beta)


def _check_extras(op: str, args, attrs, d: int, batch: int, lens_at: int) -> None:
    """The optional ``lens`` operand and the ``activations`` attribute; TinyfuseError otherwise."""
    if len(args) not in (lens_at, lens_at + 1):
        raise TinyfuseError(f"{op}: takes {lens_at} operands and an optional lens, got {len(args)}")
    if len(args) > lens_at and (tuple(args[lens_at].shape) != (batch,) or args[lens_at].dtype != "int32"):
        raise TinyfuseError(f"{op}: lens must be int32 [{batch}], got {args[lens_at]}")
    acts = attrs.get("activations") or ()
    n = len(DEFAULTS[op]) * d
    if acts and (len(acts) != n or any(len(a) != 3 or a[0] not in ACTIVATIONS for a in acts)):
        raise TinyfuseError(f"{op}: activations {list(acts)} are not {n} (name, alpha, beta) triples of "
                            f"{', '.join(ACTIVATIONS)}")


def _row_lens(lens, t_len: int, batch: int) -> np.ndarray:
    if lens is None:
        return np.full(batch, t_len)
    return np.clip(np.asarray(lens, np.int64).reshape(-1), 0, t_len)


@register_op
class LSTM(OpDef):
    """ONNX LSTM-14 / TFLite LSTM, float32 (module docstring): x, w, r, b, h0, c0, p, then nothing
    (7 operands) → [T + 2, D, B, H]; ``lens`` (8, ONNX) → [T + 2, D, B, H]; ``pw``, ``pb`` (9, TFLite
    projection) → flat [(T + 1)·D·B·P + D·B·H]."""
    name, pattern, num_inputs = "nn.lstm", OpPattern.OPAQUE, None     # 7, 8 with lens, 9 with the projection
    attrs = {"hidden_size": 1, "direction": "forward", "clip": 0.0, "cell_clip": 0.0, "activations": (),
             "input_forget": 0, "cifg": 0, "proj_clip": 0.0}
    cost_family = "dense"   # gate matmuls dominate

    def infer(self, args, attrs):
        if len(args) not in (7, 8, 9):
            raise TinyfuseError(f"{self.name}: takes 7 operands, 8 with lens or 9 with a projection, got {len(args)}")
        if attrs.get("cifg") and attrs.get("input_forget"):
            raise TinyfuseError(f"{self.name}: cifg (i = 1 − f) and input_forget (f = 1 − i) exclude each other")
        t, batch, _, hidden, d = _check(self.name, 4, args, attrs)
        _check_extras(self.name, args[:7] if len(args) == 9 else args, attrs, d, batch, 7)
        if len(args) == 9:
            p = args[7].shape[1]
            return TensorType(((t + 1) * d * batch * p + d * batch * hidden,), "float32")
        return TensorType((t + 2, d, batch, hidden), "float32")

    def compute(self, x, w, r, b, h0, c0, p, *extra, hidden_size, direction, clip, cell_clip,
                activations=(), input_forget=0, cifg=0, proj_clip=0.0):
        hs, (t_len, batch) = hidden_size, x.shape[:2]
        proj = extra if len(extra) == 2 else None
        rows = _row_lens(extra[0] if len(extra) == 1 else None, t_len, batch)
        out = np.zeros((t_len + 1,) + h0.shape, np.float32)
        cells = np.zeros(c0.shape, np.float32)
        if cifg:                        # the input-gate rows, never read, as zeros
            w, r = (np.concatenate([np.zeros((a.shape[0], hs, a.shape[2]), a.dtype), a], axis=1) for a in (w, r))
        cfg = (hs, clip, cell_clip, input_forget, cifg)
        for k in range(w.shape[0]):
            acts = direction_activations(self.name, activations, k)
            bias = b[k, :4 * hs] + b[k, 4 * hs:]
            for n in range(batch):
                h, c = h0[k, n].astype(np.float64), c0[k, n].astype(np.float64)
                for t in _steps(int(rows[n]), direction, k):
                    h, c = self._step(w[k] @ x[t, n] + r[k] @ h + bias, c, p[k], acts, cfg)
                    if proj is not None:
                        h = _clip(proj[0][k] @ h + proj[1][k], proj_clip)
                    out[t, k, n] = h
                out[t_len, k, n], cells[k, n] = (h, c) if rows[n] else (0.0, 0.0)
        if proj is not None:
            return np.concatenate([out.reshape(-1), cells.reshape(-1)])
        return np.concatenate([out, cells[None]])

    @staticmethod
    def _step(g, c, p, acts, cfg):
        """(o ⊙ h(c'), c') of one step from the gate pre-activations g [4·H] (float64); cfg is
        (hidden_size, clip, cell_clip, input_forget, cifg)."""
        (fa, ga, ha), (hs, clip, cell_clip, input_forget, cifg) = acts, cfg
        pi, po, pf = p[:hs], p[hs:2 * hs], p[2 * hs:]
        if cifg:
            f = _act(fa, _clip(g[2 * hs:3 * hs] + pf * c, clip))
            i = 1.0 - f
        else:
            i = _act(fa, _clip(g[:hs] + pi * c, clip))
            f = 1.0 - i if input_forget else _act(fa, _clip(g[2 * hs:3 * hs] + pf * c, clip))
        c = _clip(f * c + i * _act(ga, _clip(g[3 * hs:], clip)), cell_clip)
        return _act(fa, _clip(g[hs:2 * hs] + po * c, clip)) * _act(ha, c), c


@register_op
class GRU(OpDef):
    """ONNX GRU-14, float32 (module docstring): x, w, r, b, h0[, lens] → [T + 1, D, B, H]."""
    name, pattern, num_inputs = "nn.gru", OpPattern.OPAQUE, None
    attrs = {"hidden_size": 1, "direction": "forward", "clip": 0.0, "linear_before_reset": 0, "activations": ()}
    cost_family = "dense"   # gate matmuls dominate

    def infer(self, args, attrs):
        t, batch, _, hidden, d = _check(self.name, 3, args[:5], attrs)
        _check_extras(self.name, args, attrs, d, batch, 5)
        return TensorType((t + 1, d, batch, hidden), "float32")

    def compute(self, x, w, r, b, h0, lens=None, *, hidden_size, direction, clip, linear_before_reset,
                activations=()):
        hs, (t_len, batch) = hidden_size, x.shape[:2]
        out = np.zeros((t_len + 1,) + h0.shape, np.float32)
        rows = _row_lens(lens, t_len, batch)
        for k in range(w.shape[0]):
            fa, ga = direction_activations(self.name, activations, k)
            wb, rb, rh = b[k, :3 * hs], b[k, 3 * hs:], r[k, 2 * hs:]
            for n in range(batch):
                h = h0[k, n].astype(np.float64)
                for t in _steps(int(rows[n]), direction, k):
                    gx = w[k] @ x[t, n] + wb
                    gh = r[k, :2 * hs] @ h + rb[:2 * hs]
                    z = _act(fa, _clip(gx[:hs] + gh[:hs], clip))
                    rr = _act(fa, _clip(gx[hs:2 * hs] + gh[hs:], clip))
                    if linear_before_reset:
                        cand = gx[2 * hs:] + rr * (rh @ h + rb[2 * hs:])
                    else:
                        cand = gx[2 * hs:] + rh @ (rr * h) + rb[2 * hs:]
                    h = (1 - z) * _act(ga, _clip(cand, clip)) + z * h
                    out[t, k, n] = h
                out[t_len, k, n] = h if rows[n] else 0.0
        return out
