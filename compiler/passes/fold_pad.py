"""fold_pad: a standalone constant pad folds into the padding of the conv or pool that reads it.

PyTorch models exported through the TFLite converter (and some ONNX exporters) pad explicitly: an
ONNX ``Pad`` / TFLite ``PAD`` / ``PADV2`` (``nn.pad``) before every strided or 3x3 conv. The padded copy
is a whole extra tensor in the arena and it splits conv → depthwise → conv chains, so neither the
in-place rules nor poly_fuse's line buffers apply. When the consumer's own padding means the same
value, the pad is a change of its padding attribute:

    conv2d(pad(x, [[0,0],[ht,hb],[wl,wr],[0,0]], v), w, padding=(t,l,b,r))
        → conv2d(x, w, padding=(t+ht, l+wl, b+hb, r+wr))

Legal when (checked per consumer; the pad stays for any consumer it does not fold into):

- the pads are spatial only (0 on batch and channel axes of the consumer's layout) and not negative,
  and each side of the summed padding is smaller than the window ((K − 1)·dilation + 1);
- ``nn.conv2d`` (float): v == 0.0, a padded tap adds nothing (ONNX Conv-11 pads with zeros);
- ``qnn.conv2d`` (int8): v == input_zero_point, a padded tap adds (zp − zp)·w = 0 (CMSIS-NN
  arm_convolve_s8 and TFLM skip padded taps, which is the same sum);
- ``nn.max_pool2d``: v no larger than every value of the dtype (−inf for float, −128 for int8) and
  ``ceil_mode`` off; every window of the result must still hold a real input pixel, so that the max
  over the real taps equals the max over real and padded taps;
- ``nn.avg_pool2d`` (float): v == 0.0, ``ceil_mode`` off and either no padding of its own or
  ``count_include_pad`` already set: the folded pool counts the explicit pads as taps
  (``count_include_pad=1``, ONNX AveragePool-19), as the padded tensor's pool did. ``qnn.avg_pool2d``
  has no count_include_pad kernel and is left alone.

The rebuilt consumer must have the type of the original (a safety net for the output size rule).
Shapes, dtypes and values of the model outputs do not change.
"""
from __future__ import annotations

import math
from typing import Callable

from ..ir import Call, Expr, IRModule, call, rewrite

CONVS = ("nn.conv2d", "qnn.conv2d")
POOLS = ("nn.max_pool2d", "nn.avg_pool2d")
INT_MIN = {"int8": -128, "uint8": 0, "int16": -32768}


def _is(e, *ops) -> bool:
    return isinstance(e, Call) and isinstance(e.op, str) and e.op in ops


def _spatial_axes(node: Call) -> tuple[int, int] | None:
    """(H axis, W axis) of the consumer's data layout, None for a layout it does not state."""
    layout = node.attrs["data_layout"] if node.op in CONVS else node.attrs["layout"]
    return {"NCHW": (2, 3), "NHWC": (1, 2)}.get(layout)


def spatial_pads(pad_width, consumer: Call) -> tuple[int, int, int, int] | None:
    """(top, left, bottom, right) that ``pad_width`` (one (before, after) pair per axis of the
    consumer's input) adds around its H x W plane, or None when it also pads another axis or crops."""
    axes = _spatial_axes(consumer)
    pw = [tuple(p) for p in pad_width]
    if axes is None or len(pw) != 4 or any(b < 0 or a < 0 for b, a in pw):
        return None
    if any(pw[i] != (0, 0) for i in range(4) if i not in axes):
        return None
    (ht, hb), (wl, wr) = pw[axes[0]], pw[axes[1]]
    return ht, wl, hb, wr


def padded_source(e, made: dict) -> tuple[Call, tuple, Callable[[], Expr]] | None:
    """(the nn.pad, its pad widths on the axes of ``e``, a builder of ``e`` without the pad) when ``e``
    is an ``nn.pad`` or a ``transpose`` of one (convert_layout leaves a Pad on an NCHW model input
    before the transpose to NHWC: pad then permute equals permute then pad with permuted widths).
    ``made``: id(transpose) -> its unpadded twin, so consumers of one transpose share one."""
    if _is(e, "nn.pad"):
        return e, e.attrs["pad_width"], lambda: e.args[0]
    if _is(e, "transpose") and _is(e.args[0], "nn.pad"):
        pad, axes = e.args[0], e.attrs["axes"]
        width = tuple(pad.attrs["pad_width"][a] for a in axes)

        def unpadded() -> Expr:
            if id(e) not in made:
                made[id(e)] = (e, call("transpose", pad.args[0], span=e.span, **e.attrs))
            return made[id(e)][1]
        return pad, width, unpadded
    return None


