"""ONNX converters of shape and layout ops: Size, ConstantOfShape and Range (constants: shapes are
static), DepthToSpace (DCR, CRD) and SpaceToDepth (reshape → 6-D transpose → reshape) (Einsum:
einsum.py), InstanceNormalization and GroupNormalization (layer norm over the group's elements, then
the per-channel scale and bias). Registered by importing this module."""
from __future__ import annotations


import numpy as np

from ...ir import Constant, Expr, call
from .ops import reshape
from .binding import compile_time_value
from .registry import Node, const_value, converter, shown


@converter("Size")
def convert_size(node: Node, args):
    """Size-13: the element count of a static shape, an int64 scalar constant."""
    return Constant(np.array(args[0].ty.size, np.int64), node.proto.output[0])


@converter("ConstantOfShape", "Range")
def convert_needs_constants(node: Node, args):
    """ConstantOfShape-9 / Range-11 fold when their inputs are constants (reader.convert_node); a shape
    or bound computed at run time is one NeedsBinding error naming the graph inputs to --bind
    (tinyfuse tensors have static shapes)."""
    what = {"ConstantOfShape": ("the shape",), "Range": ("start", "limit", "delta")}[node.op_type]
    for name, arg, label in zip(node.proto.input, args, what):
        if arg is not None and not isinstance(arg, Constant):
            compile_time_value(node, arg, f"{label} '{shown(name)}', which decides the output shape,")
    raise node.error("the inputs must be constants (tinyfuse tensors have static shapes)")


def _space_depth(node: Node, x: Expr, b: int, to_space: bool, mode: str) -> Expr:
    n, c, h, w = x.ty.shape
    if to_space:
        if c % (b * b):
            raise node.error(f"channels {c} are not a multiple of blocksize² {b * b}")
        cb = c // (b * b)
        six, perm = ((n, b, b, cb, h, w), (0, 3, 4, 1, 5, 2)) if mode == "DCR" else ((n, cb, b, b, h, w), (0, 1, 4, 2, 5, 3))
        y = call("transpose", reshape(node, x, six), axes=perm, span=node.name)
        return reshape(node, y, (n, cb, h * b, w * b))
    if h % b or w % b:
        raise node.error(f"spatial size {h}x{w} is not a multiple of blocksize {b}")
    six, perm = (n, c, h // b, b, w // b, b), ((0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4))
    y = call("transpose", reshape(node, x, six), axes=perm, span=node.name)
    return reshape(node, y, (n, c * b * b, h // b, w // b))


@converter("DepthToSpace", "SpaceToDepth")
def convert_depth_space(node: Node, args):
    """DepthToSpace-13 (mode DCR or CRD) and SpaceToDepth-13 on a 4-D NCHW tensor."""
    x = args[0]
    b, mode = node.attr("blocksize"), node.attr("mode", "DCR")
    if x.ty.ndim != 4 or not b or b < 1 or mode not in ("DCR", "CRD"):
        raise node.error(f"needs a 4-D input and a positive blocksize, mode DCR or CRD (got {list(x.ty.shape)}, {b}, {mode})")
    return _space_depth(node, x, b, node.op_type == "DepthToSpace", mode)


def _norm(node: Node, x: Expr, groups: int, scale: np.ndarray, bias: np.ndarray, eps: float) -> Expr:
    """Layer norm over each group's elements of [N, G, rest], then scale and bias per channel."""
    n, c = x.ty.shape[:2]
    rest = int(np.prod(x.ty.shape[2:], dtype=np.int64))
    xg = reshape(node, x, (n, groups, (c // groups) * rest))
    one, zero = Constant(np.ones(1, np.float32)), Constant(np.zeros(1, np.float32))
    y = reshape(node, call("nn.layer_norm", xg, one, zero, axis=2, epsilon=float(eps), span=node.name), x.ty.shape)
    shape = (1, c) + (1,) * (x.ty.ndim - 2)
    y = call("multiply", y, Constant(scale.astype(np.float32).reshape(shape)), span=node.name)
    return call("add", y, Constant(bias.astype(np.float32).reshape(shape)), span=node.name)


@converter("InstanceNormalization")
def convert_instance_norm(node: Node, args):
    """InstanceNormalization-6: per (n, c), normalize over the spatial axes; constant scale and B [C]."""
    x = args[0]
    scale, bias = const_value(node, args[1], "scale"), const_value(node, args[2], "B")
    if x.ty.ndim < 3 or x.ty.dtype != "float32" or scale.size != x.ty.shape[1] or bias.size != x.ty.shape[1]:
        raise node.error(f"input {list(x.ty.shape)} with scale {list(scale.shape)}, B {list(bias.shape)} is not supported")
    return _norm(node, x, x.ty.shape[1], scale.reshape(-1), bias.reshape(-1), node.attr("epsilon", 1e-5))


@converter("GroupNormalization")
def convert_group_norm(node: Node, args):
    """GroupNormalization-18 (scale and bias per group) and -21 (per channel), constant scale and bias."""
    x = args[0]
    g = node.attr("num_groups")
    scale, bias = const_value(node, args[1], "scale").reshape(-1), const_value(node, args[2], "bias").reshape(-1)
    c = x.ty.shape[1] if x.ty.ndim >= 2 else 0
    if x.ty.ndim < 3 or not g or c % g or x.ty.dtype != "float32" or scale.size not in (g, c) or bias.size != scale.size:
        raise node.error(f"input {list(x.ty.shape)}, num_groups {g}, scale {scale.size}, bias {bias.size} not supported")
    if scale.size != c:                  # opset 18: one scale per group, the same for its channels
        scale, bias = np.repeat(scale, c // g), np.repeat(bias, c // g)
    return _norm(node, x, g, scale, bias, node.attr("epsilon", 1e-5))
