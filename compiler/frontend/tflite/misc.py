"""TFLite converters of STRIDED_SLICE, SPLIT, SPLIT_V, GATHER and PRELU (float and int8).

The data-movement ops run on the int8 tensor as it is: TFLM's int8 kernels copy bytes and require
the output's quantization to equal the input's (checked here). PRELU int8 is ``qnn.prelu`` with
TFLM's parameters (ops/qprelu.py). Registered by importing this module (``tflite.py``).
"""
from __future__ import annotations

import numpy as np

from ...ir import Constant, Expr, call
from ...ops.qprelu import prelu_params
from ..onnx.misc import slice_expr
from .registry import Graph, Op, Tensor, constant, converter, is_int8, reshape


def _same_q(op: Op, x: Tensor, outs) -> None:
    for t in outs:
        if is_int8(x) and (not t.quantized or t.q[1] != x.q[1] or np.float32(t.q[0]) != np.float32(x.q[0])):
            raise op.error(f"int8 output '{t.name}' {t.q if t.quantized else t} is quantized unlike the input {x.q}; "
                           "TFLM copies the bytes and needs them equal")


def _axis(op: Op, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise op.error(f"axis {axis} out of range for rank {rank}")
    return axis % rank


def strided_bounds(op: Op, shape, begin, end, strides) -> tuple[list, list, list, list]:
    """(begin, end, strides, kept axes) of TFLite STRIDED_SLICE after its masks (strided_slice_logic.h
    StartForAxis / StopForAxis: masked bounds take the whole axis in the stride's direction, others
    count from the end when negative and clamp; a shrink axis keeps one element and is dropped)."""
    bm, em, sm = op.opt("beginMask", 0), op.opt("endMask", 0), op.opt("shrinkAxisMask", 0)
    if op.opt("ellipsisMask", 0) or op.opt("newAxisMask", 0):
        raise op.error("ellipsis_mask and new_axis_mask are not supported (TFLM refuses them too)")
    if op.opt("offset", False):
        end = [b + e for b, e in zip(begin, end)]
    b_out, e_out, keep = [], [], []
    for a, (n, b, e, s) in enumerate(zip(shape, begin, end, strides)):
        if s == 0:
            raise op.error(f"strides {list(strides)} hold a zero")
        if sm >> a & 1:
            b = b + n if b < 0 else b
            if not 0 <= b < n or s != 1:
                raise op.error(f"shrink axis {a}: begin {begin[a]} outside dim {n} or stride {s} != 1")
            b_out.append(b)
            e_out.append(b + 1)
            continue
        keep.append(a)
        lo, hi = (0, n) if s > 0 else (-1, n - 1)
        b = (0 if s > 0 else n - 1) if bm >> a & 1 else min(max(b + n if b < 0 else b, lo), hi)
        e = (n if s > 0 else -1) if em >> a & 1 else min(max(e + n if e < 0 else e, lo), hi)
        b_out.append(b)
        e_out.append(e)
    return b_out, e_out, list(strides), keep


@converter("STRIDED_SLICE", max_version=8)
def convert_strided_slice(g: Graph, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    rank = len(x.shape)
    spec = [[int(v) for v in constant(op, t, what).reshape(-1)] for t, what in
            zip(op.inputs[1:4], ("begin", "end", "strides"))]
    if any(len(v) != rank for v in spec):
        raise op.error(f"begin/end/strides {spec} must have one entry per axis of {list(x.shape)}")
    _same_q(op, x, [out])
    begin, end, strides, keep = strided_bounds(op, x.shape, *spec)
    if any(max(0, -(-(e - b) // s)) == 0 for b, e, s in zip(begin, end, strides)):
        raise op.error(f"the slice of {list(x.shape)} is empty; tinyfuse needs non-empty tensors")
    y = slice_expr(g.value(x), begin, end, strides, op.span)
    return reshape(y, [y.ty.shape[a] for a in keep], op.span) if len(keep) < rank else y


def _split(g: Graph, op: Op, x: Tensor, axis: int, sizes) -> list[Expr]:
    rank = len(x.shape)
    axis = _axis(op, axis, rank)
    if sizes.count(-1) == 1:
        sizes[sizes.index(-1)] = x.shape[axis] - sum(s for s in sizes if s != -1)
    if len(sizes) != len(op.outputs) or sum(sizes) != x.shape[axis] or min(sizes) < 1:
        raise op.error(f"sizes {sizes} do not cut dim {x.shape[axis]} into {len(op.outputs)} non-empty outputs")
    _same_q(op, x, op.outputs)
    outs, offset = [], 0
    for size in sizes:
        begin, end = [0] * rank, list(x.shape)
        begin[axis], end[axis] = offset, offset + size
        outs.append(slice_expr(g.value(x), begin, end, [1] * rank, op.span))
        offset += size
    return outs


@converter("SPLIT", max_version=4)
def convert_split(g: Graph, op: Op):
    """SPLIT(axis, x): num_splits equal parts."""
    axis_t, x = op.inputs[0], op.inputs[1]
    axis = int(constant(op, axis_t, "axis").reshape(-1)[0])
    n, k = x.shape[_axis(op, axis, len(x.shape))], len(op.outputs)
    if n % k:
        raise op.error(f"dim {n} does not split into {k} equal parts")
    return _split(g, op, x, axis, [n // k] * k)


@converter("SPLIT_V", max_version=2)
def convert_split_v(g: Graph, op: Op):
    """SPLIT_V(x, size_splits, axis): one size may be -1 (the rest)."""
    x = op.inputs[0]
    sizes = [int(v) for v in constant(op, op.inputs[1], "size_splits").reshape(-1)]
    axis = int(constant(op, op.inputs[2], "axis").reshape(-1)[0])
    return _split(g, op, x, axis, sizes)


@converter("GATHER", max_version=6)
def convert_gather(g: Graph, op: Op):
    """GATHER with constant indices and batch_dims 0 (negative indices count from the end)."""
    x, out = op.inputs[0], op.outputs[0]
    if op.opt("batchDims", 0):
        raise op.error(f"batch_dims {op.opt('batchDims')} is not supported (0 only)")
    axis = _axis(op, op.opt("axis", 0), len(x.shape))
    idx = constant(op, op.inputs[1], "indices").astype(np.int64)
    n = x.shape[axis]
    if idx.size == 0 or idx.min() < -n or idx.max() >= n:
        raise op.error(f"indices {idx.reshape(-1)[:8].tolist()} out of range for dim {n}")
    _same_q(op, x, [out])
    idx = np.where(idx < 0, idx + n, idx)
    return call("take", g.value(x), indices=tuple(int(i) for i in idx.reshape(-1)), indices_shape=idx.shape,
                axis=axis, span=op.span)


@converter("PRELU", max_version=1)
def convert_prelu(g: Graph, op: Op):
    """PRELU(x, alpha): alpha (constant) broadcasts to x; int8 with TFLM's two multipliers."""
    x, alpha, out = op.inputs[0], op.inputs[1], op.outputs[0]
    a = constant(op, alpha, "alpha")
    if not is_int8(x):
        return call("nn.prelu", g.value(x), Constant(np.ascontiguousarray(a, np.float32)), span=op.span)
    if alpha.dtype != "int8" or not alpha.quantized or alpha.scale.size > 1:
        raise op.error(f"alpha '{alpha.name}' {alpha} must be int8 quantized per tensor")
    return call("qnn.prelu", g.value(x), Constant(np.ascontiguousarray(a, np.int8)), input_zero_point=x.q[1],
                alpha_zero_point=alpha.q[1], output_zero_point=out.q[1], span=op.span,
                real_scales=(float(x.q[0]), float(alpha.q[0]), float(out.q[0])), **prelu_params(x.q[0], alpha.q[0], out.q[0]))
