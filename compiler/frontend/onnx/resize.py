"""ONNX Resize-10..19 (models below opset 13 arrive upgraded) → nn.resize2d over the last two axes.

Supported: mode nearest / linear / cubic (``cubic_coeff_a``, ``exclude_outside``); ``antialias``
(18; linear and cubic); coordinate_transformation_mode half_pixel (default since 11),
pytorch_half_pixel, align_corners, asymmetric, half_pixel_symmetric (19), tf_half_pixel_for_nn (11;
also spelled tf_half_pixel_for_nearest), tf_crop_and_resize (``roi``, ``extrapolation_value``); nearest_mode
round_prefer_floor (default), round_prefer_ceil, floor, ceil; the output from ``scales``
(out = floor(in · scale), float32 as onnxruntime) or ``sizes`` (with Resize-18's ``axes`` and
``keep_aspect_ratio_policy``). The axes before the last two must keep their size (and their roi
[0, 1]). cubic, antialias and tf_crop_and_resize run in float32 only (ops/resize_taps.py).
"""
from __future__ import annotations

import math

import numpy as np

from ...ir import call
from .ops import reshape
from .registry import Node, const_value, converter, optional_arg


def _given(node: Node, e, what: str):
    """The constant value of an optional input, or None when absent or empty."""
    if e is None:
        return None
    v = const_value(node, e, what).reshape(-1)
    return v if v.size else None


def _full(node: Node, values, axes, rank: int, fill) -> list:
    if axes is None:
        if len(values) != rank:
            raise node.error(f"{len(values)} values for a rank-{rank} input")
        return list(values)
    out = list(fill)
    for a, v in zip(axes, values):
        out[a] = v
    return out


def _output(node: Node, shape, scales, sizes, axes):
    """(output shape, per-axis scale used by the coordinate transform or None for out / in)."""
    rank = len(shape)
    if sizes is not None:
        size = [int(v) for v in _full(node, sizes, axes, rank, shape)]
        policy = node.attr("keep_aspect_ratio_policy", "stretch")
        if policy == "stretch":
            return size, None
        if policy not in ("not_larger", "not_smaller"):
            raise node.error(f"keep_aspect_ratio_policy '{policy}' is not valid")
        moved = [a for a in (axes or range(rank))]
        pick = min if policy == "not_larger" else max
        s = pick(np.float32(size[a]) / np.float32(shape[a]) for a in moved)
        out = list(shape)
        for a in moved:
            out[a] = int(math.floor(float(s) * shape[a] + 0.5))
        return out, [float(s) if a in moved else 1.0 for a in range(rank)]
    if scales is None:
        raise node.error("neither scales nor sizes is given")
    sc = [float(v) for v in _full(node, scales, axes, rank, [1.0] * rank)]
    if min(sc) <= 0:
        raise node.error(f"scales {sc} must be positive")
    return [int(np.floor(np.float32(s) * np.float32(d))) for s, d in zip(sc, shape)], sc


@converter("Resize")
def convert_resize(node: Node, args):
    """Resize-11..19 semantics (module doc): [..., H, W] → nn.resize2d on [1, lead, H, W]."""
    x = args[0]
    mode = node.attr("mode", "nearest")
    ctm = node.attr("coordinate_transformation_mode", "half_pixel")
    ctm = "tf_half_pixel_for_nn" if ctm == "tf_half_pixel_for_nearest" else ctm   # onnxruntime's old spelling
    if mode not in ("nearest", "linear", "cubic"):
        raise node.error(f"mode '{mode}' is not valid (nearest, linear or cubic)")
    if node.attr("antialias", 0) and mode == "nearest":
        raise node.error("antialias=1 applies to linear and cubic only")
    if x.ty.ndim < 2:
        raise node.error(f"input {list(x.ty.shape)} must have at least 2 axes")
    rank, shape = x.ty.ndim, list(x.ty.shape)
    axes = node.attr("axes")
    if axes is not None:
        axes = [a + rank if a < 0 else a for a in axes]
    out, scales = _output(node, shape, _given(node, optional_arg(args, 2), "scales"),
                          _given(node, optional_arg(args, 3), "sizes"), axes)
    if out[:-2] != shape[:-2]:
        raise node.error(f"resizes axes before the last two: {shape} → {out}", "tinyfuse resizes H and W only")
    lead = math.prod(shape[:-2])
    extra = _taps_attrs(node, args, mode, ctm, axes, rank)
    y = call("nn.resize2d", reshape(node, x, (1, lead) + tuple(shape[-2:])), span=node.name, method=mode,
             coordinate_transformation_mode=ctm, nearest_mode=node.attr("nearest_mode", "round_prefer_floor"),
             size=tuple(out[-2:]), scales=tuple(scales[-2:]) if scales is not None else (), layout="NCHW", **extra)
    return reshape(node, y, out)


def _taps_attrs(node: Node, args, mode: str, ctm: str, axes, rank: int) -> dict:
    """nn.resize2d attributes of the multi-tap forms (cubic, antialias, tf_crop_and_resize), {} else."""
    extra = {}
    if mode == "cubic":
        extra.update(cubic_coeff_a=float(node.attr("cubic_coeff_a", -0.75)),
                     exclude_outside=bool(node.attr("exclude_outside", 0)))
    if node.attr("antialias", 0):
        extra["antialias"] = True
    if ctm == "tf_crop_and_resize":
        roi = _given(node, optional_arg(args, 1), "roi")
        if roi is None:
            raise node.error("coordinate_transformation_mode 'tf_crop_and_resize' needs the roi input")
        n = len(axes) if axes is not None else rank
        if len(roi) != 2 * n:
            raise node.error(f"roi has {len(roi)} values, expected {2 * n} (starts then ends)")
        pairs = _full(node, [(float(roi[i]), float(roi[i + n])) for i in range(n)], axes, rank, [(0.0, 1.0)] * rank)
        if any(p != (0.0, 1.0) for p in pairs[:-2]):
            raise node.error(f"roi {roi.tolist()} crops an axis before the last two", "tinyfuse resizes H and W only")
        extra.update(roi=tuple(pairs[-2:]), extrapolation_value=float(node.attr("extrapolation_value", 0.0)))
    return extra
