"""legalize_qdq's rules for ReduceMean and Sub, with TFLM's int8 arithmetic:

- quantize(mean(dq(x))) → TFLM MEAN (reference/integer_ops/mean.h QuantizedMeanOrSum): an int32 sum by a
  ones depthwise qnn.conv2d with the input zero point as offset, then one qnn.requantize whose multiplier
  has 1/n folded in (ops/reduce_int8.py, shared with the TFLite frontend), reshaped to the mean's shape;
- quantize(subtract(dq(a), dq(b))) → qnn.add with the second multiplier negated (TFLM sub_common.cc
  multipliers, quant.sub_as_add; proved equal to TFLM's SubElementwise on all 65,536 input pairs), or for
  int16 with ``subtract`` (SubElementwise itself, 15 bits of headroom).

Both need per-tensor int8 (or, as TFLM's 16x8 MEAN and SUB, int16) inputs of the output's dtype;
otherwise (or when TFLM's kernel has no exact tinyfuse form) the rule returns None and the op stays float.
Kept in its own module (legalize_qdq registers these rules, passes/rules.py) so it imports nothing of
legalize_qdq."""
from __future__ import annotations

from .. import quant
from ..errors import TinyfuseError
from ..ir import Call, call
from ..ops.reduce_int8 import quantized_mean
from .legalize_prelu import per_tensor


def mean_rule(lg, y: Call, s_out: float, z_out: int):
    """mean over ``axes`` of an int8 / int16 activation [any rank] → TFLM MEAN, output of y's shape."""
    x = per_tensor(y.args[0], False, ("int8", "int16"))
    if x is None or not y.attrs["axes"] or x[0].ty.dtype != lg.dtype:
        return None
    rank = x[0].ty.ndim
    axes = tuple(sorted({int(a) % rank for a in y.attrs["axes"]}))
    try:
        m = quantized_mean(x[0], axes, (x[1], x[2]), (s_out, z_out), y.span or "mean", lg.dtype)
    except TinyfuseError:
        return None
    return m if m.ty.shape == y.ty.shape else call("reshape", m, newshape=tuple(y.ty.shape), span=y.span)


def sub_rule(lg, y: Call, s_out: float, z_out: int):
    """a − b of int8 / int16 tensors or int8 constants (numpy broadcasting) → qnn.add(a, b) with TFLM SUB's
    multipliers, the second negated."""
    qd = ("int8", "int16")
    a = per_tensor(y.args[0], False, qd) or per_tensor(y.args[0], True)
    b = per_tensor(y.args[1], False, qd) or per_tensor(y.args[1], True)
    if a is None or b is None or a[0].ty.dtype != lg.dtype or b[0].ty.dtype != lg.dtype:
        return None
    try:
        params = quant.sub_as_add(a[1:], b[1:], (s_out, z_out), lg.dtype)
    except ValueError:
        return None
    return call("qnn.add", a[0], b[0], a_zero_point=a[2], b_zero_point=b[2], out_zero_point=z_out, span=y.span,
                **params)
