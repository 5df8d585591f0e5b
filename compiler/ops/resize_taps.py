"""Multi-tap resampling tables of nn.resize2d: mode cubic, antialias (linear and cubic) and
coordinate_transformation_mode tf_crop_and_resize (ONNX Resize-13..19, float32 only).

Each output index x of an axis reads K source indices with K weights (``TapTable``), computed once
at compile time from the static sizes in float64, after the ONNX reference implementation
(onnx/reference/ops/op_resize.py, the source of the node tests' expected outputs):

- source coordinate c(x) (``s`` the scale given, or out / in; L = in · s):
  half_pixel ``(x + 0.5) / s - 0.5``; pytorch_half_pixel the same, 0 when L <= 1; asymmetric ``x / s``;
  align_corners ``x · (in - 1) / (L - 1)`` (0 when L == 1); half_pixel_symmetric
  ``in/2 · (1 - out / L) + (x + 0.5) / s - 0.5``; tf_half_pixel_for_nn ``(x + 0.5) / s``;
  tf_crop_and_resize ``roi0 · (in - 1) + x · (roi1 - roi0) · (in - 1) / (L - 1)`` (centre of the roi
  when L == 1), and the output is ``extrapolation_value`` where c < 0 or c > in - 1 on any axis.
- base b = ceil(c) - 1 and ratio t = c - b in (0, 1]; taps b + j for j in [j0, 1 - j0] with weight
  f((j - t) · s'), s' = min(s, 1) with antialias else 1, j0 = 1 - ceil(R / s') (R = 1 linear,
  2 cubic; the reference's floor(-R / s') + 1); f the triangle max(0, 1 - |u|) (linear) or Keys'
  cubic kernel with A = ``cubic_coeff_a``: (A+2)|u|³ - (A+3)|u|² + 1 for |u| <= 1,
  A|u|³ - 5A|u|² + 8A|u| - 4A for 1 < |u| < 2, else 0.
- antialias weights are divided by their sum; with ``exclude_outside`` the weights of taps outside
  [0, in) are zeroed and the rest divided by their sum; taps are then clamped to [0, in - 1] (the
  reference's edge padding). nearest (tf_crop_and_resize only): one tap at the float32 coordinate
  and ``nearest_mode`` rounding of ops/resize_coords.py (onnxruntime's; the float64 coordinate above
  decides ties and the crop's edges otherwise than onnxruntime).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .resize_coords import ONNX_TIE, nearest_index, source_coords


@dataclass
class TapTable:
    """Per output index of one axis: ``idx`` int32 [out, K] source indices in [0, in), ``w`` float32
    [out, K] weights, ``valid`` bool [out] (False: the output is the extrapolation value)."""

    idx: np.ndarray
    w: np.ndarray
    valid: np.ndarray


def uses_taps(attrs: dict) -> bool:
    """Whether nn.resize2d ``attrs`` need the multi-tap tables (cubic, antialias, crop and resize)."""
    return attrs.get("method") == "cubic" or bool(attrs.get("antialias")) \
        or attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize"


def _coords(n_in: int, n_out: int, scale: float | None, mode: str, roi) -> np.ndarray:
    x = np.arange(n_out, dtype=np.float64)
    s = float(scale) if scale else n_out / n_in
    length = n_in * s if scale else float(n_out)
    if mode == "align_corners":
        return np.zeros(n_out) if length == 1 else x * (n_in - 1) / (length - 1)
    if mode == "asymmetric":
        return x / s
    if mode == "tf_crop_and_resize":
        r0, r1 = roi
        if length == 1:
            return np.full(n_out, (r1 - r0) * (n_in - 1) / 2 + r0 * (n_in - 1))
        return x * (r1 - r0) * (n_in - 1) / (length - 1) + r0 * (n_in - 1)
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / s
    if mode == "pytorch_half_pixel" and length <= 1:
        return np.zeros(n_out)
    if mode == "half_pixel_symmetric":
        return n_in / 2 * (1 - n_out / length) + (x + 0.5) / s - 0.5
    return (x + 0.5) / s - 0.5


def _kernel(u: np.ndarray, method: str, a: float) -> np.ndarray:
    u = np.abs(u)
    if method == "linear":
        return np.clip(1 - u, 0, 1)
    near = ((a + 2) * u - (a + 3)) * u * u + 1
    far = ((a * u - 5 * a) * u + 8 * a) * u - 4 * a
    return np.where(u <= 1, near, np.where(u < 2, far, 0.0))


def _nearest_table(n_in: int, n_out: int, scale: float | None, attrs: dict, roi) -> TapTable:
    """One tap per output index: the float32 coordinate of ops/resize_coords.py (onnxruntime's
    arithmetic, its tie tolerance), the extrapolation value where it leaves [0, in - 1]."""
    mode = attrs["coordinate_transformation_mode"]
    c = source_coords(n_in, n_out, scale, mode, "onnx", roi)
    valid = (c >= 0) & (c <= n_in - 1) if mode == "tf_crop_and_resize" else np.ones(n_out, bool)
    idx = np.clip(nearest_index(c, attrs["nearest_mode"], ONNX_TIE), 0, n_in - 1).astype(np.int32)[:, None]
    return TapTable(np.where(valid[:, None], idx, 0), valid[:, None].astype(np.float32), valid)


def tap_table(n_in: int, n_out: int, scale: float | None, attrs: dict, roi=(0.0, 1.0)) -> TapTable:
    """The taps of one axis (module doc) for nn.resize2d ``attrs``; ``scale`` the axis's given
    scale or None (out / in), ``roi`` its (start, end) for tf_crop_and_resize."""
    mode, method = attrs["coordinate_transformation_mode"], attrs["method"]
    if method == "nearest":
        return _nearest_table(n_in, n_out, scale, attrs, roi)
    c = _coords(n_in, n_out, scale, mode, roi)
    valid = (c >= 0) & (c <= n_in - 1) if mode == "tf_crop_and_resize" else np.ones(n_out, bool)
    s = float(scale) if scale else n_out / n_in
    sa = min(s, 1.0) if attrs.get("antialias") else 1.0
    reach = 1 if method == "linear" else 2
    j0 = int(math.floor(-reach / sa)) + 1
    j = np.arange(j0, 2 - j0)
    base = np.ceil(c) - 1
    ratio = c - base
    idx = base[:, None] + j[None, :]
    w = _kernel((j[None, :] - ratio[:, None]) * sa, method, float(attrs.get("cubic_coeff_a", -0.75)))
    if attrs.get("antialias"):
        w = w / w.sum(1, keepdims=True)
    if attrs.get("exclude_outside"):
        w = np.where((idx >= 0) & (idx < n_in), w, 0.0)
        w = w / w.sum(1, keepdims=True)
    w = np.where(valid[:, None], w, 0.0)
    idx = np.where(valid[:, None], np.clip(idx, 0, n_in - 1), 0)
    return TapTable(idx.astype(np.int32), w.astype(np.float32), valid)


def resample(x: np.ndarray, tables, axes, extrapolation_value: float) -> np.ndarray:
    """Σ_k w[o, k] · x[idx[o, k]] along each of ``axes`` in turn (float64), then the extrapolation
    value where any axis is not valid; float32 [..., OH, ..., OW, ...]."""
    v = x.astype(np.float64)
    for t, ax in zip(tables, axes):
        shape = [1] * v.ndim
        shape[ax] = t.idx.shape[0]
        v = sum(v.take(t.idx[:, k], ax) * t.w[:, k].astype(np.float64).reshape(shape)
                for k in range(t.idx.shape[1]))
    ok = np.ones((), bool)
    for t, ax in zip(tables, axes):
        shape = [1] * v.ndim
        shape[ax] = -1
        ok = ok & t.valid.reshape(shape)
    return np.where(ok, v, extrapolation_value).astype(np.float32)
