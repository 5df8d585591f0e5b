"""ONNX Conv-11 and ConvTranspose-11 on a 5-D input [N, C, D, H, W] (3-D) as one nn.conv2d /
nn.conv2d_transpose over H, W (ConvTranspose: ``convert_conv_transpose_nd``; Conv below).

Output depth od reads input depths ``od·sd + k·dd - pd0`` (k < kd), so
``y[n, :, od] = conv2d(stack_k x[n, :, od·sd + k·dd - pd0], W[:, :, k])``: the kd depth slices of
each output depth become input channels (order (c, k), so each group's channels stay contiguous)
and the weight [M, C/G, kd, kh, kw] is the conv2d weight [M, C/G·kd, kh, kw]:

    x ─pad D─ take(depths [OD, kd], axis 2) → [N, C, OD, kd, H, W] ─transpose→ [N, OD, C, kd, H, W]
      → [N·OD, C·kd, H, W] ─conv2d (H, W strides, dilations, pads, groups)→ [N·OD, M, OH, OW]
      → [N, OD, M, OH, OW] ─transpose→ [N, M, OD, OH, OW] (+ bias)

Exact (the same products, summed in another order); it costs one copy of the input per depth tap.
Conv on other ranks is ``ops.convert_conv``, ConvTranspose ``convt.convert_conv_transpose``.
"""
from __future__ import annotations

import numpy as np

from ...ir import call
from .ops import channel_param, convert_conv, reshape, window_attrs, window_pads
from .convt import convert_conv_transpose, transpose_padding
from .registry import Node, const_value, converter, optional_arg, weight_value, with_weight_value


def _depth_taps(d: int, kd: int, sd: int, dd: int) -> np.ndarray:
    """[OD, kd] input depth (in the padded input of depth d) of every output depth and tap."""
    od = (d - (kd - 1) * dd - 1) // sd + 1
    return np.arange(od)[:, None] * sd + np.arange(kd)[None, :] * dd


@converter("Conv")
def convert_conv_nd(node: Node, args):
    """Conv-11: 3-D (module doc), else the 1-D / 2-D converter."""
    x, w, b = args[0], args[1], optional_arg(args, 2)
    wv = weight_value(node, w, "weight W")
    if wv.ndim != 5 or x.ty.ndim != 5:
        return convert_conv(node, args)
    ks = node.attr("kernel_shape")
    if ks is not None and list(ks) != list(wv.shape[2:]):
        raise node.error(f"kernel_shape {list(ks)} disagrees with weight W {list(wv.shape)}")
    n, c, d, h, wd = x.ty.shape
    m, cg, kd, kh, kw = wv.shape
    group = node.attr("group", 1)
    if group < 1 or c != cg * group or m % group:
        raise node.error(f"input channels {c}, weight W {list(wv.shape)} and group {group} disagree")
    strides, dil, pads = window_attrs(node, 3)
    pads = window_pads(node, (d, h, wd), (kd, kh, kw), strides, dil, pads)
    if pads[0] or pads[3]:
        x = call("nn.pad", x, pad_width=((0, 0), (0, 0), (pads[0], pads[3]), (0, 0), (0, 0)), pad_value=0.0,
                 span=node.name)
    taps = _depth_taps(d + pads[0] + pads[3], kd, strides[0], dil[0])
    if taps.size == 0:
        raise node.error(f"empty output depth for input {list(x.ty.shape)} and kernel {list(wv.shape[2:])}")
    od = taps.shape[0]
    x = call("take", x, indices=tuple(int(i) for i in taps.reshape(-1)), indices_shape=taps.shape, axis=2,
             span=node.name)
    x = call("transpose", x, axes=(0, 2, 1, 3, 4, 5), span=node.name)
    x = reshape(node, x, (n * od, c * kd, h, wd))
    w2 = with_weight_value(w, wv.reshape(m, cg * kd, kh, kw))
    y = call("nn.conv2d", x, w2, strides=tuple(strides[1:]), padding=(pads[1], pads[2], pads[4], pads[5]),
             dilation=tuple(dil[1:]), groups=group, span=node.name)
    oh, ow = y.ty.shape[2:]
    y = call("transpose", reshape(node, y, (n, od, m, oh, ow)), axes=(0, 2, 1, 3, 4), span=node.name)
    if b is not None:
        y = call("add", y, channel_param(const_value(node, b, "bias B").reshape(-1).astype(np.float32), 5),
                 span=node.name)
    return y


