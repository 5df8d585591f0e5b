"""TFLite UNIDIRECTIONAL_SEQUENCE_LSTM (float32) → ``nn.lstm`` (compiler/ops/recurrent.py), its
state in the op's variable tensors (``Graph.assign_variable``: the new h and c persist to the
next invocation, as TFLM's kernel writes its output_state / cell_state tensors in place).

TFLite's operands (lstm_shared.h): 0 input [B, T, I] (``time_major``: [T, B, I]); 1-4 input weights
of the gates i, f, c, o [H, I]; 5-8 recurrent weights [H, H]; 9-11 peepholes (c→i, c→f, c→o, [H]);
12-15 gate biases [H]; 16-17 projection; 18 output_state [B, H] and 19 cell_state [B, H] (variable
tensors); 20-23 layer-norm coefficients. The kernel (TFLM lstm_eval.h, float): gates
i, f, o = sigmoid(W x + R h + b), c̃ = tanh(W_c x + R_c h + b_c), c = f ⊙ c + i ⊙ c̃ clamped to
±cell_clip when cell_clip > 0, h = o ⊙ tanh(c), output = h per step: ``nn.lstm`` with gates
reordered to ONNX's (i, o, f, c), zero recurrent bias and ``cell_clip``. Float models may also have
(TFLite's lstm_eval.cc; TFLM refuses them, LiteRT runs them): CIFG (operands 1, 5, 9, 12 absent:
i = 1 − f, ``nn.lstm`` ``cifg``), a projection (operand 16 [P, H], its bias 17 [P] or none: the
output and h are pw · (o ⊙ tanh(c)) + pb, clamped to ±proj_clip when > 0; then the recurrent weights
are [H, P] and output_state [B, P]), peepholes (operands 9-11).

int8 models (int8 input, weights and h, int32 bias, int16 cell state) → ``qnn.lstm``
(compiler/ops/recurrent_int8.py: TFLM's integer kernel, bit-exact), with TFLM's parameters
computed here as its Prepare does (lstm_eval_common.cc: gate FCs into Q3.12, inter-gate products
from Q0.15, the cell's power-of-two scale, the quantized cell clip). 16x8 models (int16 input, output
and h, int8 weights, int64 bias) → ``qnn.lstm16`` (rnn_int16.py, compiler/ops/recurrent_int16.py).

Refused with a clear error: hybrid models (float input, int8 weights), per-channel or asymmetric
int8 weights, CIFG, peepholes or a projection in int8 (TFLM refuses them), layer normalization, fused
activations other than TANH.
"""
from __future__ import annotations

import numpy as np

from ...ir import Constant, call
from .registry import Graph, Op, _names, converter, reshape, transpose
from .schema import S

GATES = ("i", "o", "f", "c")                 # nn.lstm's (ONNX) gate order
TFLITE_GATE = {"i": 0, "f": 1, "c": 2, "o": 3}  # position among TFLite's 4 weight / bias operands


def _operand(op: Op, k: int):
    return op.inputs[k] if k < len(op.inputs) else None


def _stack(op: Op, first: int, what: str, cifg: bool = False) -> np.ndarray:
    """The per-gate constants from operand ``first`` on, stacked in nn.lstm's gate order (``cifg``: without
    the absent input gate)."""
    arrays = []
    for gate in GATES[int(cifg):]:
        t = _operand(op, first + TFLITE_GATE[gate])
        if t is None or t.data is None:
            raise op.error(f"{what} of gate {gate} must be a constant tensor")
        arrays.append(t.data.astype(np.float32))
    return np.concatenate(arrays)


def _check_variants(op: Op, ins: list) -> None:
    """CIFG and the projection: float only, their operands complete."""
    if ins[0].dtype == "int8" and (ins[16] is not None or ins[17] is not None):
        raise op.error("a projection layer (operands 16, 17) in an int8 LSTM is not supported (TFLM refuses it too)")
    if ins[16] is None and ins[17] is not None:
        raise op.error("a projection bias (operand 17) without projection weights (operand 16)")
    if len({ins[1] is None, ins[5] is None, ins[12] is None}) > 1 or ins[1] is None and ins[9] is not None:
        raise op.error("CIFG needs operands 1, 5, 9 and 12 (the input gate's weights, peephole and bias) all absent")


