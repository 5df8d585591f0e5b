"""Reductions over a set of axes (sum, prod, max, min, all, any), arg-reductions along one axis
(argmax, argmin) and the running sum along one axis (cumsum, qnn.cumsum).

- ``sum`` with ``pre``/``post`` covers the ONNX reductions that are a sum of a transformed element:
  ReduceSum (pre "", post ""), ReduceL1 (abs, ""), ReduceSumSquare (square, ""), ReduceL2 (square, sqrt),
  ReduceLogSumExp (exp, log) (ONNX Reduce*-18: the axes already resolved by the frontend) and TFLite SUM.
- ``max`` / ``min`` (ONNX ReduceMax/ReduceMin-18, TFLite REDUCE_MAX/REDUCE_MIN) select elements, so
  their int8 form is the reduction of the int8 tensor as it is (``moves_data``: a dequantize is
  monotonic), as TFLM's int8 kernel does it (same scale in and out).
- ``all`` / ``any``: logical reductions of bool (TFLite REDUCE_ALL).
- The float accumulation order is the input's row-major order within each output element, TFLM's
  ReduceGeneric order (reference/reduce.h), so float32 sums equal TFLM's bit for bit.

``axes`` sorted, distinct, non-negative; ``keepdims`` keeps each reduced axis as size 1. An empty
``axes`` is the identity (ONNX noop_with_empty_axes), resolved by the frontend before the op is built.
"""
from __future__ import annotations

import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType
from .. import quant

PRE = {"": lambda x: x, "abs": np.abs, "square": np.square, "exp": np.exp}
POST = {"": lambda x: x, "sqrt": np.sqrt, "log": np.log}


def reduced_shape(shape, axes, keepdims: bool) -> tuple[int, ...]:
    return tuple(1 if i in axes else d for i, d in enumerate(shape) if keepdims or i not in axes)


class _Reduce(OpDef):
    pattern, num_inputs = OpPattern.COMM_REDUCE, 1
    attrs = {"axes": (), "keepdims": True}
    cost_family = "reduce"
    dtypes: tuple[str, ...] = ("float32", "int8", "int32", "float64")

    def infer(self, args, attrs):
        (x,) = args
        axes = tuple(attrs["axes"])
        if not axes or sorted(set(axes)) != list(axes) or axes[0] < 0 or axes[-1] >= x.ndim:
            raise TinyfuseError(f"{self.name}: axes {list(axes)} must be sorted, distinct and within rank {x.ndim}")
        if x.dtype not in self.dtypes:
            raise TinyfuseError(f"{self.name}: element type {x.dtype} is not supported ({', '.join(self.dtypes)})")
        return TensorType(reduced_shape(x.shape, axes, attrs["keepdims"]), x.dtype)


@register_op
class Sum(_Reduce):
    """Σ pre(x) over ``axes``, then post (module doc). float32 accumulates in float32 (TFLM's order);
    int32 wraps as two's complement."""
    name = "sum"
    attrs = {"axes": (), "keepdims": True, "pre": "", "post": ""}
    dtypes = ("float32", "int32", "float64")

    def infer(self, args, attrs):
        if attrs["pre"] not in PRE or attrs["post"] not in POST:
            raise TinyfuseError(f"sum: pre '{attrs['pre']}' / post '{attrs['post']}' unknown")
        if args[0].dtype not in ("float32", "float64") and (attrs["pre"] or attrs["post"]):
            raise TinyfuseError(f"sum: {attrs['pre'] or attrs['post']} needs float32 or float64, not {args[0].dtype}")
        return super().infer(args, attrs)

    def compute(self, x, axes, keepdims, pre, post):
        if x.dtype == np.int32:
            return np.sum(x.astype(np.int64), axis=tuple(axes), keepdims=bool(keepdims)).astype(np.int32)
        s = np.sum(PRE[pre](x.astype(np.float64)), axis=tuple(axes), keepdims=bool(keepdims))
        return POST[post](s).astype(x.dtype)


@register_op
class Prod(_Reduce):
    """Π x over ``axes`` (ONNX ReduceProd-18)."""
    name = "prod"
    dtypes = ("float32", "int32", "float64")

    def compute(self, x, axes, keepdims):
        wide = np.int64 if x.dtype == np.int32 else np.float64
        return np.prod(x.astype(wide), axis=tuple(axes), keepdims=bool(keepdims)).astype(x.dtype)


@register_op
class Max(_Reduce):
    """max over ``axes`` (ONNX ReduceMax-18, TFLite REDUCE_MAX)."""
    name = "max"
    moves_data = True

    def compute(self, x, axes, keepdims):
        return np.max(x, axis=tuple(axes), keepdims=bool(keepdims))


@register_op
class Min(_Reduce):
    """min over ``axes`` (ONNX ReduceMin-18, TFLite REDUCE_MIN)."""
    name = "min"
    moves_data = True

    def compute(self, x, axes, keepdims):
        return np.min(x, axis=tuple(axes), keepdims=bool(keepdims))


@register_op
class All(_Reduce):
    """Logical and over ``axes`` of a bool tensor (TFLite REDUCE_ALL)."""
    name = "all"
    dtypes = ("bool",)

    def compute(self, x, axes, keepdims):
        return np.all(x, axis=tuple(axes), keepdims=bool(keepdims))


@register_op
class Any(_Reduce):
    """Logical or over ``axes`` of a bool tensor (TFLite REDUCE_ANY)."""
    name = "any"
    dtypes = ("bool",)

    def compute(self, x, axes, keepdims):
        return np.any(x, axis=tuple(axes), keepdims=bool(keepdims))


