"""nn.lstm / nn.gru → one hand-written kernel (codegen_templates/recurrent/ref.c.j2): for each
direction and batch row, a loop over the time steps; per step the gate pre-activations (one dot
product of W with x_t and of R with h per gate row) go to 4·H floats of scratch, then the state
update (formulas: compiler/ops/recurrent.py). The kernel reads every operand through its name, a
constant array or a parameter, so weights may be constants or runtime inputs."""
from __future__ import annotations

import numpy as np

from ..codegen.templates import c_literal, template
from ..errors import TinyfuseError
from ..ir import Constant
from ..ops.recurrent import direction_activations
from ..ops.recurrent_int8 import SIGMOID_TABLE_Q16
from .kernel import Kernel
from .registry import lowering

# ONNX RNN activations in C (formulas: compiler/ops/recurrent.py ACTIVATIONS); {v} is the operand, {a} / {b}
# alpha / beta; the operand is a variable or a clamp of one, so repeating it is free of side effects
C_ACTIVATIONS = {
    "relu": "({v} > 0.0f ? {v} : 0.0f)", "tanh": "tanhf({v})", "sigmoid": "(1.0f / (1.0f + expf(-{v})))",
    "affine": "({a} * {v} + {b})", "leakyrelu": "({v} >= 0.0f ? {v} : {a} * {v})",
    "thresholdedrelu": "({v} > {a} ? {v} : 0.0f)", "scaledtanh": "({a} * tanhf({b} * {v}))",
    "hardsigmoid": "fminf(fmaxf({a} * {v} + {b}, 0.0f), 1.0f)",
    "elu": "({v} >= 0.0f ? {v} : {a} * (expf({v}) - 1.0f))", "softsign": "({v} / (1.0f + fabsf({v})))",
    "softplus": "log1pf(expf({v}))",
}


def activation_c(op: str, activations, dirs: int):
    """act(slot, v) -> the C expression of activation slot (LSTM f, g, h; GRU f, g) applied to v: one
    expression, or a choice on the direction ``d`` when the directions' activations differ."""
    per_dir = [direction_activations(op, activations, k) for k in range(dirs)]

    def one(spec, v) -> str:
        name, alpha, beta = spec
        return C_ACTIVATIONS[name].format(v=v, a=c_literal(alpha), b=c_literal(beta))

    def act(slot: int, v) -> str:
        forms = [one(p[slot], v) for p in per_dir]
        return forms[0] if len(set(forms)) == 1 else f"(d == 0 ? {forms[0]} : {forms[1]})"
    return act


@lowering("nn.lstm", "nn.gru")
def lower_recurrent(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    lstm = anchor.op == "nn.lstm"
    names = [pool.ref(a) if isinstance(a, Constant) else epi.param_names[id(a)] for a in anchor.args]
    lens = names.pop() if len(names) == (8 if lstm else 6) else None      # LSTM: 9 operands = projection
    x, w = anchor.args[0].ty.shape, anchor.args[1].ty.shape
    t_len, batch, inp = x
    dirs, hidden = w[0], anchor.attrs["hidden_size"]
    gates = 4 if lstm else 3
    direction = anchor.attrs["direction"]
    backwards = {"forward": "0", "reverse": "1", "bidirectional": "d == 1"}[direction]
    clip, cell_clip = float(anchor.attrs["clip"]), float(anchor.attrs.get("cell_clip", 0.0))
    ops = dict(zip(("x", "w", "r", "bias", "h0", "c0", "p", "pw", "pb"), names))
    proj = anchor.args[7].ty.shape[1] if len(anchor.args) == 9 else 0
    proj_clip = float(anchor.attrs.get("proj_clip", 0.0))
    loops = template("recurrent/ref.c.j2").render(
        P=proj, cifg=anchor.attrs.get("cifg", 0), proj_clip=proj_clip, proj_clip_c=c_literal(proj_clip),
        lstm=lstm, T=t_len, B=batch, I=inp, H=hidden, D=dirs, G=gates, backwards=backwards, clip=clip,
        clip_c=c_literal(clip), cell_clip=cell_clip, cell_clip_c=c_literal(cell_clip),
        linear_before_reset=anchor.attrs.get("linear_before_reset", 0), lens=lens,
        input_forget=anchor.attrs.get("input_forget", 0),
        act=activation_c(anchor.op, anchor.attrs.get("activations", ()), dirs), **ops)
    macs = t_len * batch * dirs * hidden * ((gates - bool(anchor.attrs.get("cifg", 0))) * (inp + (proj or hidden)) + proj)
    return Kernel(name, [p.ty for p in fn.params], anchor.ty, loops, [], macs=macs,
                  scratch_bytes=4 * hidden * 4)


@lowering("qnn.lstm", "qnn.lstm16")
def lower_qlstm(fn, ctx) -> Kernel:
    """TFLM's int8 and 16x8 LSTM (codegen_templates/recurrent/qlstm.c.j2; arithmetic: ops/recurrent_int8.py,
    ops/recurrent_int16.py: int64 sums and bias for the 16x8 one)."""
    anchor, epi, pool, name = ctx.unpack(fn)
    a = anchor.attrs
    s16 = anchor.op == "qnn.lstm16"
    acc = np.int64 if s16 else np.int32
    names = [None if k == 3 else pool.ref(x) if isinstance(x, Constant) else epi.param_names[id(x)]
             for k, x in enumerate(anchor.args)]                  # the bias is emitted folded, below
    t_len, batch, inp = anchor.args[0].ty.shape
    hidden = anchor.args[1].ty.shape[1]
    w, r, bias = anchor.args[1:4]
    if not all(isinstance(e, Constant) for e in (w, r, bias)):
        raise TinyfuseError("qnn.lstm: the weights and bias must be constants (the zero points are folded in)")
    folded = bias.value.astype(np.int64) - a["x_zp"] * w.value.astype(np.int64).sum(axis=2)
    rec = -a["h_zp"] * r.value.astype(np.int64).sum(axis=2)
    names[3] = pool.ref(folded.astype(acc), key=("qnn.lstm bias", id(anchor)))
    rec_bias = pool.ref(rec.astype(acc), key=("qnn.lstm rec_bias", id(anchor)))
    vec = {k: pool.ref(np.asarray(a[k], np.int32), key=("qnn.lstm", id(anchor), k))
           for k in ("in_m", "in_s", "rec_m", "rec_s")}
    tab = pool.ref(SIGMOID_TABLE_Q16.astype(np.int32), key="tflite sigmoid_table_uint16")
    loops = template("recurrent/qlstm.c.j2").render(
        T=t_len, B=batch, I=inp, H=hidden, tab=tab, x_type="int16_t" if s16 else "int8_t",
        acc="int64_t" if s16 else "int32_t", fc_mbqm="tf16_mbqm64" if s16 else "tf_mbqm",
        h_min=-32768 if s16 else -128, h_max=32767 if s16 else 127, rec_bias=rec_bias,
        **dict(zip(("x", "w", "r", "bias", "h0", "c0"), names)), **vec,
        **{k: a[k] for k in ("x_zp", "h_zp", "fc_m", "fc_s", "ig_m", "ig_s", "h_m", "h_s", "cell_clip",
                             "cell_mul", "cell_shift")})
    return Kernel(name, [p.ty for p in fn.params], anchor.ty, loops, [], macs=t_len * batch * 4 * hidden * (inp + hidden),
                  scratch_bytes=4 * hidden * 2)
