"""nn.resize2d: nearest / bilinear resampling of the two spatial axes (ONNX Resize-10..19, TFLite
RESIZE_BILINEAR v1-4 and RESIZE_NEAREST_NEIGHBOR v1-4), float32 and int8.

Every output row (column) reads at most two input rows (columns); which ones and with what weights
depends only on the static sizes, so :func:`axis_table` computes them once (the numpy reference
here and the C lowering's const tables use the same table). Per axis, output index ``x`` maps to
the source coordinate ``c(x)`` of ops/resize_coords.py (ONNX Resize-19
``coordinate_transformation_mode`` in onnxruntime's float32 arithmetic, or TFLite's). nearest:
``nearest_mode`` rounds c (round_prefer_floor/ceil, floor, ceil; an ONNX tie within 1e-6 of
k + 0.5), clamped to [0, in - 1]. linear: c clamped to [0, in - 1], i0 = floor(c),
i1 = min(i0 + 1, in - 1), weights 1 - (c - i0) and c - i0; the 2-D result is Σ x[i, j]·wy·wx.

int8 (TFLM ``reference_ops::ResizeBilinearInteger``): weights in 10 fractional bits (TFLite: its
``scale_10`` integer coordinate arithmetic, ONNX: round(w · 1024)), acc = Σ x·wy·wx (2^20 = 1.0),
out = (acc ± 2^19) / 2^20 truncated (``rounding='double'``, round half away from zero) or
(acc + 2^19) >> 20 (``'single'``, TFLITE_SINGLE_ROUNDING). int8 nearest copies bytes. Input and
output share (scale, zero point) (legalize_qdq requantizes otherwise).

mode cubic, antialias and tf_crop_and_resize (float32 only) read K taps per output row and column:
ops/resize_taps.py.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType
from .resize_coords import ONNX_TIE, nearest_index, source_coords
from .resize_taps import TapTable, resample, tap_table, uses_taps

MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
         "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
ONE_10 = 1 << 10        # 1.0 in TFLM's 10-fractional-bit resize weights


@dataclass
class AxisTable:
    """Per output index of one axis: source indices ``i0``, ``i1`` (int32 [out]) and their weights
    ``w0``, ``w1`` (float32, or int32 with 1.0 = 1024 for int8; nearest: i1 = i0, w0 = 1, w1 = 0)."""

    i0: np.ndarray
    i1: np.ndarray
    w0: np.ndarray
    w1: np.ndarray


def _tflm_fixed(n_in: int, n_out: int, mode: str):
    """TFLM ResizeBilinearInteger's per-axis (scaled_value, lower, upper) in 10 fractional bits."""
    scale_10 = (ONE_10 * n_in + n_out // 2) // n_out
    if mode == "align_corners" and n_out > 1:
        scale_10 = (ONE_10 * (n_in - 1) + (n_out - 1) // 2) // (n_out - 1)
    sv = np.arange(n_out, dtype=np.int64) * scale_10
    if mode == "half_pixel":
        sv = sv + scale_10 // 2 - (1 << 9)
    trunc = np.fix(sv / ONE_10).astype(np.int64)                     # C division truncates
    lo = np.clip(trunc, 0, n_in - 1)
    hi = np.minimum(np.fix((sv + ONE_10 - 1) / ONE_10).astype(np.int64), n_in - 1)
    return sv, lo, hi


def axis_table(n_in: int, n_out: int, attrs: dict, axis: int, dtype: str) -> AxisTable:
    """Source indices and weights of one spatial axis (0: H, 1: W) for ``attrs`` of nn.resize2d."""
    scales = attrs["scales"]
    mode, conv = attrs["coordinate_transformation_mode"], attrs["convention"]
    c = source_coords(n_in, n_out, scales[axis] if scales else None, mode, conv)
    integer = dtype != "float32" and dtype != "float64"
    if attrs["method"] == "nearest":
        tie = ONNX_TIE if conv == "onnx" else 0.0
        i0 = np.clip(nearest_index(c, attrs["nearest_mode"], tie), 0, n_in - 1).astype(np.int32)
        one = np.ones(n_out, np.int32 if integer else np.float32)
        return AxisTable(i0, i0, one, one * 0)
    if integer and conv == "tflite":
        sv, i0, i1 = _tflm_fixed(n_in, n_out, mode)
        w1 = sv - ONE_10 * i0
    else:
        c = np.clip(c, np.float32(0), np.float32(n_in - 1))
        i0 = np.floor(c).astype(np.int64)
        i1 = np.minimum(i0 + 1, n_in - 1)
        frac = c - i0.astype(np.float32)
        w1 = np.floor(frac.astype(np.float64) * ONE_10 + 0.5).astype(np.int64) if integer else frac
    same = i0 == i1                       # one source row: its weights sum to 1 exactly
    w0 = (ONE_10 if integer else np.float32(1)) - w1
    w0, w1 = np.where(same, w0 + w1, w0), np.where(same, 0, w1)
    wt = np.int32 if integer else np.float32
    return AxisTable(i0.astype(np.int32), i1.astype(np.int32), w0.astype(wt), w1.astype(wt))


def spatial_axes(layout: str) -> tuple[int, int]:
    return (2, 3) if layout == "NCHW" else (1, 2)


@register_op
class Resize2D(OpDef):
    """Attributes: ``method`` (nearest, linear, cubic), ``coordinate_transformation_mode`` (MODES),
    ``nearest_mode`` (NEAREST_MODES), ``size`` (OH, OW), ``scales`` ((sh, sw) as given, or () for
    out / in), ``convention`` (onnx, tflite), ``rounding`` (int8: double, single), ``layout``; for
    the multi-tap forms (float32): ``cubic_coeff_a``, ``exclude_outside``, ``antialias``, ``roi``
    (((h0, h1), (w0, w1)) normalized, tf_crop_and_resize) and ``extrapolation_value``."""

    name, pattern, num_inputs = "nn.resize2d", OpPattern.OUT_ELEMWISE_FUSABLE, 1
    cost_family = "pool"
    attrs = {"method": "nearest", "coordinate_transformation_mode": "half_pixel",
             "nearest_mode": "round_prefer_floor", "size": (1, 1), "scales": (), "convention": "onnx",
             "rounding": "double", "layout": "NCHW", "cubic_coeff_a": -0.75, "exclude_outside": False,
             "antialias": False, "roi": (), "extrapolation_value": 0.0}

    def infer(self, args, attrs):
        (x,) = args
        if x.ndim != 4 or x.dtype not in ("float32", "int8"):
            raise TinyfuseError(f"nn.resize2d: need a 4-D float32 or int8 input, got {list(x.shape)} {x.dtype}")
        if uses_taps(attrs) and x.dtype != "float32":
            raise TinyfuseError(f"nn.resize2d: mode {attrs['method']} with antialias={int(attrs.get('antialias', 0))} "
                                f"and {attrs['coordinate_transformation_mode']} has a float32 kernel only, got {x.dtype}")
        if attrs["method"] not in ("nearest", "linear", "cubic") or attrs["coordinate_transformation_mode"] not in MODES \
                or attrs["nearest_mode"] not in NEAREST_MODES:
            raise TinyfuseError(f"nn.resize2d: unknown method/mode {attrs['method']}, "
                                f"{attrs['coordinate_transformation_mode']}, {attrs['nearest_mode']}")
        oh, ow = attrs["size"]
        if oh < 1 or ow < 1:
            raise TinyfuseError(f"nn.resize2d: empty output size {[oh, ow]} from input {list(x.shape)}")
        shape = list(x.shape)
        hax, wax = spatial_axes(attrs["layout"])
        shape[hax], shape[wax] = oh, ow
        return TensorType(tuple(shape), x.dtype)

    def tables(self, in_shape, attrs, dtype) -> tuple[AxisTable, AxisTable]:
        hax, wax = spatial_axes(attrs["layout"])
        return (axis_table(in_shape[hax], attrs["size"][0], attrs, 0, dtype),
                axis_table(in_shape[wax], attrs["size"][1], attrs, 1, dtype))

    def tap_tables(self, in_shape, attrs) -> tuple[TapTable, TapTable]:
        """The multi-tap tables of H and W (ops/resize_taps.py) when ``uses_taps(attrs)``."""
        axes, scales, roi = spatial_axes(attrs["layout"]), attrs["scales"], attrs["roi"]
        return tuple(tap_table(in_shape[ax], attrs["size"][i], scales[i] if scales else None, attrs,
                               roi[i] if roi else (0.0, 1.0)) for i, ax in enumerate(axes))

    def compute(self, x, **attrs):
        a = {**self.attrs, **attrs}
        hax, wax = spatial_axes(a["layout"])
        if uses_taps(a):
            return resample(x, self.tap_tables(x.shape, a), (hax, wax), a["extrapolation_value"])
        ty, tx = self.tables(x.shape, a, str(x.dtype))
        if a["method"] == "nearest":
            return x.take(ty.i0, hax).take(tx.i0, wax)
        integer = x.dtype == np.int8
        v = x.astype(np.int64 if integer else np.float32)

        def along(arr, t, ax):
            shape = [1] * arr.ndim
            shape[ax] = -1
            return arr.take(t.i0, ax) * t.w0.reshape(shape) + arr.take(t.i1, ax) * t.w1.reshape(shape)

        acc = along(along(v, ty, hax), tx, wax)
        if not integer:
            return acc.astype(np.float32)
        half = 1 << 19
        if a["rounding"] == "single":
            q = (acc + half) >> 20
        else:
            q = np.where(acc > 0, acc + half, acc - half)
            q = np.sign(q) * (np.abs(q) >> 20)
        return np.clip(q, -128, 127).astype(np.int8)