def _is_lowest(value: float, dtype: str) -> bool:
    """True when ``value`` is <= every value of ``dtype`` (so max(value, x) == x for all x)."""
    if dtype in INT_MIN:
        return value <= INT_MIN[dtype]
    return math.isinf(value) and value < 0


def _max_windows_real(node: Call, pads) -> bool:
    """Every window of ``node`` (a max pool) with padding ``pads`` (the folded padding) over the input
    without the pad still reaches at least one real input pixel."""
    (kh, kw), (sh, sw) = node.attrs["pool_size"], node.attrs["strides"]
    (pt, pl, pb, pr), old, axes = pads, node.attrs["padding"], _spatial_axes(node)
    h = node.args[0].ty.shape[axes[0]] - (pt - old[0]) - (pb - old[2])      # rows without the pad
    w = node.args[0].ty.shape[axes[1]] - (pl - old[1]) - (pr - old[3])
    for size, k, s, lo, hi in ((h, kh, sh, pt, pb), (w, kw, sw, pl, pr)):
        last = (size + lo + hi - k) // s * s - lo     # first row of the last window, in input rows
        if k <= lo or last >= size:
            return False
    return True


def _within_window(node: Call, padding) -> bool:
    """Every side's padding is smaller than the window's extent ((K − 1)·dilation + 1): the range any
    exporter's SAME or explicit padding has, and the one every kernel variant is written for (no
    window lies wholly in the padding)."""
    axes = _spatial_axes(node)
    if node.op in CONVS:
        w = node.args[1].ty.shape
        kernel = (w[1], w[2]) if node.attrs["kernel_layout"] == "OHWI" else (w[2], w[3])
        dil = node.attrs["dilation"]
    else:
        kernel, dil = node.attrs["pool_size"], (1, 1)
    ext = [(k - 1) * d + 1 for k, d in zip(kernel, dil)]
    return axes is not None and all(p < ext[i % 2] for i, p in enumerate(padding))


def _value_fits(node: Call, pad: Call, padding) -> bool:
    """The pad value is what the consumer's padding stands for (module doc, per op)."""
    v, a, dtype = pad.attrs["pad_value"], node.attrs, pad.ty.dtype
    if node.op == "nn.conv2d":
        return dtype.startswith("float") and float(v) == 0.0
    if node.op == "qnn.conv2d":
        return not dtype.startswith("float") and float(v) == float(a.get("input_zero_point", 0))
    if a["ceil_mode"]:
        return False
    if node.op == "nn.max_pool2d":
        return _is_lowest(float(v), dtype) and _max_windows_real(node, padding)
    return dtype.startswith("float") and float(v) == 0.0 and (a["count_include_pad"] or not any(a["padding"]))


def fold_into(node: Call, made: dict | None = None) -> Call | None:
    """``node`` (a conv or pool whose data operand is an ``nn.pad``, or a transpose of one) reading the
    pad's input with the pad added to its padding, or None when that is not the same function.
    ``made``: shared across the calls of one rewrite (``padded_source``)."""
    src = padded_source(node.args[0], {} if made is None else made)
    if src is None:
        return None
    pad, width, unpadded = src
    pads = spatial_pads(width, node)
    if pads is None:
        return None
    padding = tuple(p + q for p, q in zip(node.attrs["padding"], pads))
    if not _within_window(node, padding) or not _value_fits(node, pad, padding):
        return None
    attrs = {**node.attrs, "padding": padding}
    if node.op == "nn.avg_pool2d":
        attrs["count_include_pad"] = True
    folded = call(node.op, unpadded(), *node.args[1:], span=node.span, **attrs)
    return folded if folded.ty == node.ty else None


def fold_pad(mod: IRModule) -> IRModule:
    """Fold every foldable ``nn.pad`` into its conv/pool consumers (module doc); a pad left without
    users vanishes with the rewrite."""
    made: dict = {}

    def visit(node, orig):
        if _is(node, *CONVS, *POOLS):
            return fold_into(node, made)
        return None

    return mod.with_main(rewrite(mod.main, visit))
