"""TFLite SVDF (float32; int8 with an int16 or int8 activation state) → ``nn.svdf`` / ``qnn.svdf``
(compiler/ops/svdf.py), the activation state a variable tensor (``Graph.assign_variable``).

int8 parameters as TFLM's PrepareSvdf computes them (kernels/svdf_common.cc): effective scales
float32(s_x · s_wf / s_state) and float32(s_state · s_wt / s_out), each evaluated in float32 left to
right, widened to double and split by QuantizeMultiplier. Refused with a clear error: hybrid models
(float input, int8 weights), per-channel weights, a state that is not a variable tensor.
"""
from __future__ import annotations

import numpy as np

from ... import quant
from ...ir import Constant, call
from .registry import Graph, Op, Tensor, _names, converter
from .schema import S


def _scale(t: Tensor) -> np.float32:
    return np.float32(t.scale[0])


def _int8_attrs(op: Op, x: Tensor, wf: Tensor, wt: Tensor, state: Tensor, out: Tensor) -> dict:
    for t in (wf, wt):
        if t.scale is None or t.scale.size != 1:
            raise op.error(f"weights '{t.name}' must be quantized per tensor (TFLM's SVDF)")
    e1 = float(_scale(x) * _scale(wf) / _scale(state))
    e2 = float(_scale(state) * _scale(wt) / _scale(out))
    m1, s1 = quant.quantize_multiplier(e1)
    m2, s2 = quant.quantize_multiplier(e2)
    return dict(x_zp=int(x.zero_point[0]), state_zp=int(state.zero_point[0]), out_zp=int(out.zero_point[0]),
                m1=m1, s1=s1, m2=m2, s2=s2)


@converter("SVDF", max_version=4)
def convert_svdf(g: Graph, op: Op):
    ins = op.inputs + [None] * (5 - len(op.inputs))
    x_t, wf_t, wt_t, bias_t, state_t = ins[:5]
    out = op.outputs[0]
    if state_t is None or not state_t.variable:
        raise op.error("operand 4 (the activation state) must be a variable tensor")
    if wf_t is None or wt_t is None or wf_t.data is None or wt_t.data is None:
        raise op.error("the feature and time weights must be constant tensors")
    rank = int(op.opt("rank", 1))
    act = _names(S.ActivationFunctionType).get(op.opt("fusedActivationFunction", 0), "?")
    units = wt_t.shape[0] // max(rank, 1)
    quantized = x_t.dtype == "int8"
    if quantized and (wf_t.dtype != "int8" or state_t.dtype not in ("int16", "int8") or wt_t.dtype != state_t.dtype):
        raise op.error(f"int8 SVDF needs int8 feature weights and time weights of the state's type; got "
                       f"{wf_t}, {wt_t}, state {state_t}")
    if not quantized and any(t is not None and t.dtype != "float32" for t in (wf_t, wt_t, bias_t, state_t)) \
            or op.opt("asymmetricQuantizeInputs"):
        raise op.error("hybrid SVDF (float input, quantized weights) is not supported")
    if bias_t is not None and bias_t.data is None:
        raise op.error("the bias must be a constant tensor")
    dtype = "int32" if quantized else "float32"
    bias = bias_t.data.astype(dtype) if bias_t is not None else np.zeros(units, dtype)
    consts = [Constant(wf_t.data, f"{op.span}_wf"), Constant(wt_t.data, f"{op.span}_wt"),
              Constant(bias, f"{op.span}_bias")]
    if quantized:
        attrs = _int8_attrs(op, x_t, wf_t, wt_t, state_t, out)
        packed = call("qnn.svdf", g.value(x_t), *consts, g.value(state_t), rank=rank, span=op.span, **attrs)
    else:
        packed = call("nn.svdf", g.value(x_t), *consts, g.value(state_t), rank=rank, activation=act, span=op.span)
    size = int(np.prod(state_t.shape))
    g.assign_variable(state_t, call("slice_view", packed, offset=0, newshape=tuple(state_t.shape), span=op.span), op)
    y = call("slice_view", packed, offset=size, newshape=tuple(out.shape), span=op.span)
    return call("cast", y, dtype="int8", span=op.span) if y.ty.dtype != out.dtype else y
