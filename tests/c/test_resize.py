"""nn.resize2d (ONNX Resize, TFLite RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR) against independent oracles.

- float ONNX Resize vs onnxruntime over methods, coordinate transforms, nearest modes, scales and
  sizes, up- and down-sampling with odd sizes (and the numpy reference, ops/resize.py, on the IR);
- int8 .tflite one-op models vs TFLM bit for bit (align_corners x half_pixel_centers, up and down);
- ONNX QDQ int8 (DQ → Resize → Q) vs onnxruntime: nearest exact (data movement), linear within 1 LSB;
- float .tflite one-op models on selfie_segmentation's RESIZE_BILINEAR shapes vs TFLM float;
- unsupported forms are one-line TinyfuseErrors.
The ONNX node tests are in tests/conformance (expected_failures.txt lists the refused forms).
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tinyfuse.frontend import from_onnx
from tinyfuse.ir.interpreter import run_module
from tests.builders.resize_models import onnx_resize, run_tflm, tflite_resize
from tests.conftest import assert_close_to, compile_and_run, ort_run

# (x_shape NCHW, output H, W): up and down, odd sizes, non-integer ratios
SHAPES = [((1, 3, 5, 7), (9, 13)), ((2, 2, 9, 13), (4, 5)), ((1, 3, 6, 9), (9, 6)), ((1, 2, 1, 4), (3, 8))]
FLOAT_CASES = [
    ("nearest", "half_pixel", "round_prefer_floor"), ("nearest", "half_pixel", "round_prefer_ceil"),
    ("nearest", "asymmetric", "floor"), ("nearest", "asymmetric", "ceil"),
    ("nearest", "align_corners", "round_prefer_floor"),
    ("nearest", "pytorch_half_pixel", "round_prefer_ceil"),
    ("linear", "half_pixel", ""), ("linear", "asymmetric", ""), ("linear", "align_corners", ""),
    ("linear", "pytorch_half_pixel", ""),
]


def _attrs(mode, ctm, nearest_mode):
    a = dict(mode=mode, coordinate_transformation_mode=ctm)
    return {**a, "nearest_mode": nearest_mode} if nearest_mode else a


@pytest.mark.parametrize("shape_i", range(len(SHAPES)))
@pytest.mark.parametrize("mode,ctm,nearest_mode", FLOAT_CASES)
def test_float_onnx_sizes_vs_onnxruntime(tmp_path, mode, ctm, nearest_mode, shape_i):
    x_shape, (oh, ow) = SHAPES[shape_i]
    model = onnx_resize(x_shape, out_size=x_shape[:2] + (oh, ow), **_attrs(mode, ctm, nearest_mode))
    x = np.random.default_rng(shape_i).standard_normal(x_shape).astype(np.float32)
    (got,), _ = compile_and_run(model, [x], tmp_path)
    want = ort_run(model, {"X": x})[0]
    assert got.shape == (x_shape[0], x_shape[1], oh, ow)
    assert_close_to(got, want, 1e-5)
    assert_close_to(run_module(from_onnx(model), [x])[0], want, 1e-5)


@pytest.mark.parametrize("scales", [(1, 1, 2.0, 3.0), (1, 1, 0.6, 0.5), (1, 1, 1.7, 0.8)])
@pytest.mark.parametrize("mode,ctm,nearest_mode", [("nearest", "asymmetric", "floor"),
                                                   ("nearest", "half_pixel", "round_prefer_floor"),
                                                   ("linear", "half_pixel", ""), ("linear", "align_corners", "")])
@pytest.mark.parametrize("opset", [11, 13, 19])
def test_float_onnx_scales_vs_onnxruntime(tmp_path, scales, mode, ctm, nearest_mode, opset):
    """scales (out = floor(in · scale), the scale in the transform), at the opsets whose defaults differ.
    align_corners divides by length_resized - 1 with length_resized = in · scale, fractional when
    in · scale is not an integer: the ONNX reference implementation (and the node test
    resize_downsample_scales_linear_align_corners) does so, onnxruntime uses the integer output
    size; tinyfuse follows the spec's reference, which is the oracle here."""
    x_shape = (1, 2, 7, 10)
    model = onnx_resize(x_shape, scales=scales, opset=opset, **_attrs(mode, ctm, nearest_mode))
    x = np.random.default_rng(7).standard_normal(x_shape).astype(np.float32)
    (got,), _ = compile_and_run(model, [x], tmp_path)
    if ctm == "align_corners":
        want = ReferenceEvaluator(model).run(None, {"X": x})[0]
    else:
        want = ort_run(model, {"X": x})[0]
    assert_close_to(got, want, 1e-5)


