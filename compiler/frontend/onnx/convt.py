"""ONNX ConvTranspose-11 (also its opset-1 form, which has the same attributes) → ``nn.conv2d_transpose``.

Every attribute of the spec is read: ``auto_pad`` (NOTSET, VALID, SAME_UPPER, SAME_LOWER),
``dilations``, ``group``, ``kernel_shape``, ``output_padding``, ``output_shape``, ``pads``, ``strides``;
1-D runs as 2-D over an H of 1, 3-D is refused. Padding follows the ONNX spec (and its reference
implementation, onnx/reference/ops/op_conv_transpose.py): with ``output_shape`` (or SAME_* without
``pads``, where output_shape = input · stride)

    total = stride·(in − 1) + output_padding + dilation·(k − 1) + 1 − output_shape
    SAME_UPPER: begin = total // 2, end = total − total // 2;  otherwise the reverse

and ``output_padding`` adds rows/columns at the end, so the op's crop is (begin, end − output_padding)
(ops/conv_transpose.py).
"""
from __future__ import annotations

from ...ir import Call, call
from .ops import channel_param, conv_operands, reshape, window_attrs, with_h
from .registry import Node, const_value, with_weight_value


def _ints(node: Node, key: str, n: int, default: int) -> list[int]:
    v = [int(d) for d in node.attr(key, [default] * n)]
    if len(v) != n:
        raise node.error(f"{key} {v} must have {n} values for a {n}-D ConvTranspose")
    return v


def transpose_padding(node: Node, size, kernel, strides, dil, pads, out_pad, out_shape) -> tuple[int, ...]:
    """The op's crop (top, left, bottom, right) from the ConvTranspose attributes (module doc)."""
    auto_pad = node.attr("auto_pad", "NOTSET") or "NOTSET"
    if auto_pad not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise node.error(f"auto_pad '{auto_pad}' is not valid (NOTSET, SAME_UPPER, SAME_LOWER or VALID)")
    if any(p < 0 or p >= max(s, d) for p, s, d in zip(out_pad, strides, dil)):
        raise node.error(f"output_padding {out_pad} must be smaller than the stride or the dilation "
                         f"(strides {strides}, dilations {dil})")
    if out_shape is None and auto_pad in ("SAME_UPPER", "SAME_LOWER") and node.attr("pads") is None:
        out_shape = [n * s for n, s in zip(size, strides)]
    if out_shape is None:
        begin, end = ([0, 0], [0, 0]) if auto_pad == "VALID" else (pads[:2], pads[2:])
        if min(pads) < 0:
            raise node.error(f"pads {pads} must be non-negative")
    else:
        begin, end = [], []
        for n, k, s, d, a, o in zip(size, kernel, strides, dil, out_pad, out_shape):
            total = s * (n - 1) + a + d * (k - 1) + 1 - o
            small, big = total // 2, total - total // 2
            begin.append(small if auto_pad == "SAME_UPPER" else big)
            end.append(big if auto_pad == "SAME_UPPER" else small)
    return begin[0], begin[1], end[0] - out_pad[0], end[1] - out_pad[1]


def convert_conv_transpose(node: Node, args):
    """ConvTranspose-11: 1-D or 2-D, groups, dilations, pads/auto_pad, output_padding, output_shape (called by
    the registered converter, ``convert_conv_transpose_nd``, for every rank but 3-D)."""
    x, w, b, wv, nsp = conv_operands(node, args, "transposed convolution")
    strides, dil, pads = window_attrs(node, nsp)
    out_pad = _ints(node, "output_padding", nsp, 0)
    out_shape = node.attr("output_shape")
    if out_shape is not None:
        out_shape = [int(d) for d in out_shape][-nsp:]
        if len(out_shape) != nsp:
            raise node.error(f"output_shape {list(node.attr('output_shape'))} must give the {nsp} spatial sizes")
    if nsp == 1:
        x, wv = with_h(node, x), wv[:, :, None, :]
        out_pad = [0] + out_pad
        out_shape = None if out_shape is None else [1] + out_shape
    group = node.attr("group", 1)
    if group < 1 or x.ty.shape[1] != wv.shape[0] or wv.shape[0] % group:
        raise node.error(f"input channels {x.ty.shape[1]}, weight W {list(wv.shape)} and group {group} disagree")
    crop = transpose_padding(node, x.ty.shape[2:], wv.shape[2:], strides, dil, pads, out_pad, out_shape)
    y = call("nn.conv2d_transpose", x, with_weight_value(w, wv), strides=tuple(strides), padding=crop,
             dilation=tuple(dil), groups=group, span=node.name)
    if isinstance(b, Call) and b.op == "qnn.dequantize":         # QDQ int32 bias: keep it visible
        y = call("add", y, call("reshape", b, newshape=(1, b.ty.size, 1, 1)), span=node.name)
    elif b is not None:
        y = call("add", y, channel_param(const_value(node, b, "bias B"), 4), span=node.name)
    return reshape(node, y, y.ty.shape[:2] + y.ty.shape[3:]) if nsp == 1 else y
