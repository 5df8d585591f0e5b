"""ONNX LSTM-14 and GRU-14 (older opsets arrive upgraded), float32 → ``nn.lstm`` / ``nn.gru``
(compiler/ops/recurrent.py) and contiguous slices of their packed output.

Supported: direction forward / reverse / bidirectional; ``layout`` 0 and 1 (batch first: x, the
initial states and the outputs are transposed around the op); B, initial_h, initial_c and P present
or absent (absent = zeros, the ONNX default); ``clip``; GRU ``linear_before_reset``; the outputs
Y, Y_h, Y_c, each optional; ``sequence_lens`` only as a constant equal to T for every batch row (the
same as absent). Refused with a clear error: any other ``sequence_lens`` (per-batch lengths),
activation lists other than the defaults (LSTM Sigmoid, Tanh, Tanh; GRU Sigmoid, Tanh per
direction), LSTM ``input_forget`` = 1.
"""
from __future__ import annotations

import numpy as np

from ...ir import Constant, Expr, call
from ...ops.recurrent import DIRECTIONS
from .registry import Node, converter, optional_arg

DEFAULT_ACTIVATIONS = {"LSTM": ("sigmoid", "tanh", "tanh"), "GRU": ("sigmoid", "tanh")}


def _attrs(node: Node, args) -> tuple[str, int, int, float]:
    """(direction, D, hidden_size, clip) after refusing what tinyfuse does not support."""
    direction = node.attr("direction", "forward")
    if direction not in DIRECTIONS:
        raise node.error(f"direction '{direction}' is not forward, reverse or bidirectional")
    dirs = DIRECTIONS[direction]
    acts = node.attr("activations")
    if acts is not None:
        got = tuple(a.decode().lower() if isinstance(a, bytes) else str(a).lower() for a in acts)
        if got != DEFAULT_ACTIVATIONS[node.op_type] * dirs:
            raise node.error(f"activations {list(got)} are not the defaults "
                             f"{list(DEFAULT_ACTIVATIONS[node.op_type] * dirs)}",
                             "tinyfuse supports the default sigmoid/tanh activations")
    lens = optional_arg(args, 4)
    if lens is not None:
        t_len = args[0].ty.shape[1 if node.attr("layout", 0) == 1 else 0] if args[0].ty.ndim == 3 else -1
        if not isinstance(lens, Constant) or np.any(lens.value.reshape(-1) != t_len):
            raise node.error(f"sequence_lens is given and is not the constant {t_len} for every batch row; "
                             "tinyfuse runs every row over all time steps",
                             "drop sequence_lens (all rows full length) before export")
    if node.attr("input_forget", 0):
        raise node.error("input_forget = 1 (coupled input and forget gates) is not supported")
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
    if lstm:
        operands += [_operand(node, optional_arg(args, 6), state, layout),
                     _operand(node, optional_arg(args, 7), (dirs, 3 * hidden))]
        packed = call("nn.lstm", *operands, span=node.name, **attrs)
        return _outputs(node, packed, t_len, 2, layout)
    packed = call("nn.gru", *operands, span=node.name, linear_before_reset=int(node.attr("linear_before_reset", 0)),
                  **attrs)
    return _outputs(node, packed, t_len, 1, layout)