@pytest.mark.parametrize("mode,nearest_mode", [("nearest", "round_prefer_ceil"), ("nearest", "round_prefer_floor"),
                                               ("linear", "")])
def test_pytorch_half_pixel_one_output_row_from_a_fractional_length(tmp_path, mode, nearest_mode):
    """pytorch_half_pixel maps x to 0 only when length_resized <= 1; with scales, length_resized = in · scale
    (3 · 0.5 = 1.5: one output row, but the (x + 0.5) / s - 0.5 formula applies). The ONNX reference does
    so; onnxruntime tests the integer output size instead (graph fuzzer seed 2795: conv then this Resize)."""
    model = onnx_resize((1, 1, 3, 2), scales=(1, 1, 0.5, 3.0), opset=13,
                        **_attrs(mode, "pytorch_half_pixel", nearest_mode))
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 3, 2)
    (got,), _ = compile_and_run(model, [x], tmp_path)
    want = ReferenceEvaluator(model).run(None, {"X": x})[0]
    assert got.shape == want.shape == (1, 1, 1, 6)
    assert_close_to(got, want, 1e-6)


@pytest.mark.parametrize("nearest_mode", ["floor", "round_prefer_ceil"])
def test_tf_half_pixel_for_nn_opset11(tmp_path, nearest_mode):
    """Resize-11's tf_half_pixel_for_nn ((x + 0.5) / scale; gone from Resize-13's spec), upgraded to 13."""
    for x_shape, size in SHAPES[:2]:
        model = onnx_resize(x_shape, out_size=x_shape[:2] + size, opset=11, mode="nearest",
                            coordinate_transformation_mode="tf_half_pixel_for_nn", nearest_mode=nearest_mode)
        x = np.random.default_rng(3).standard_normal(x_shape).astype(np.float32)
        (got,), _ = compile_and_run(model, [x], tmp_path)
        np.testing.assert_array_equal(got, ort_run(model, {"X": x})[0])


def test_resize10_upgraded(tmp_path):
    """Resize-10 (scales only, asymmetric nearest) arrives upgraded to 13."""
    model = onnx_resize((1, 1, 3, 5), scales=(1, 1, 2.0, 1.5), opset=10, mode="nearest")
    x = np.arange(15, dtype=np.float32).reshape(1, 1, 3, 5)
    (got,), _ = compile_and_run(model, [x], tmp_path)
    np.testing.assert_array_equal(got, ort_run(model, {"X": x})[0])


# (x_shape, out H, W, coordinate_transformation_mode): source coordinates at exact ties that float32
# misses by an ulp, below on H (half_pixel 20 → 6: 14.499999, asymmetric 7 → 2: 3.4999998) and above
# on W (half_pixel 18 → 21: 14.500001, asymmetric 23 → 14, pytorch_half_pixel 14 → 19)
TIE_CASES = [((1, 2, 20, 18), (6, 21), "half_pixel"), ((1, 1, 7, 23), (2, 14), "asymmetric"),
             ((1, 3, 20, 14), (6, 19), "pytorch_half_pixel")]


