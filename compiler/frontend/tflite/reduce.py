"""TFLite converters of reductions and normalizations, with TFLM's semantics per type:
SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_ALL, ARG_MAX, ARG_MIN, CUMSUM, LOG_SOFTMAX, L2_NORMALIZATION,
L2_POOL_2D and BATCH_MATMUL.

int8: REDUCE_MAX/MIN and ARG_MAX/MIN read the int8 tensor as it is (TFLM requires the same
quantization in and out for REDUCE_MAX/MIN); SUM is TFLM's QuantizedMeanOrSum without the 1/n
(ops/reduce_int8.py); CUMSUM, LOG_SOFTMAX and L2_NORMALIZATION are their TFLM integer kernels
(qnn.cumsum, qnn.log_softmax, qnn.l2_normalize); BATCH_MATMUL is QDQ form (legalize_qdq's
qnn.batch_matmul + requantize, TFLM's arithmetic). Registered by importing this module.
"""
from __future__ import annotations

import numpy as np

from ...ir import call
from ...ops.logsoftmax import LOG_SOFTMAX_OUT_Q
from ...ops.reduce_int8 import quantized_mean
from ...ops.reduction import cumsum_params
from .misc import _same_q
from .ops import window
from .registry import Graph, Op, activation, constant, converter, finish, is_int8, real, reshape


def _axes(op: Op, rank: int) -> tuple[int, ...]:
    raw = [int(a) for a in constant(op, op.inputs[1], "axis").reshape(-1)]
    if any(not -rank <= a < rank for a in raw):
        raise op.error(f"axes {raw} out of range for rank {rank}")
    return tuple(sorted({a % rank for a in raw}))


def _reduce(g: Graph, op: Op, kind: str):
    x, out = op.inputs[0], op.outputs[0]
    axes = _axes(op, len(x.shape))
    keep = bool(op.opt("keepDims", False))
    if not axes:
        return g.value(x)
    if kind == "sum" and is_int8(x):
        return reshape(quantized_mean(g.value(x), axes, x.q, out.q, op.span, compute_sum=True), out.shape, op.span)
    if kind in ("max", "min"):
        _same_q(op, x, [out])
    return call(kind, g.value(x), axes=axes, keepdims=keep, span=op.span)


@converter("SUM", max_version=2)
def convert_sum(g: Graph, op: Op):
    """SUM: float32 in TFLM's order; int8 by QuantizedMeanOrSum (compute_sum)."""
    return _reduce(g, op, "sum")


@converter("REDUCE_MAX", "REDUCE_MIN", max_version=3)
def convert_reduce_max_min(g: Graph, op: Op):
    """REDUCE_MAX / REDUCE_MIN: float32, or int8 with one quantization in and out (TFLM's check)."""
    return _reduce(g, op, "max" if op.name == "REDUCE_MAX" else "min")


@converter("REDUCE_ALL", max_version=1)
def convert_reduce_all(g: Graph, op: Op):
    """REDUCE_ALL of a bool tensor."""
    if op.inputs[0].dtype != "bool":
        raise op.error(f"REDUCE_ALL of {op.inputs[0].dtype} (bool expected)")
    return _reduce(g, op, "all")


@converter("ARG_MAX", "ARG_MIN", max_version=2)
def convert_arg(g: Graph, op: Op):
    """ARG_MAX / ARG_MIN of float32 or int8 (raw values: a dequantize is monotonic) along a constant
    axis, int32 indices, the first extreme on ties (TFLM's strict comparison)."""
    x, out = op.inputs[0], op.outputs[0]
    axis = [int(a) for a in constant(op, op.inputs[1], "axis").reshape(-1)]
    if len(axis) != 1 or not -len(x.shape) <= axis[0] < len(x.shape):
        raise op.error(f"axis {axis} must be one axis of {list(x.shape)}")
    if out.dtype not in ("int32", "int64"):
        raise op.error(f"output type {out.dtype} (int32 or int64 expected)")
    kind = "argmax" if op.name == "ARG_MAX" else "argmin"
    return call(kind, g.value(x), axis=axis[0] % len(x.shape), keepdims=False, dtype=out.dtype, span=op.span)


