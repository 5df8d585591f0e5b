"""One-op SVDF .tflite models (int8 with an int16 or int8 activation state, or float32), built with
the tflite-micro model editor as tflm_oneop builds its models; the activation state is a variable
tensor, so TFLM's interpreter carries it between invoke() calls (the oracle of the stateful tests).
Weights are seeded random."""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_cases import tflm_oneop
from tests.builders.tflm_lstm import _tensor


def svdf(batch, inp, filters, memory, rank, seed=0, state="int16", activation="NONE", x_q=(0.03, -4),
         out_q=(0.1, 2), state_q=(2.0 ** -10, 0), bias=True, variable_state=True) -> bytes:
    """SVDF x [B, I] → [B, filters / rank]; ``state``: 'int16' / 'int8' (int8 model) or 'float32'."""
    oneop = tflm_oneop()
    me, S = oneop.me, oneop.S
    rng = np.random.default_rng(seed)
    units = filters // rank
    if state == "float32":
        x = _tensor((batch, inp), "float32", "x")
        wf = _tensor((filters, inp), "float32", "wf", data=rng.standard_normal((filters, inp)) * 0.5)
        wt = _tensor((filters, memory), "float32", "wt", data=rng.standard_normal((filters, memory)) * 0.5)
        b = _tensor((units,), "float32", "b", data=rng.standard_normal(units)) if bias else None
        st = _tensor((batch, filters * memory), "float32", "state", variable=variable_state)
        out = _tensor((batch, units), "float32", "y")
    else:
        wf_s = float(rng.uniform(0.005, 0.02))
        wt_s = float(rng.uniform(2e-5, 6e-5) if state == "int16" else rng.uniform(0.002, 0.01))   # |w_time| ~ 1
        x = _tensor((batch, inp), "int8", "x", x_q)
        wf = _tensor((filters, inp), "int8", "wf", (wf_s, 0), rng.integers(-127, 128, (filters, inp)))
        lim = 32767 if state == "int16" else 127
        wt = _tensor((filters, memory), state, "wt", (wt_s, 0), rng.integers(-lim, lim + 1, (filters, memory)))
        b_scale = float(np.float32(state_q[0]) * np.float32(wt_s))
        b = _tensor((units,), "int32", "b", (b_scale, 0), rng.integers(-20000, 20000, units)) if bias else None
        st = _tensor((batch, filters * memory), state, "state", state_q, variable=variable_state)
        out = _tensor((batch, units), "int8", "y", out_q)
    op = me.Operator(opcode=S.BuiltinOperator.SVDF, inputs=[x, wf, wt, b, st], outputs=[out])
    op._fb.builtinOptionsType = S.BuiltinOptions.SVDFOptions
    op._fb.builtinOptions = S.SVDFOptionsT()
    op._fb.builtinOptions.rank = rank
    op._fb.builtinOptions.fusedActivationFunction = getattr(S.ActivationFunctionType, activation)
    m = me.Model(description="tinyfuse tflm_svdf")
    m.add_subgraph(tensors=[t for t in (x, wf, wt, b, st) if t is not None] + [out], operators=[op], outputs=[out],
                   inputs=[x])
    return bytes(m.build())