@pytest.mark.parametrize("nearest_mode", ["round_prefer_ceil", "round_prefer_floor"])
@pytest.mark.parametrize("case", range(len(TIE_CASES)))
def test_nearest_ties_float_and_int8_qdq_vs_onnxruntime(tmp_path, case, nearest_mode):
    """round_prefer_ceil / round_prefer_floor at a tie the float32 coordinate misses: the compiled C
    (float32, and int8 QDQ: a byte copy) picks onnxruntime's pixel (tests/unit/test_resize_nearest_ties.py
    sweeps every size on the numpy reference)."""
    x_shape, size, ctm = TIE_CASES[case]
    attrs = dict(mode="nearest", coordinate_transformation_mode=ctm, nearest_mode=nearest_mode)
    x = np.arange(np.prod(x_shape), dtype=np.float32).reshape(x_shape)
    model = onnx_resize(x_shape, out_size=x_shape[:2] + size, opset=13, **attrs)
    (got,), _ = compile_and_run(model, [x], tmp_path)
    np.testing.assert_array_equal(got, ort_run(model, {"X": x})[0])
    xq = (np.arange(np.prod(x_shape)) % 251 - 125).astype(np.int8).reshape(x_shape)
    model = onnx_resize(x_shape, out_size=x_shape[:2] + size, opset=13, q=(0.05, 3), **attrs)
    (got,), result = compile_and_run(model, [xq], tmp_path)
    np.testing.assert_array_equal(got, ort_run(model, {"X": xq})[0])
    assert any("nn.resize2d" in k.ops and k.out.dtype == "int8" for k in result.kernels)


# ------------------------------------------------------------------------------- int8 .tflite vs TFLM
TFLITE_SHAPES = [((1, 5, 7, 3), (9, 13)), ((2, 9, 13, 5), (4, 5)), ((1, 6, 9, 4), (9, 6)), ((1, 1, 4, 3), (3, 8))]
OPTIONS = [(False, False), (True, False), (False, True)]


@pytest.mark.parametrize("shape_i", range(len(TFLITE_SHAPES)))
@pytest.mark.parametrize("align,half", OPTIONS)
@pytest.mark.parametrize("kind", ["bilinear", "nearest"])
def test_int8_tflite_equals_tflm(tmp_path, kind, align, half, shape_i):
    x_shape, size = TFLITE_SHAPES[shape_i]
    rng = np.random.default_rng(100 + shape_i)
    q = (float(np.float32(rng.uniform(0.01, 0.1))), int(rng.integers(-100, 101)))
    model = tflite_resize(kind, x_shape, size, align, half, q=q)
    for x in (rng.integers(-128, 128, x_shape).astype(np.int8), np.full(x_shape, -128, np.int8)):
        want = run_tflm(model, x)
        (got,), result = compile_and_run(model, [x], tmp_path)
        np.testing.assert_array_equal(got, want, err_msg=f"{kind} align={align} half={half} {x_shape}->{size} q={q}")
    assert any("nn.resize2d" in k.ops for k in result.kernels)


def test_int8_tflite_rounding_ties(tmp_path):
    """Exact ±0.5 results (weights 1/4, 3/4 on a 2x upsample): TFLM rounds them away from zero."""
    x_shape = (1, 2, 2, 4)
    x = np.array([-3, -1, 1, 3, -2, 2, -127, 127, 5, -5, 0, 1, -1, 0, 7, -7], np.int8).reshape(x_shape)
    model = tflite_resize("bilinear", x_shape, (4, 4), False, True, q=(0.05, 0))
    (got,), _ = compile_and_run(model, [x], tmp_path)
    np.testing.assert_array_equal(got, run_tflm(model, x))


