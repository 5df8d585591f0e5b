"""nn.svdf / qnn.svdf → one hand-written kernel (codegen_templates/recurrent/svdf.c.j2), TFLM's
reference order of operations (compiler/ops/svdf.py); scratch: F sums of one batch row."""
from __future__ import annotations

import numpy as np

from ..codegen.templates import template
from ..ir import Constant
from .kernel import Kernel
from .registry import lowering

FLOAT_ACTIVATION = {"NONE": "{v}", "RELU": "({v} > 0.0f ? {v} : 0.0f)",
                    "RELU_N1_TO_1": "({v} < -1.0f ? -1.0f : {v} > 1.0f ? 1.0f : {v})",
                    "RELU6": "({v} < 0.0f ? 0.0f : {v} > 6.0f ? 6.0f : {v})", "TANH": "tanhf({v})",
                    "SIGMOID": "(1.0f / (1.0f + expf(-{v})))"}


@lowering("nn.svdf", "qnn.svdf")
def lower_svdf(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    x, wf, wt, _, state = (a.ty for a in anchor.args)
    names = [pool.ref(a) if isinstance(a, Constant) else epi.param_names[id(a)] for a in anchor.args]
    quantized = anchor.op == "qnn.svdf"
    batch, inp = x.shape
    filters, memory = wt.shape
    a = anchor.attrs
    info = np.iinfo(state.dtype) if quantized else None
    loops = template("recurrent/svdf.c.j2").render(
        B=batch, I=inp, F=filters, M=memory, U=filters // a["rank"], quantized=quantized,
        acc_t="int32_t" if quantized else "float", x_t=x.ctype, wf_t=wf.ctype, state_t=state.ctype,
        t_min=info.min if quantized else 0, t_max=info.max if quantized else 0,
        act=lambda kind, v: FLOAT_ACTIVATION[kind].format(v=v),
        **dict(zip(("x", "wf", "wt", "bias", "state"), names)), **a)
    return Kernel(name, [p.ty for p in fn.params], anchor.ty, loops, [], macs=batch * filters * (inp + memory),
                  scratch_bytes=4 * filters)