@register_op
class ArgMax(OpDef):
    """Index of the largest element along ``axis`` (ONNX ArgMax-13, TFLite ARG_MAX). Ties: the first
    index (TFLM's strict comparison; ONNX select_last_index=0), the last with ``select_last_index``.
    Output ``dtype`` int32 (TFLite) or int64 (ONNX); ``keepdims`` keeps the axis as size 1."""
    name, pattern, num_inputs = "argmax", OpPattern.OPAQUE, 1
    attrs = {"axis": 0, "keepdims": False, "select_last_index": False, "dtype": "int32"}
    cost_family = "reduce"
    largest = True

    def infer(self, args, attrs):
        (x,) = args
        if not 0 <= attrs["axis"] < x.ndim or attrs["dtype"] not in ("int32", "int64"):
            raise TinyfuseError(f"{self.name}: axis {attrs['axis']} / dtype {attrs['dtype']} invalid for rank {x.ndim}")
        return TensorType(reduced_shape(x.shape, (attrs["axis"],), attrs["keepdims"]), attrs["dtype"])

    def compute(self, x, axis, keepdims, select_last_index, dtype):
        v = x if self.largest else -x.astype(np.float64)
        if select_last_index:
            idx = x.shape[axis] - 1 - np.argmax(np.flip(v, axis), axis=axis)
        else:
            idx = np.argmax(v, axis=axis)
        idx = np.expand_dims(idx, axis) if keepdims else idx
        return idx.astype(dtype)


@register_op
class ArgMin(ArgMax):
    """Index of the smallest element along ``axis`` (ONNX ArgMin-13, TFLite ARG_MIN); as argmax."""
    name = "argmin"
    largest = False


@register_op
class CumSum(OpDef):
    """Running sum along ``axis`` (ONNX CumSum-14, TFLite CUMSUM float32): y[i] = Σ x[j] for j ≤ i
    (``exclusive``: j < i; ``reverse``: from the end), accumulated sequentially in the element type
    (reference_ops::CumSum's order)."""
    name, pattern, num_inputs = "cumsum", OpPattern.OPAQUE, 1
    attrs = {"axis": 0, "exclusive": False, "reverse": False}

    def infer(self, args, attrs):
        (x,) = args
        if not 0 <= attrs["axis"] < x.ndim or x.dtype not in ("float32", "int32", "float64"):
            raise TinyfuseError(f"{self.name}: axis {attrs['axis']} / type {x.dtype} not supported for {list(x.shape)}")
        return x

    def compute(self, x, axis, exclusive, reverse):
        v = np.flip(x, axis) if reverse else x
        acc = np.cumsum(v, axis=axis, dtype=x.dtype)
        if exclusive:
            acc = np.concatenate([np.zeros_like(np.take(acc, [0], axis)), np.take(acc, range(acc.shape[axis] - 1), axis)],
                                 axis)
        return np.ascontiguousarray(np.flip(acc, axis) if reverse else acc)


@register_op
class QCumSum(OpDef):
    """TFLM's int8 CUMSUM (reference_ops::CumSum, ArithmeticParams): each input rescaled as
    y = MBQM((x − z_in)·2^20, in_multiplier, in_shift), accumulated in int32 (wrapping) from a start
    of MBQM(−z_in·2^20, ...) (TFLM's initial value, not 0), each prefix requantized by
    MBQM(acc, out_multiplier, out_shift) + z_out and clamped to int8. Parameters from
    :func:`cumsum_params` (float64 multipliers of CalculateOpData)."""
    name, pattern, num_inputs = "qnn.cumsum", OpPattern.OPAQUE, 1
    attrs = {"axis": 0, "exclusive": False, "reverse": False, "in_zero_point": 0, "out_zero_point": 0,
             "in_multiplier": 0, "in_shift": 0, "out_multiplier": 0, "out_shift": 0}

    def infer(self, args, attrs):
        (x,) = args
        if not 0 <= attrs["axis"] < x.ndim or x.dtype != "int8":
            raise TinyfuseError(f"qnn.cumsum: axis {attrs['axis']} / type {x.dtype} invalid for {list(x.shape)}")
        return x

    def compute(self, x, axis, exclusive, reverse, in_zero_point, out_zero_point, in_multiplier, in_shift,
                out_multiplier, out_shift):
        v = np.moveaxis(np.flip(x, axis) if reverse else x, axis, -1).astype(np.int64)
        scaled = quant.mbqm((v - in_zero_point) << 20, in_multiplier, in_shift)
        start = int(quant.mbqm(np.int64(-in_zero_point) << 20, in_multiplier, in_shift))
        acc = quant.wrap32(start + np.cumsum(scaled, axis=-1))
        if exclusive:
            acc = np.concatenate([np.full(acc.shape[:-1] + (1,), start), acc[..., :-1]], axis=-1)
        y = quant.saturate(quant.mbqm(acc, out_multiplier, out_shift) + out_zero_point)
        y = np.moveaxis(y, -1, axis)
        return np.ascontiguousarray(np.flip(y, axis) if reverse else y)


def cumsum_params(in_scale: float, out_scale: float) -> dict:
    """TFLM CUMSUM's int8 multipliers (cumsum.cc CalculateOpData): real_in = s_in / (2·s_in) and
    real_out = 2·s_in / (2^20·s_out), float64 of the float32 scales."""
    s_in, s_out = float(np.float32(in_scale)), float(np.float32(out_scale))
    twice = 2 * s_in
    mi, si = quant.quantize_multiplier(s_in / twice)
    mo, so = quant.quantize_multiplier(twice / ((1 << 20) * s_out))
    if si > 0 or so > 0:
        raise ValueError("int8 CUMSUM needs multipliers below one (TFLM's QuantizeMultiplierSmallerThanOneExp)")
    return dict(in_multiplier=mi, in_shift=si, out_multiplier=mo, out_shift=so)
