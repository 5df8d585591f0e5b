"""Source coordinates and nearest rounding of nn.resize2d (ONNX Resize-10..19, TFLite RESIZE_*).

Per axis, output index ``x`` maps to the source coordinate ``c(x)`` (ONNX Resize-19
``coordinate_transformation_mode``; ``s`` the given scale or ``out / in``; ``L`` = in · s when
scales are given, else out):

    half_pixel             (x + 0.5) / s - 0.5       pytorch_half_pixel   the same, 0 when L <= 1
    half_pixel_symmetric   in/2 · (1 - out / (in · s)) + (x + 0.5) / s - 0.5   (Resize-19)
    asymmetric             x / s                     tf_half_pixel_for_nn   (x + 0.5) / s
    align_corners          x · (in - 1) / (L - 1)    (0 when L == 1)
    tf_crop_and_resize     r0 · (in - 1) + x · (r1 - r0) · (in - 1) / (L - 1)
                           ((r0 + r1) / 2 · (in - 1) when L == 1; (r0, r1) the axis's roi)

computed in float32 with onnxruntime's CPU kernel's operation order (``convention='onnx'``; its
half_pixel_symmetric and the one-output crop finish in float64, as onnxruntime's do), or as
TFLite's reference kernels do (``convention='tflite'``: ``x · scale`` with ``scale = in / out``,
or ``(in - 1) / (out - 1)`` with align_corners).

nearest_mode (ONNX): round_prefer_floor / round_prefer_ceil round c to the nearest integer and
decide a tie (c = k + 0.5) toward k / k + 1; floor and ceil. float32 arithmetic misses exact ties
by an ulp (half_pixel 20 → 6: (4 + 0.5) / 0.3f - 0.5 = 14.499999), so with the ONNX convention a c
within ``ONNX_TIE`` of k + 0.5 is a tie, as onnxruntime's CPU kernel (1.32) decides it; the
ONNX reference evaluator computes c in float64 and agrees where its own rounding hits the tie.
TFLite's nearest kernel rounds half away from zero (``TfLiteRound``) with no tolerance.
"""
from __future__ import annotations

import numpy as np

ONNX_TIE = 1e-6     # |c - (k + 0.5)| <= ONNX_TIE is a tie (onnxruntime CPU Resize, nearest)


def _tflite_coords(n_in: int, n_out: int, mode: str) -> np.ndarray:
    f32 = np.float32
    x = np.arange(n_out, dtype=f32)
    s = f32(n_in) / f32(n_out)
    if mode == "align_corners" and n_out > 1:
        s = f32(n_in - 1) / f32(n_out - 1)
    if mode == "half_pixel":
        return (x + f32(0.5)) * s - f32(0.5)
    return (x + f32(0.5)) * s if mode == "tf_half_pixel_for_nn" else x * s


def source_coords(n_in: int, n_out: int, scale: float | None, mode: str, convention: str,
                  roi: tuple[float, float] = (0.0, 1.0)) -> np.ndarray:
    """c(x) for x in [0, n_out) as float32 [n_out] (module doc), before clamping; ``scale`` the
    axis's given scale or None (out / in), ``roi`` its normalized (start, end) for
    tf_crop_and_resize."""
    if convention == "tflite":
        return _tflite_coords(n_in, n_out, mode)
    f32 = np.float32
    x = np.arange(n_out, dtype=f32)
    s = f32(scale) if scale else f32(n_out) / f32(n_in)
    length = f32(n_in) * s if scale else f32(n_out)    # ONNX length_resized: in · scale when scales are given
    if mode == "align_corners":
        return np.zeros(n_out, f32) if length == 1 else x * f32(n_in - 1) / (length - f32(1))
    if mode == "asymmetric":
        return x / s
    if mode == "tf_half_pixel_for_nn":
        return (x + f32(0.5)) / s
    if mode == "pytorch_half_pixel" and length <= 1:
        return np.zeros(n_out, f32)
    if mode == "half_pixel_symmetric":     # Resize-19: centred when out is not exactly in · s
        offset = f32(n_in) / f32(2) * (f32(1) - f32(n_out) / (s * f32(n_in)))
        return (np.float64(offset) + (x.astype(np.float64) + 0.5) / np.float64(s) - 0.5).astype(f32)
    if mode == "tf_crop_and_resize":
        r0, r1 = f32(roi[0]), f32(roi[1])
        span = f32(n_in - 1)
        if length == 1:
            return np.full(n_out, 0.5 * np.float64(r0 + r1) * np.float64(span), f32)
        return r0 * span + x * (r1 - r0) * span / (length - f32(1))
    return (x + f32(0.5)) / s - f32(0.5)


def nearest_index(c: np.ndarray, nearest_mode: str, tie: float = 0.0) -> np.ndarray:
    """ONNX Resize nearest_mode rounding of source coordinates ``c`` (float64 [n], not clamped);
    a c within ``tie`` of k + 0.5 is a tie (``ONNX_TIE`` for the ONNX convention, 0 for TFLite)."""
    c = c.astype(np.float64)
    fl = np.floor(c)
    if nearest_mode == "floor":
        return fl
    if nearest_mode == "ceil":
        return np.ceil(c)
    half = np.abs(c - fl - 0.5) <= tie
    if nearest_mode == "round_prefer_floor":
        return np.where(half, fl, np.floor(c + 0.5))
    return np.where(half, fl + 1, np.floor(c + 0.5))   # round_prefer_ceil (std::round for c >= 0)