def _transpose_depth_taps(d: int, kd: int, sd: int, dd: int, begin: int, od: int) -> np.ndarray:
    """[OD, kd] input depth feeding output depth o through tap k of a transposed convolution
    (o + begin = i·sd + k·dd), or ``d`` (the appended zero slice) where no input depth does."""
    t = np.arange(od)[:, None] + begin - np.arange(kd)[None, :] * dd
    ok = (t % sd == 0) & (t >= 0) & (t // sd < d)
    return np.where(ok, t // sd, d)


@converter("ConvTranspose")
def convert_conv_transpose_nd(node: Node, args):
    """ConvTranspose-11: 3-D as one nn.conv2d_transpose over H, W whose input channels are the
    (channel, depth tap) pairs: output depth o reads input depth i through tap k where
    o + pad_begin = i·sd + k·dd (a zero slice where none does); the D crop / output_padding /
    output_shape rules are convt.transpose_padding's. Other ranks: convert_conv_transpose."""
    x, w, b = args[0], args[1], optional_arg(args, 2)
    wv = weight_value(node, w, "weight W")
    if wv.ndim != 5 or x.ty.ndim != 5:
        return convert_conv_transpose(node, args)
    n, c, d, h, wd = x.ty.shape
    ci, mg, kd, kh, kw = wv.shape
    group = node.attr("group", 1)
    if group < 1 or c != ci or c % group:
        raise node.error(f"input channels {c}, weight W {list(wv.shape)} and group {group} disagree")
    strides, dil, pads = window_attrs(node, 3)
    out_pad = [int(v) for v in node.attr("output_padding", [0, 0, 0])]
    out_shape = node.attr("output_shape")
    out_shape = None if out_shape is None else [int(v) for v in out_shape][-3:]
    if len(out_pad) != 3 or (out_shape is not None and len(out_shape) != 3):
        raise node.error(f"output_padding {out_pad} / output_shape {out_shape} must give 3 spatial values")
    cd = transpose_padding(node, (d, 1), (kd, 1), (strides[0], 1), (dil[0], 1), [pads[0], 0, pads[3], 0],
                           [out_pad[0], 0], None if out_shape is None else [out_shape[0], 1])
    chw = transpose_padding(node, (h, wd), (kh, kw), strides[1:], dil[1:], pads[1:3] + pads[4:], out_pad[1:],
                            None if out_shape is None else out_shape[1:])
    od = (d - 1) * strides[0] + (kd - 1) * dil[0] + 1 - cd[0] - cd[2]
    if od < 1:
        raise node.error(f"empty output depth for input {list(x.ty.shape)} and weight W {list(wv.shape)}")
    taps = _transpose_depth_taps(d, kd, strides[0], dil[0], cd[0], od)
    x = call("nn.pad", x, pad_width=((0, 0), (0, 0), (0, 1), (0, 0), (0, 0)), pad_value=0.0, span=node.name)
    x = call("take", x, indices=tuple(int(i) for i in taps.reshape(-1)), indices_shape=taps.shape, axis=2,
             span=node.name)
    x = reshape(node, call("transpose", x, axes=(0, 2, 1, 3, 4, 5), span=node.name), (n * od, c * kd, h, wd))
    w2 = with_weight_value(w, np.ascontiguousarray(wv.transpose(0, 2, 1, 3, 4)).reshape(c * kd, mg, kh, kw))
    y = call("nn.conv2d_transpose", x, w2, strides=tuple(strides[1:]), padding=chw, dilation=tuple(dil[1:]),
             groups=group, span=node.name)
    m, (oh, ow) = y.ty.shape[1], y.ty.shape[2:]
    y = call("transpose", reshape(node, y, (n, od, m, oh, ow)), axes=(0, 2, 1, 3, 4), span=node.name)
    if b is not None:
        y = call("add", y, channel_param(const_value(node, b, "bias B").reshape(-1).astype(np.float32), 5),
                 span=node.name)
    return y