@pytest.mark.parametrize("kind", ["bilinear", "nearest"])
def test_int8_tflite_other_output_scale(tmp_path, kind):
    """An output quantized differently from the input: TFLM still resizes the bytes unscaled."""
    x_shape = (1, 5, 7, 3)
    x = np.random.default_rng(9).integers(-128, 128, x_shape).astype(np.int8)
    model = tflite_resize(kind, x_shape, (8, 4), False, True, q=(0.05, 3), out_q=(0.11, -7))
    (got,), _ = compile_and_run(model, [x], tmp_path)
    np.testing.assert_array_equal(got, run_tflm(model, x))


def test_int8_tflite_single_rounding(tmp_path):
    """--rounding single: (acc + 2^19) >> 20 (TFLITE_SINGLE_ROUNDING) differs from TFLM's default
    rounding only on negative ties (-k.5 goes up instead of away from zero): by 1 LSB, upwards."""
    x_shape = (1, 2, 2, 4)
    x = np.array([-3, -1, 1, 3, -2, 2, -127, 127, 5, -5, 0, 1, -1, 0, 7, -7], np.int8).reshape(x_shape)
    model = tflite_resize("bilinear", x_shape, (4, 4), False, True, q=(0.05, 0))
    (got,), _ = compile_and_run(model, [x], tmp_path, rounding="single")
    diff = got.astype(int) - run_tflm(model, x).astype(int)
    assert set(np.unique(diff)) == {0, 1} and np.all(got[diff == 1] <= 0)


# ------------------------------------------------------------------------------- ONNX QDQ int8 vs ORT
@pytest.mark.parametrize("mode,ctm,nearest_mode", [("nearest", "half_pixel", "round_prefer_floor"),
                                                   ("nearest", "asymmetric", "floor"),
                                                   ("linear", "half_pixel", ""), ("linear", "align_corners", ""),
                                                   ("linear", "asymmetric", "")])
@pytest.mark.parametrize("out_q", [None, (0.07, -5)])
def test_int8_qdq_vs_onnxruntime(tmp_path, mode, ctm, nearest_mode, out_q):
    x_shape, q = (1, 3, 5, 7), (0.05, 3)
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, x_shape).astype(np.int8)
    for size in ((9, 13), (3, 4)):
        model = onnx_resize(x_shape, out_size=(1, 3) + size, q=q, out_q=out_q, **_attrs(mode, ctm, nearest_mode))
        (got,), result = compile_and_run(model, [x], tmp_path)
        want = ort_run(model, {"X": x})[0]
        diff = np.abs(got.astype(int) - want.astype(int)).max()
        assert diff <= (0 if mode == "nearest" and out_q is None else 1), f"{size}: max diff {diff} LSB"
        resized = [k for k in result.kernels if "nn.resize2d" in k.ops]
        assert resized and all(k.out.dtype == "int8" for k in resized)


# ------------------------------------------------------------------------------- float .tflite vs TFLM
@pytest.mark.parametrize("x_shape,size", [((1, 16, 16, 128), (32, 32)), ((1, 32, 32, 24), (64, 64)),
                                          ((1, 64, 64, 16), (128, 128))])
def test_float_tflite_selfie_shapes_vs_tflm(tmp_path, x_shape, size):
    """selfie_segmentation.tflite's three RESIZE_BILINEAR ops (half_pixel_centers), as one-op models."""
    model = tflite_resize("bilinear", x_shape, size, False, True)
    x = np.random.default_rng(1).standard_normal(x_shape).astype(np.float32)
    (got,), _ = compile_and_run(model, [x], tmp_path)
    assert_close_to(got, run_tflm(model, x, arena_size=8 << 20), 1e-5)


@pytest.mark.parametrize("kind,align,half", [("bilinear", True, False), ("nearest", False, True),
                                             ("nearest", True, False), ("nearest", False, False)])
def test_float_tflite_vs_tflm(tmp_path, kind, align, half):
    model = tflite_resize(kind, (1, 5, 7, 3), (9, 4), align, half)
    x = np.random.default_rng(2).standard_normal((1, 5, 7, 3)).astype(np.float32)
    (got,), _ = compile_and_run(model, [x], tmp_path)
    assert_close_to(got, run_tflm(model, x), 1e-5)


