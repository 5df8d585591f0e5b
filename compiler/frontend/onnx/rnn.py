"""ONNX LSTM-14 and GRU-14 (older opsets arrive upgraded), float32 → ``nn.lstm`` / ``nn.gru``
(compiler/ops/recurrent.py) and contiguous slices of their packed output.

Supported: direction forward / reverse / bidirectional; ``layout`` 0 and 1 (batch first: x, the
initial states and the outputs are transposed around the op); B, initial_h, initial_c and P present
or absent (absent = zeros, the ONNX default); ``clip``; GRU ``linear_before_reset``; the outputs
Y, Y_h, Y_c, each optional; ``sequence_lens`` (int32 or int64 [B], constant or a runtime input: per
batch row lengths, onnxruntime's ragged semantics, compiler/ops/recurrent.py; a constant outside
[0, T] is refused, a runtime one is clamped to it); every activation of the ONNX list (Relu, Tanh,
Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus) with
``activation_alpha`` / ``activation_beta`` consumed in order by the activations that take them
(onnxruntime's rnn_helpers), one list for all directions or one per direction; LSTM ``input_forget``.
An alpha or beta left out defaults as onnxruntime and the ONNX operators agree (LeakyRelu 0.01,
HardSigmoid 0.2 and 0.5, Elu 1.0); Affine, ThresholdedRelu and ScaledTanh, where they disagree, must
be given theirs (one error otherwise).
"""
from __future__ import annotations

import numpy as np

from ...ir import Constant, Expr, call
from ...ops.recurrent import ACTIVATIONS, DIRECTIONS
from .registry import Node, converter, optional_arg

DEFAULT_ACTIVATIONS = {"LSTM": ("sigmoid", "tanh", "tanh"), "GRU": ("sigmoid", "tanh")}
# activation → (takes alpha, takes beta) and the defaults both onnxruntime and the ONNX operators use
TAKES = {"affine": (1, 1), "leakyrelu": (1, 0), "thresholdedrelu": (1, 0), "scaledtanh": (1, 1),
         "hardsigmoid": (1, 1), "elu": (1, 0)}
AGREED_DEFAULTS = {"leakyrelu": (0.01, 0.0), "hardsigmoid": (0.2, 0.5), "elu": (1.0, 0.0)}


def _activations(node: Node, dirs: int) -> tuple:
    """() for the default activations, else one (name, alpha, beta) per activation and direction."""
    acts = node.attr("activations")
    if acts is None:
        return ()
    names = [a.decode().lower() if isinstance(a, bytes) else str(a).lower() for a in acts]
    per_dir = len(DEFAULT_ACTIVATIONS[node.op_type])
    if len(names) == per_dir and dirs == 2:
        names = names * 2
    if len(names) != per_dir * dirs or any(n not in ACTIVATIONS for n in names):
        raise node.error(f"activations {names} are not {per_dir * dirs} of {', '.join(ACTIVATIONS)}")
    alphas, betas = list(node.attr("activation_alpha") or []), list(node.attr("activation_beta") or [])
    out = []
    for name in names:
        takes, agreed = TAKES.get(name, (0, 0)), AGREED_DEFAULTS.get(name)
        ab = [0.0, 0.0]
        for j, (vals, what) in enumerate(((alphas, "alpha"), (betas, "beta"))):
            if not takes[j]:
                continue
            if not vals and agreed is None:
                raise node.error(f"activation {name} needs activation_{what} (onnxruntime's default 0 and the "
                                 "ONNX operator's differ)", "give activation_alpha / activation_beta")
            ab[j] = float(vals.pop(0)) if vals else agreed[j]
        out.append((name, ab[0], ab[1]))
    return () if tuple(n for n, _, _ in out) == DEFAULT_ACTIVATIONS[node.op_type] * dirs else tuple(out)


def _lens(node: Node, args, t_len: int, batch: int) -> Expr | None:
    """sequence_lens as int32 [B]; None when absent or T for every row (the same computation)."""
    lens = optional_arg(args, 4)
    if lens is None:
        return None
    if tuple(lens.ty.shape) != (batch,) or lens.ty.dtype not in ("int32", "int64"):
        raise node.error(f"sequence_lens must be int32 [{batch}], got {lens.ty}")
    if isinstance(lens, Constant):
        v = lens.value.reshape(-1).astype(np.int64)
        if np.all(v == t_len):
            return None
        if v.min() < 0 or v.max() > t_len:
            raise node.error(f"sequence_lens {v.tolist()} outside [0, {t_len}]")
        return Constant(v.astype(np.int32), f"{node.name}_sequence_lens")
    return lens if lens.ty.dtype == "int32" else call("cast", lens, dtype="int32", span=node.name)


