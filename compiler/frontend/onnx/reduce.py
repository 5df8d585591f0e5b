"""ONNX reductions and arg-reductions: ReduceSum / Max / Min / Prod / L1 / L2 / LogSumExp / SumSquare
(axes as attribute (opset < 18, ReduceSum < 13) or as input, keepdims, noop_with_empty_axes), ArgMax /
ArgMin (select_last_index), LogSoftmax (opset 13 axis rule; older models arrive upgraded), Hardmax,
CumSum (exclusive, reverse) and TopK with a constant k. Registered by importing this module."""
from __future__ import annotations

from ...ir import Expr, call
from .ops import const_ints, normalize_axes, reshape
from .registry import Node, const_value, converter, node_axis, optional_arg

# op type -> (IR op, pre, post): the sum forms apply pre to every element and post to the sum
REDUCE = {"ReduceSum": ("sum", "", ""), "ReduceL1": ("sum", "abs", ""), "ReduceSumSquare": ("sum", "square", ""),
          "ReduceL2": ("sum", "square", "sqrt"), "ReduceLogSumExp": ("sum", "exp", "log"),
          "ReduceMax": ("max", "", ""), "ReduceMin": ("min", "", ""), "ReduceProd": ("prod", "", "")}


def reduce_axes(node: Node, args, x: Expr) -> list[int] | None:
    """The node's axes, normalized; [] for none given (all axes, or none with noop_with_empty_axes:
    None)."""
    axes_arg = optional_arg(args, 1)
    axes = const_ints(node, axes_arg, "axes") if axes_arg is not None else list(node.attr("axes", []))
    if not axes:
        return None if node.attr("noop_with_empty_axes", 0) else list(range(x.ty.ndim))
    return normalize_axes(node, axes, x.ty.ndim)


@converter(*REDUCE)
def convert_reduce(node: Node, args):
    """Reduce*-18 (and the attribute forms before): the sum forms as ``sum`` with pre/post, max / min /
    prod as themselves. noop_with_empty_axes with no axes: the element-wise part only (a reduction
    over an added axis of size 1)."""
    x = args[0]
    op, pre, post = REDUCE[node.op_type]
    if x.ty.dtype == "bool" and op in ("max", "min"):
        op = "any" if op == "max" else "all"
    floating = x.ty.dtype in ("float32", "float64")
    if x.ty.dtype not in ("float32", "float64", "int32", "int8", "bool") or (not floating and (pre or post)):
        raise node.error(f"input {x.ty.dtype} is not supported (float32, float64; int32 for sum/prod/max/min)")
    axes = reduce_axes(node, args, x)
    extra = {"pre": pre, "post": post} if op == "sum" else {}
    if axes is None:
        if not (pre or post):
            return x
        return call(op, reshape(node, x, x.ty.shape + (1,)), axes=(x.ty.ndim,), keepdims=False, span=node.name,
                    **extra)
    return call(op, x, axes=tuple(axes), keepdims=bool(node.attr("keepdims", 1)), span=node.name, **extra)


@converter("ArgMax", "ArgMin")
def convert_arg(node: Node, args):
    """ArgMax/ArgMin-13: int64 indices along ``axis``, keepdims, select_last_index."""
    x = args[0]
    if x.ty.dtype not in ("float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"):
        raise node.error(f"input {x.ty.dtype} is not supported")
    common = dict(axis=node_axis(node, x, 0), keepdims=bool(node.attr("keepdims", 1)),
                  select_last_index=bool(node.attr("select_last_index", 0)), dtype="int64", span=node.name)
    if node.op_type == "ArgMax":
        return call("argmax", x, **common)
    return call("argmin", x, **common)


@converter("LogSoftmax")
def convert_log_softmax(node: Node, args):
    """LogSoftmax-13 along ``axis`` (opset < 13 models arrive upgraded: Flatten → LogSoftmax → Reshape)."""
    x = args[0]
    if x.ty.dtype != "float32":
        raise node.error(f"input {x.ty.dtype} is not supported (float32)")
    return call("nn.log_softmax", x, axis=node_axis(node, x, -1), span=node.name)


@converter("Hardmax")
def convert_hardmax(node: Node, args):
    """Hardmax-13: 1 at the first largest element along ``axis``, 0 elsewhere: one_hot(argmax)."""
    x = args[0]
    axis = node_axis(node, x, -1)
    idx = call("argmax", x, axis=axis, keepdims=False, dtype="int32", span=node.name)
    return call("one_hot", idx, depth=x.ty.shape[axis], axis=axis, on=1.0, off=0.0, dtype=x.ty.dtype, span=node.name)


@converter("CumSum")
def convert_cumsum(node: Node, args):
    """CumSum-14 along a constant ``axis`` input, exclusive and reverse attributes."""
    x = args[0]
    axis = int(const_value(node, args[1], "axis").reshape(-1)[0])
    if not -x.ty.ndim <= axis < x.ty.ndim:
        raise node.error(f"axis {axis} out of range for shape {list(x.ty.shape)}")
    if x.ty.dtype not in ("float32", "float64", "int32"):
        raise node.error(f"input {x.ty.dtype} is not supported (float32, float64, int32)")
    return call("cumsum", x, axis=axis % x.ty.ndim, exclusive=bool(node.attr("exclusive", 0)),
                reverse=bool(node.attr("reverse", 0)), span=node.name)


@converter("TopK")
def convert_topk(node: Node, args):
    """TopK-11 with a constant K: values and int64 indices, sorted (``sorted`` 0 gives the same order)."""
    x = args[0]
    k = int(const_value(node, args[1], "K").reshape(-1)[0])
    axis = node_axis(node, x, -1)
    if not 1 <= k <= x.ty.shape[axis]:
        raise node.error(f"K {k} out of range for axis {axis} of {list(x.ty.shape)}")
    if x.ty.dtype not in ("float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"):
        raise node.error(f"input {x.ty.dtype} is not supported")
    common = dict(k=k, axis=axis, largest=bool(node.attr("largest", 1)), span=node.name)
    return [call("topk", x, output="values", **common), call("topk", x, output="indices", dtype="int64", **common)]
