"""Per-axis QuantizeLinear-13 / DequantizeLinear-13 of an activation (a scale and zero point per
index of ``axis``), e.g. at a model boundary: the tensor is split along ``axis`` (``take`` of one
index each), every slice is (de)quantized per tensor with its own (scale, zero point) by
``quant.quantize`` / ``dequantize``, and the slices are concatenated again. Exact: each
element gets the ONNX formula with its channel's parameters, saturate(round_half_even(x / s) + z)
or (q - z) · s. At most ``MAX_SLICES`` slices (one small kernel each); per-tensor parameters and
constant inputs (weights) keep the converters of quant.py.
"""
from __future__ import annotations

import numpy as np

from ...ir import Constant, call
from .quant import convert_dequantize, convert_quantize, dequantize, quantize
from .registry import Node, const_value, converter, optional_arg

MAX_SLICES = 64


def _per_axis(node: Node, args) -> tuple[np.ndarray, np.ndarray] | None:
    """(scales [K], zero points [K]) when the node has per-axis parameters on a computed input."""
    x, scale, zp = args[0], args[1], optional_arg(args, 2)
    s = const_value(node, scale, "scale").reshape(-1)
    z = const_value(node, zp, "zero_point").reshape(-1) if zp is not None else None
    if isinstance(x, Constant) or (s.size == 1 and (z is None or z.size == 1)):
        return None
    if node.attr("block_size", 0):
        raise node.error(f"blocked quantization (block_size {node.attr('block_size')}) is not supported")
    return s, z


def _split(node: Node, args, one):
    """concatenate_k one(take(x, k), s[k], z[k]) along the node's axis."""
    s, z = _per_axis(node, args)
    x = args[0]
    axis = node.attr("axis", 1) % max(x.ty.ndim, 1)
    n = x.ty.shape[axis] if x.ty.ndim else 0
    if s.size != n or (z is not None and z.size != n):
        raise node.error(f"per-axis scale ({s.size}) / zero point ({None if z is None else z.size}) for axis "
                         f"{axis} of {list(x.ty.shape)}")
    if n > MAX_SLICES:
        raise node.error(f"per-axis (de)quantization of an activation over {n} > {MAX_SLICES} channels is not "
                         "supported")
    parts = []
    for k in range(n):
        xk = call("take", x, indices=(k,), indices_shape=(1,), axis=axis, span=node.name)
        zk = None if z is None else Constant(z[k:k + 1].reshape(()))
        parts.append(one(node, xk, Constant(np.float32(s[k])), zk))
    return call("concatenate", *parts, axis=axis, span=node.name)


@converter("QuantizeLinear")
def convert_quantize_axis(node: Node, args):
    """QuantizeLinear-13: per-axis parameters on an activation (module doc), else quant.py's."""
    if _per_axis(node, args) is None:
        return convert_quantize(node, args)
    return _split(node, args, quantize)


@converter("DequantizeLinear")
def convert_dequantize_axis(node: Node, args):
    """DequantizeLinear-13: per-axis parameters on an activation (module doc), else quant.py's."""
    if _per_axis(node, args) is None:
        return convert_dequantize(node, args)
    return _split(node, args, dequantize)