def _check(op: Op) -> None:
    ins = op.inputs + [None] * (24 - len(op.inputs))
    if ins[0].dtype not in ("float32", "int8", "int16"):
        raise op.error(f"{ins[0].dtype} input: only float32, int8 and 16x8 (int16) UNIDIRECTIONAL_SEQUENCE_LSTM "
                       "are supported")
    if ins[0].dtype == "float32" and any(t is not None and t.dtype != "float32" for t in ins[1:16]) \
            or op.opt("asymmetricQuantizeInputs"):
        raise op.error("quantized (hybrid) weights under a float input are not supported")
    _check_variants(op, ins)
    if any(t is not None for t in ins[20:24]):
        raise op.error("layer normalization coefficients (operands 20-23) are not supported")
    act = _names(S.ActivationFunctionType).get(op.opt("fusedActivationFunction", 0), "?")
    if act != "TANH":
        raise op.error(f"activation {act}: tinyfuse's LSTM kernel computes tanh")
    for k in (18, 19):
        if ins[k] is None or not ins[k].variable:
            raise op.error(f"operand {k} (the {'output' if k == 18 else 'cell'} state) must be a variable tensor")


@converter("UNIDIRECTIONAL_SEQUENCE_LSTM", max_version=1)
def convert_unidirectional_lstm(g: Graph, op: Op):
    _check(op)
    x_t, h_t, c_t = op.inputs[0], op.inputs[18], op.inputs[19]
    time_major = bool(op.opt("timeMajor", False))
    x = g.value(x_t)
    if x.ty.ndim != 3:
        raise op.error(f"input must be rank 3, got {list(x.ty.shape)}")
    if not time_major:
        x = transpose(x, (1, 0, 2), op.span)
    if x_t.dtype == "int8":
        from .rnn_int8 import convert_int8_lstm
        return convert_int8_lstm(g, op, x, time_major)
    if x_t.dtype == "int16":
        from .rnn_int16 import convert_int16_lstm
        return convert_int16_lstm(g, op, x, time_major)
    t_len, batch, _ = x.ty.shape
    cifg = op.inputs[1] is None
    w, r = _stack(op, 1, "input weights", cifg), _stack(op, 5, "recurrent weights", cifg)
    hidden, out = r.shape[0] // (3 if cifg else 4), r.shape[1]
    if w.shape != (r.shape[0], x.ty.shape[2]) or h_t.shape != (batch, out) or c_t.shape != (batch, hidden):
        raise op.error(f"weights {list(w.shape)}, recurrent weights {list(r.shape)} and state {list(h_t.shape)}, "
                       f"{list(c_t.shape)} do not fit input [T={t_len}, B={batch}, I={x.ty.shape[2]}]")
    bias = np.zeros(8 * hidden, np.float32)          # the recurrent bias and, with CIFG, the input gate's: 0
    bias[hidden * int(cifg):4 * hidden] = _stack(op, 12, "bias", cifg)
    peep = np.zeros(3 * hidden, np.float32)
    for k, idx in enumerate((9, 11, 10)):         # nn.lstm peepholes: i, o, f
        t = _operand(op, idx)
        if t is not None:
            peep[k * hidden:(k + 1) * hidden] = t.data.astype(np.float32)
    name = op.span
    consts = [Constant(v[None], f"{name}_{what}") for v, what in ((w, "w"), (r, "r"), (bias, "b"), (peep, "p"))]
    consts += _projection(op, hidden, out)
    h0 = reshape(g.value(h_t), (1, batch, out), name)
    c0 = reshape(g.value(c_t), (1, batch, hidden), name)
    packed = call("nn.lstm", x, *consts[:3], h0, c0, *consts[3:], hidden_size=hidden, direction="forward",
                  cell_clip=float(op.opt("cellClip", 0.0) or 0.0), cifg=int(cifg),
                  proj_clip=float(op.opt("projClip", 0.0) or 0.0), span=name)
    rows = t_len * batch * out
    y = call("slice_view", packed, offset=0, newshape=(t_len, batch, out), span=name)
    g.assign_variable(h_t, call("slice_view", packed, offset=rows, newshape=(batch, out), span=name), op)
    g.assign_variable(c_t, call("slice_view", packed, offset=rows + batch * out, newshape=(batch, hidden),
                                span=name), op)
    return y if time_major else transpose(y, (1, 0, 2), name)


def _projection(op: Op, hidden: int, out: int) -> list:
    """nn.lstm's projection operands [1, P, H], [1, P] (a zero bias when operand 17 is absent)."""
    wp, bp = _operand(op, 16), _operand(op, 17)
    if wp is None:
        return []
    if wp.data is None or wp.shape != (out, hidden) or bp is not None and (bp.data is None or bp.shape != (out,)):
        raise op.error(f"projection weights {wp} and bias {bp} must be constants [P={out}, H={hidden}] and [P]")
    bias = bp.data.astype(np.float32) if bp is not None else np.zeros(out, np.float32)
    return [Constant(wp.data.astype(np.float32)[None], f"{op.span}_pw"), Constant(bias[None], f"{op.span}_pb")]
