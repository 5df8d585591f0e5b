"""ONNX Resize nearest over every in/out size 1..24, on the numpy reference of nn.resize2d (its
index tables are the C kernel's const tables), against onnxruntime and onnx's ReferenceEvaluator.

round_prefer_floor / round_prefer_ceil decide a tie c = k + 0.5; float32 coordinates miss exact ties
by an ulp (half_pixel 20 → 6: (4 + 0.5) / 0.3f - 0.5 = 14.499999, asymmetric 7 → 2: 1 / (2/7)f =
3.4999998), and onnxruntime counts c within 1e-6 of k + 0.5 as a tie. Oracle: onnxruntime, except
where it copies the input (an axis of equal in and out size: it skips the transform, which
tf_crop_and_resize's roi and tf_half_pixel_for_nn's offset still move; those sizes are left out).
The reference evaluator computes c in float64 and so misses some ties the other way (onnxruntime
and it differ on 1..7 of the 576 sizes per round mode); with given scales the test takes the cases
where the two agree.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

from tinyfuse.frontend import from_onnx
from tinyfuse.ir.interpreter import run_module
from tests.builders.resize_models import onnx_resize_sweep
from tests.conftest import ort_run

N = 24
ROI = (0.15, 0.8)
ROUND = ["round_prefer_ceil", "round_prefer_floor"]
NEAREST = ROUND + ["floor", "ceil"]
# (coordinate_transformation_mode, opset): Resize-11, 13, 18 and 19 forms
MODES = [("half_pixel", 11), ("half_pixel", 13), ("half_pixel", 18), ("half_pixel", 19),
         ("pytorch_half_pixel", 13), ("align_corners", 18), ("asymmetric", 19), ("half_pixel_symmetric", 19),
         ("tf_crop_and_resize", 13), ("tf_half_pixel_for_nn", 11)]
SCALES = [0.25, 0.3, 1 / 3, 0.35, 0.45, 0.5, 0.55, 0.6, 0.65, 2 / 3, 0.7, 0.75, 0.8, 0.9, 0.95, 1.25, 1.3, 1.5,
          1.7, 2.0, 2.2, 2.5, 3.0]


def _outputs(n_in, outs, ctm, nearest_mode, opset, scales=False):
    """(tinyfuse, onnxruntime, reference or None) outputs of one sweep model, input value = flat index."""
    model = onnx_resize_sweep(n_in, outs, opset, scales=scales, roi=ROI, coordinate_transformation_mode=ctm,
                              nearest_mode=nearest_mode)
    x = np.arange(n_in * n_in, dtype=np.float32).reshape(1, 1, n_in, n_in)
    try:
        ref = ReferenceEvaluator(model).run(None, {"X": x})
    except ValueError:                       # the reference has no tf_half_pixel_for_nn
        ref = [None] * len(outs)
    return run_module(from_onnx(model), [x]), ort_run(model, {"X": x}), ref


def _same(a, b) -> bool:
    return a is not None and b is not None and a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("nearest_mode", NEAREST)
@pytest.mark.parametrize("ctm,opset", MODES)
def test_nearest_every_size_equals_onnxruntime(ctm, opset, nearest_mode):
    """sizes input: tinyfuse's source index of every output row and column is onnxruntime's."""
    bad = []
    for n_in in range(1, N + 1):
        outs = list(range(1, N + 1))
        got, ort, ref = _outputs(n_in, outs, ctm, nearest_mode, opset)
        for o, g, w, r in zip(outs, got, ort, ref):
            if o == n_in and ctm in ("tf_crop_and_resize", "tf_half_pixel_for_nn"):
                continue                     # onnxruntime copies; the reference computes in float64
            if not _same(g, w):
                bad.append((n_in, o))
    assert not bad, f"{len(bad)} of {N * N} (in, out) sizes pick other pixels, first {bad[:6]}"


@pytest.mark.parametrize("nearest_mode", ROUND)
@pytest.mark.parametrize("ctm", ["half_pixel", "pytorch_half_pixel", "asymmetric", "half_pixel_symmetric",
                                 "align_corners", "tf_crop_and_resize"])
def test_nearest_given_scales_equal_both_oracles_where_they_agree(ctm, nearest_mode):
    """scales input (out = floor(in · scale)) for in 4..24: where onnxruntime and the reference agree
    (they differ on align_corners and tf_crop_and_resize's length_resized, in · scale for the
    reference and the spec, the integer out for onnxruntime), tinyfuse equals them."""
    bad, agreed = [], 0
    for n_in in range(4, N + 1):
        got, ort, ref = _outputs(n_in, SCALES, ctm, nearest_mode, 19, scales=True)
        for s, g, w, r in zip(SCALES, got, ort, ref):
            if _same(w, r):
                agreed += 1
                if not _same(g, w):
                    bad.append((n_in, round(s, 4)))
    assert agreed > 100
    assert not bad, f"{len(bad)} (in, scale) cases pick other pixels than both oracles, first {bad[:6]}"


def test_half_pixel_20_to_6_tie():
    """The published case: x_original = (4 + 0.5) · 20/6 - 0.5 = 14.5 exactly."""
    for nearest_mode, pixel in (("round_prefer_ceil", 15), ("round_prefer_floor", 14)):
        got, ort, ref = _outputs(20, [6], "half_pixel", nearest_mode, 13)
        column = [int(y[0][0, 0, 0, 4]) % 20 for y in (got, ort, ref)]      # input value = row · 20 + column
        assert column == [pixel] * 3