def _attrs(node: Node, args) -> tuple[str, int, int, float]:
    """(direction, D, hidden_size, clip) after refusing what tinyfuse does not support."""
    direction = node.attr("direction", "forward")
    if direction not in DIRECTIONS:
        raise node.error(f"direction '{direction}' is not forward, reverse or bidirectional")
    dirs = DIRECTIONS[direction]
    r = args[2]
    if r.ty.ndim != 3:
        raise node.error(f"R must be [num_directions, gates·hidden_size, hidden_size], got {list(r.ty.shape)}")
    hidden = node.attr("hidden_size", r.ty.shape[2])
    if hidden != r.ty.shape[2]:
        raise node.error(f"hidden_size {hidden} differs from R's last dimension {r.ty.shape[2]}")
    clip = node.attr("clip")
    if clip is not None and not clip > 0:
        raise node.error(f"clip {clip} is not positive")
    return direction, dirs, hidden, float(clip or 0.0)


def _operand(node: Node, e: Expr | None, shape: tuple[int, ...], layout: int = 0) -> Expr:
    """An optional operand: zeros when absent; a [B, D, H] initial state (layout 1) as [D, B, H]."""
    if e is None:
        return Constant(np.zeros(shape, np.float32), f"{node.name}_zeros")
    if layout == 1:
        return call("transpose", e, axes=(1, 0, 2), span=node.name)
    return e


def _outputs(node: Node, packed: Expr, t_len: int, rows: int, layout: int) -> list[Expr]:
    """Y [T, D, B, H] and the state rows [D, B, H] of the packed output (layout 1: Y [B, T, D, H],
    states [B, D, H])."""
    _, d, b, h = packed.ty.shape
    y = call("slice_view", packed, offset=0, newshape=(t_len, d, b, h), span=node.name)
    states = [call("slice_view", packed, offset=(t_len + i) * d * b * h, newshape=(d, b, h), span=node.name)
              for i in range(rows)]
    if layout == 1:
        y = call("transpose", y, axes=(2, 0, 1, 3), span=node.name)
        states = [call("transpose", s, axes=(1, 0, 2), span=node.name) for s in states]
    return [y] + states


@converter("LSTM", "GRU")
def convert_recurrent(node: Node, args):
    """LSTM: X, W, R[, B, sequence_lens, initial_h, initial_c, P] → Y, Y_h, Y_c;
    GRU: X, W, R[, B, sequence_lens, initial_h] → Y, Y_h (module docstring)."""
    direction, dirs, hidden, clip = _attrs(node, args)
    layout = node.attr("layout", 0)
    if layout not in (0, 1):
        raise node.error(f"layout {layout} is not 0 or 1")
    x = args[0]
    if x.ty.ndim != 3:
        raise node.error(f"X must be rank 3, got {list(x.ty.shape)}")
    if layout == 1:
        x = call("transpose", x, axes=(1, 0, 2), span=node.name)
    t_len, batch, _ = x.ty.shape
    lstm = node.op_type == "LSTM"
    gates = 4 if lstm else 3
    state = (dirs, batch, hidden)
    operands = [x, args[1], args[2], _operand(node, optional_arg(args, 3), (dirs, 2 * gates * hidden)),
                _operand(node, optional_arg(args, 5), state, layout)]
    attrs = dict(hidden_size=hidden, direction=direction, clip=clip)
    acts = _activations(node, dirs)
    if acts:
        attrs["activations"] = acts
    lens = _lens(node, args, t_len, batch)
    tail = [] if lens is None else [lens]
    if lstm:
        operands += [_operand(node, optional_arg(args, 6), state, layout),
                     _operand(node, optional_arg(args, 7), (dirs, 3 * hidden))]
        if node.attr("input_forget", 0):
            attrs["input_forget"] = 1
        packed = call("nn.lstm", *operands, *tail, span=node.name, **attrs)
        return _outputs(node, packed, t_len, 2, layout)
    packed = call("nn.gru", *operands, *tail, span=node.name,
                  linear_before_reset=int(node.attr("linear_before_reset", 0)), **attrs)
    return _outputs(node, packed, t_len, 1, layout)