# ------------------------------------------------------------------------------- refused forms
@pytest.mark.parametrize("attrs,match", [
    (dict(mode="bicubic"), "mode 'bicubic' is not valid"),
    (dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize"), "tf_crop_and_resize' needs the roi"),
    (dict(mode="nearest", antialias=1), "antialias=1 applies to linear and cubic only"),
])
def test_refused_onnx_forms(attrs, match):
    model = onnx_resize((1, 1, 4, 4), out_size=(1, 1, 2, 2), **attrs)
    with pytest.raises(TinyfuseError, match=match) as e:
        compile_model(model)
    assert "\n" not in str(e.value) and "Resize" in str(e.value)


def test_refused_channel_resize():
    model = onnx_resize((1, 2, 4, 4), out_size=(1, 4, 4, 4), mode="nearest")
    with pytest.raises(TinyfuseError, match="H and W only"):
        compile_model(model)


def test_refused_tflite_align_and_half():
    with pytest.raises(TinyfuseError, match="align_corners and half_pixel_centers"):
        compile_model(tflite_resize("bilinear", (1, 4, 4, 2), (8, 8), True, True))


# ------------------------------------------------------------------------------- in a network
def _decoder(mode: str):
    """conv → Resize ×2 → relu → conv (a U-Net decoder step), float."""
    from onnx import helper
    from tests.builders import model_of, rand
    nodes = [helper.make_node("Conv", ["X", "W1"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Resize", ["a", "", "", "sizes"], ["b"], mode=mode),
             helper.make_node("Relu", ["b"], ["c"]),
             helper.make_node("Conv", ["c", "W2"], ["Y"], pads=[1, 1, 1, 1])]
    inits = {"W1": rand(6, 3, 3, 3, seed=1) * 0.3, "W2": rand(4, 6, 3, 3, seed=2) * 0.3,
             "sizes": np.array([1, 6, 10, 14], np.int64)}
    return model_of(nodes, {"X": rand(1, 3, 5, 7)}, ["Y"], opset=13, inits=inits)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_decoder_float_nhwc_chain(tmp_path, mode):
    """Between the convs the resize runs in NHWC with no layout transposes (convert_layout rule)."""
    model = _decoder(mode)
    x = np.random.default_rng(4).standard_normal((1, 3, 5, 7)).astype(np.float32)
    (got,), result = compile_and_run(model, [x], tmp_path)
    assert_close_to(got, ort_run(model, {"X": x})[0], 1e-4)
    resize = [k for k in result.kernels if "nn.resize2d" in k.ops]
    assert len(resize) == 1 and "nn.relu" in resize[0].ops          # relu fused as the epilogue
    assert sum("transpose" in k.ops for k in result.kernels) <= 2    # only at the model's input/output


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_decoder_int8_qdq_vs_onnxruntime(tmp_path, mode):
    """onnxruntime's static QDQ quantization of the decoder: every kernel int8, within 2 LSB of ORT."""
    from tests.builders import quantize_qdq
    model = quantize_qdq(_decoder(mode), tmp_path)
    x = np.random.default_rng(4).standard_normal((1, 3, 5, 7)).astype(np.float32)
    (got,), result = compile_and_run(model, [x], tmp_path)
    want = ort_run(model, {"X": x})[0]
    resized = [k for k in result.kernels if "nn.resize2d" in k.ops]
    assert resized and all(k.out.dtype == "int8" for k in resized)
    dq = next(n for n in model.graph.node if n.op_type == "DequantizeLinear" and n.output[0] == "Y")
    step = float(next(numpy_helper.to_array(t) for t in model.graph.initializer if t.name == dq.input[1]))
    assert float(np.max(np.abs(got - want))) <= 2 * step + 1e-6