@converter("CUMSUM", max_version=1)
def convert_cumsum(g: Graph, op: Op):
    """CUMSUM along a constant axis, exclusive and reverse; int8 with TFLM's integer arithmetic."""
    x, out = op.inputs[0], op.outputs[0]
    axis = int(constant(op, op.inputs[1], "axis").reshape(-1)[0])
    if not -len(x.shape) <= axis < len(x.shape):
        raise op.error(f"axis {axis} out of range for rank {len(x.shape)}")
    attrs = dict(axis=axis % len(x.shape), exclusive=bool(op.opt("exclusive", False)),
                 reverse=bool(op.opt("reverse", False)), span=op.span)
    if not is_int8(x):
        return call("cumsum", g.value(x), **attrs)
    try:
        params = cumsum_params(x.q[0], out.q[0])
    except ValueError as e:
        raise op.error(str(e)) from None
    return call("qnn.cumsum", g.value(x), in_zero_point=x.q[1], out_zero_point=out.q[1], **params, **attrs)


@converter("LOG_SOFTMAX", max_version=2)
def convert_log_softmax(g: Graph, op: Op):
    """LOG_SOFTMAX over the last axis; int8 needs TFLM's output quantization (16/256, 127)."""
    x, out = op.inputs[0], op.outputs[0]
    axis = len(x.shape) - 1
    if not is_int8(x):
        return call("nn.log_softmax", g.value(x), axis=axis, span=op.span)
    if np.float32(out.q[0]) != np.float32(LOG_SOFTMAX_OUT_Q[0]) or out.q[1] != LOG_SOFTMAX_OUT_Q[1]:
        raise op.error(f"int8 output quantization {out.q}; TFLM's LOG_SOFTMAX needs (0.0625, 127)")
    return call("qnn.log_softmax", g.value(x), axis=axis, in_scale=float(np.float32(x.q[0])),
                in_zero_point=x.q[1], span=op.span)


@converter("L2_NORMALIZATION", max_version=2)
def convert_l2_norm(g: Graph, op: Op):
    """L2_NORMALIZATION over the last axis; int8 output in scale 1/128, zero point 0 (TFLM writes
    that whatever the tensor says; the TFLite converter gives the tensor that quantization)."""
    x = op.inputs[0]
    if op.opt("fusedActivationFunction", 0):
        raise op.error("a fused activation is not supported (TFLM refuses it)")
    if len(x.shape) > 4:
        raise op.error(f"rank {len(x.shape)} (TFLM supports up to 4)")
    if not is_int8(x):
        return call("nn.l2_normalize", g.value(x), span=op.span)
    return call("qnn.l2_normalize", g.value(x), in_zero_point=x.q[1], span=op.span)


@converter("L2_POOL_2D", max_version=1)
def convert_l2_pool(g: Graph, op: Op):
    """L2_POOL_2D (float32): sqrt of the mean square over each window's taps inside the input."""
    x, out = op.inputs[0], op.outputs[0]
    if is_int8(x) or len(x.shape) != 4:
        raise op.error("L2_POOL_2D needs a 4-D float32 NHWC input (TFLM has no int8 kernel)")
    kernel = (op.opt("filterHeight", 1), op.opt("filterWidth", 1))
    w = window(op, x, kernel)
    y = call("nn.l2_pool2d", g.value(x), pool_size=kernel, strides=w["strides"], padding=w["padding"], span=op.span)
    return activation(y, out, op)


@converter("BATCH_MATMUL", max_version=3)
def convert_batch_matmul(g: Graph, op: Op):
    """BATCH_MATMUL (adj_x, adj_y, broadcast batch dims): float32, or int8 in QDQ form (legalize_qdq
    makes it qnn.batch_matmul + one requantize, TFLM's arithmetic). A constant int8 operand is
    dequantized like an activation (TFLM reads it per tensor too)."""
    a, b = op.inputs[0], op.inputs[1]
    if len(a.shape) < 2 or len(b.shape) < 2:
        raise op.error("BATCH_MATMUL needs operands of rank >= 2")
    if op.opt("asymmetricQuantizeInputs", False) or (a.dtype == "float32" and b.dtype == "int8"):
        raise op.error("hybrid BATCH_MATMUL (float32 x int8) is not supported (TFLM has no kernel)")
    xs = []
    for t, adj in ((a, op.opt("adjX", False)), (b, op.opt("adjY", False))):
        perm = tuple(range(len(t.shape) - 2)) + (len(t.shape) - 1, len(t.shape) - 2) if adj else None
        xs.append(real(g, t, op, perm))
    return finish(call("nn.matmul", *xs, span=op.span), op)
