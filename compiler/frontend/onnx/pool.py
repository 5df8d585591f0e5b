"""ONNX MaxPool-12 / AveragePool-19 → nn.max_pool2d / nn.avg_pool2d: 1-D, 2-D and 3-D, with
strides, pads or auto_pad, dilations, ceil_mode and count_include_pad; MaxPool's Indices output
(2-D) → nn.max_pool2d_indices.

A 1-D pool runs as a 2-D one over an H of 1. A 3-D pool [N, C, D, H, W] runs as two 2-D pools: one
over D (the window (kd, 1) on [N, C, D, H·W]) and one over H, W (on [N, C·OD, H, W]). That is exact
because a box window is a product of per-axis windows: the maximum over the box is the maximum over
D of the maxima over (H, W), and the average's divisor (the taps counted under either
count_include_pad rule, the ceil_mode tail excluded) is the product of per-axis counts, so the
average over the box is the average over D of the averages over (H, W) (float32 rounding aside).
"""
from __future__ import annotations

from ...ir import Expr, call
from .ops import reshape, window_attrs, window_pads, with_h
from .registry import Node, converter


def _pool2d(node: Node, x: Expr, kernel, strides, dil, pads) -> Expr:
    """One nn.*_pool2d over the last two axes of a 4-D x; ``pads`` (top, left, bottom, right)."""
    op = "nn.max_pool2d" if node.op_type == "MaxPool" else "nn.avg_pool2d"
    attrs = dict(pool_size=tuple(kernel), strides=tuple(strides), padding=tuple(pads),
                 ceil_mode=bool(node.attr("ceil_mode", 0)), count_include_pad=bool(node.attr("count_include_pad", 0)))
    if any(d != 1 for d in dil):
        attrs["dilation"] = tuple(dil)
    return call(op, x, span=node.name, **attrs)


def _indices(node: Node, x: Expr, kernel, strides, dil, pads) -> Expr:
    """MaxPool's Indices output (2-D): nn.max_pool2d_indices (int64, ops/pool_indices.py)."""
    order = int(node.attr("storage_order", 0))
    if order not in (0, 1):
        raise node.error(f"storage_order {order} is not valid (0 or 1)")
    return call("nn.max_pool2d_indices", x, pool_size=tuple(kernel), strides=tuple(strides), padding=tuple(pads),
                ceil_mode=bool(node.attr("ceil_mode", 0)), dilation=tuple(dil), storage_order=order, span=node.name)


@converter("AveragePool", "MaxPool")
def convert_pool(node: Node, args):
    """MaxPool-12 / AveragePool-19 on [N, C, *spatial] with 1 to 3 spatial axes (module doc)."""
    x = args[0]
    indices = len(node.proto.output) > 1 and bool(node.proto.output[1])
    kernel = [int(k) for k in node.attr("kernel_shape")]
    if min(kernel, default=0) < 1:
        raise node.error(f"kernel_shape {kernel} must be positive")
    nsp = len(kernel)
    if nsp not in (1, 2, 3) or x.ty.ndim != nsp + 2:
        raise node.error(f"only 1-D, 2-D and 3-D pooling is supported: kernel_shape {kernel}, input {list(x.ty.shape)}")
    strides, dil, pads = window_attrs(node, nsp)
    if nsp == 1:
        x, kernel = with_h(node, x), [1] + kernel
    size = x.ty.shape[2:]
    pads = window_pads(node, size, kernel, strides, dil, pads)
    nd = len(size)
    reach = [(k - 1) * d + 1 for k, d in zip(kernel, dil)]
    if any(max(pads[i], pads[i + nd]) >= reach[i] for i in range(nd)):
        raise node.error(f"pads {node.attr('pads')} must be smaller than kernel_shape {node.attr('kernel_shape')} "
                         f"(dilated: {reach})",
                         "a window would lie entirely in the padding")
    if indices:
        if nsp != 2:
            raise node.error(f"the Indices output of a {nsp}-D MaxPool is not supported (2-D only)")
        return _pool2d(node, x, kernel, strides, dil, pads), _indices(node, x, kernel, strides, dil, pads)
    if nd == 2:
        y = _pool2d(node, x, kernel, strides, dil, pads)
        return reshape(node, y, y.ty.shape[:2] + y.ty.shape[3:]) if nsp == 1 else y
    n, c, d, h, w = x.ty.shape
    yd = _pool2d(node, reshape(node, x, (n, c, d, h * w)), (kernel[0], 1), (strides[0], 1), (dil[0], 1),
                 (pads[0], 0, pads[3], 0))
    od = yd.ty.shape[2]
    y = _pool2d(node, reshape(node, yd, (n, c * od, h, w)), kernel[1:], strides[1:], dil[1:],
                (pads[1], pads[2], pads[4], pads[5]))
    return reshape(node, y, (n, c, od) + y.ty.shape[2:])
