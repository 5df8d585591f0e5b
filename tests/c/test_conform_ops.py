"""One-op tests vs onnxruntime for the forms the ONNX node tests (tests/conformance) cover thinly:
3-D and dilated pooling (1-D, 2-D, 3-D; ceil_mode, pads, count_include_pad); Resize cubic
(cubic_coeff_a, exclude_outside, every coordinate transform), antialias (linear, cubic; down and mixed)
and tf_crop_and_resize (roi, extrapolation_value; linear, cubic, nearest); Pad edge / reflect / wrap
(pads wider than the input, the axes input); Conv and ConvTranspose 3-D (strides, dilations, pads,
groups, output_padding, output_shape); MaxPool's Indices output (storage_order 0 and 1, pads,
dilations, ceil_mode); per-axis QuantizeLinear / DequantizeLinear of activations (int8, uint8); in an
int8 QDQ graph, Pad modes copy int8 bytes and Resize cubic stays float."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.builders import rand
from tests.conftest import assert_close_to, check, compile_and_run, ort_run

N = helper.make_node

POOL_CASES = {  # id: (op, input shape, attributes)
    "max_2d_dil2_s2_p1": ("MaxPool", (1, 2, 9, 10), dict(kernel_shape=[3, 2], strides=[2, 1], dilations=[2, 3],
                                                         pads=[1, 0, 2, 1])),
    "max_2d_dil_ceil": ("MaxPool", (1, 2, 10, 9), dict(kernel_shape=[2, 3], strides=[3, 2], dilations=[3, 2],
                                                       pads=[1, 1, 0, 0], ceil_mode=1)),
    "avg_2d_dil_excl": ("AveragePool", (1, 3, 8, 9), dict(kernel_shape=[3, 3], dilations=[2, 2], pads=[2, 1, 1, 2])),
    "avg_2d_dil_incl_ceil": ("AveragePool", (1, 2, 9, 8), dict(kernel_shape=[2, 2], strides=[2, 2], dilations=[2, 3],
                                                               pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)),
    "max_1d_dil": ("MaxPool", (2, 3, 12), dict(kernel_shape=[3], strides=[2], dilations=[2], pads=[1, 2])),
    "max_3d": ("MaxPool", (1, 2, 5, 6, 7), dict(kernel_shape=[2, 3, 2], strides=[2, 1, 2], pads=[1, 1, 0, 0, 1, 1])),
    "max_3d_dil_ceil": ("MaxPool", (1, 2, 7, 6, 8), dict(kernel_shape=[2, 2, 3], strides=[2, 2, 2],
                                                         dilations=[2, 1, 2], ceil_mode=1)),
    "avg_3d_excl": ("AveragePool", (2, 2, 6, 5, 7), dict(kernel_shape=[3, 2, 3], strides=[2, 1, 2],
                                                         pads=[1, 0, 1, 1, 1, 1])),
    "avg_3d_incl_ceil": ("AveragePool", (1, 3, 7, 7, 6), dict(kernel_shape=[3, 3, 2], strides=[2, 2, 2],
                                                              pads=[1, 1, 0, 0, 1, 1], ceil_mode=1,
                                                              count_include_pad=1)),
    "avg_3d_same_upper": ("AveragePool", (1, 2, 5, 6, 7), dict(kernel_shape=[2, 3, 3], strides=[2, 2, 1],
                                                               auto_pad="SAME_UPPER")),
}


@pytest.mark.parametrize("case", POOL_CASES, ids=list(POOL_CASES))
def test_pool_dilated_and_3d(tmp_path, case):
    op, shape, attrs = POOL_CASES[case]
    check(tmp_path, [N(op, ["X"], ["Y"], **attrs)], {"X": rand(*shape)}, ["Y"], opset=19)


# ----------------------------------------------------------------------------------------- Resize (multi-tap)

RESIZE_CASES = {  # id: (input shape, attributes, scales or None, sizes or None, roi or None)
    "cubic_half_pixel_up": ((1, 2, 5, 7), dict(mode="cubic"), [1, 1, 1.7, 2.3], None, None),
    "cubic_down_sizes_a05_excl": ((1, 3, 9, 13), dict(mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1),
                                  None, [1, 3, 4, 6], None),
    "cubic_align_corners": ((2, 1, 6, 5), dict(mode="cubic", coordinate_transformation_mode="align_corners"),
                            None, [2, 1, 11, 3], None),
    "cubic_pytorch_half_pixel": ((1, 2, 7, 4), dict(mode="cubic", coordinate_transformation_mode="pytorch_half_pixel"),
                                 None, [1, 2, 3, 9], None),
    "cubic_asymmetric": ((1, 1, 4, 6), dict(mode="cubic", coordinate_transformation_mode="asymmetric"),
                         [1, 1, 2.5, 0.5], None, None),
    "linear_antialias_down": ((2, 2, 12, 15), dict(mode="linear", antialias=1), None, [2, 2, 5, 4], None),
    "linear_antialias_mixed": ((1, 2, 9, 6), dict(mode="linear", antialias=1), None, [1, 2, 4, 10], None),
    "cubic_antialias_down": ((1, 2, 11, 10), dict(mode="cubic", antialias=1), [1, 1, 0.45, 0.6], None, None),
    "crop_linear_extrapolate": ((1, 2, 6, 7), dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                                                   extrapolation_value=-3.0),
                                None, [1, 2, 5, 4], [0, 0, -0.2, 0.3, 1, 1, 0.7, 1.4]),
    "crop_cubic": ((1, 1, 8, 8), dict(mode="cubic", coordinate_transformation_mode="tf_crop_and_resize"),
                   None, [1, 1, 5, 6], [0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7]),
    "crop_nearest": ((1, 2, 7, 6), dict(mode="nearest", coordinate_transformation_mode="tf_crop_and_resize",
                                        extrapolation_value=5.0),
                     None, [1, 2, 4, 5], [0, 0, 0.2, -0.1, 1, 1, 0.8, 0.9]),
}


@pytest.mark.parametrize("case", RESIZE_CASES, ids=list(RESIZE_CASES))
def test_resize_multi_tap(tmp_path, case):
    """cubic, antialias and tf_crop_and_resize vs onnxruntime (float32)."""
    shape, attrs, scales, sizes, roi = RESIZE_CASES[case]
    inits = {"roi": np.array(roi if roi is not None else [], np.float32)}
    if scales is not None:
        inits["scales"] = np.array(scales, np.float32)
    else:
        inits["sizes"] = np.array(sizes, np.int64)
    ins = ["X", "roi", "scales" if scales is not None else "", "sizes" if sizes is not None else ""]
    check(tmp_path, [N("Resize", ins, ["Y"], **attrs)], {"X": rand(*shape)}, ["Y"], opset=19, inits=inits)


# ----------------------------------------------------------------------------------------- Pad modes

PAD_CASES = {  # id: (input shape, mode, pads, axes or None)
    "edge_4d": ((1, 3, 4, 5), "edge", [0, 1, 2, 3, 0, 0, 1, 2], None),
    "edge_wider_than_input": ((1, 2, 2, 3), "edge", [0, 0, 5, 4, 0, 0, 3, 6], None),
    "reflect_4d": ((2, 2, 5, 6), "reflect", [0, 0, 2, 3, 1, 0, 4, 5], None),
    "wrap_4d": ((1, 2, 4, 3), "wrap", [0, 0, 3, 2, 0, 0, 1, 5], None),
    "reflect_axes_3d": ((3, 5, 4), "reflect", [1, 3, 2, 2], [-1, 1]),
    "wrap_axes_2d": ((4, 5), "wrap", [2, 7], [1]),
}


@pytest.mark.parametrize("case", PAD_CASES, ids=list(PAD_CASES))
def test_pad_modes(tmp_path, case):
    """Pad edge / reflect / wrap (nn.border_pad) vs onnxruntime."""
    shape, mode, pads, axes = PAD_CASES[case]
    inits = {"pads": np.array(pads, np.int64)}
    ins = ["X", "pads"]
    if axes is not None:
        inits["axes"] = np.array(axes, np.int64)
        ins += ["", "axes"]
    check(tmp_path, [N("Pad", ins, ["Y"], mode=mode)], {"X": rand(*shape)}, ["Y"], opset=19, inits=inits)


# ----------------------------------------------------------------------------------------- Conv 3-D

CONV3D_CASES = {  # id: (input shape, weight shape, attributes, bias)
    "k3_pads": ((1, 2, 5, 6, 7), (3, 2, 3, 3, 3), dict(pads=[1, 1, 1, 1, 1, 1]), True),
    "strided_dilated": ((2, 3, 9, 8, 7), (4, 3, 2, 3, 2), dict(strides=[2, 1, 2], dilations=[3, 1, 2],
                                                               pads=[1, 0, 2, 0, 1, 1]), True),
    "groups_same_upper": ((1, 4, 6, 5, 5), (6, 2, 3, 1, 3), dict(group=2, auto_pad="SAME_UPPER", strides=[2, 2, 1]),
                          False),
    "depthwise_k1": ((1, 3, 4, 4, 4), (3, 1, 1, 2, 2), dict(group=3), True),
}


@pytest.mark.parametrize("case", CONV3D_CASES, ids=list(CONV3D_CASES))
def test_conv3d(tmp_path, case):
    """Conv on 5-D inputs (frontend/onnx_ops_conv3d.py: depth taps as conv2d channels) vs onnxruntime."""
    xs, ws, attrs, bias = CONV3D_CASES[case]
    inits = {"W": rand(*ws, seed=1)}
    ins = ["X", "W"]
    if bias:
        inits["B"] = rand(ws[0], seed=2)
        ins.append("B")
    check(tmp_path, [N("Conv", ins, ["Y"], **attrs)], {"X": rand(*xs)}, ["Y"], inits=inits)


CONVT3D_CASES = {  # id: (input shape, weight shape [C, M/G, kd, kh, kw], attributes)
    "k3_s2_pads_outpad": ((1, 2, 3, 4, 3), (2, 3, 3, 3, 2), dict(strides=[2, 2, 1], pads=[1, 0, 1, 1, 1, 0],
                                                                 output_padding=[1, 1, 0])),
    "dilated_groups": ((1, 4, 3, 3, 4), (4, 1, 2, 2, 3), dict(group=2, dilations=[2, 1, 2], strides=[1, 2, 1])),
    "output_shape": ((2, 1, 2, 3, 3), (1, 2, 2, 3, 3), dict(strides=[3, 2, 2], output_shape=[6, 6, 7])),
    "same_upper": ((1, 2, 3, 3, 2), (2, 2, 3, 2, 2), dict(strides=[2, 2, 2], auto_pad="SAME_UPPER")),
}


@pytest.mark.parametrize("case", CONVT3D_CASES, ids=list(CONVT3D_CASES))
def test_conv_transpose3d(tmp_path, case):
    """ConvTranspose on 5-D inputs (depth taps as nn.conv2d_transpose channels) vs onnxruntime."""
    xs, ws, attrs = CONVT3D_CASES[case]
    inits = {"W": rand(*ws, seed=1), "B": rand(ws[1] * attrs.get("group", 1), seed=2)}
    check(tmp_path, [N("ConvTranspose", ["X", "W", "B"], ["Y"], **attrs)], {"X": rand(*xs)}, ["Y"], inits=inits)


# ----------------------------------------------------------------------------------------- MaxPool Indices

INDICES_CASES = {  # id: (input shape, attributes)
    "pads_row_major": ((2, 3, 6, 7), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),
    "strides_column_major": ((1, 2, 7, 6), dict(kernel_shape=[2, 3], strides=[2, 2], storage_order=1)),
    "dilated_ceil": ((1, 2, 9, 8), dict(kernel_shape=[2, 2], strides=[2, 3], dilations=[2, 2], ceil_mode=1)),
}


@pytest.mark.parametrize("case", INDICES_CASES, ids=list(INDICES_CASES))
def test_maxpool_indices(tmp_path, case):
    """MaxPool's Indices output (nn.max_pool2d_indices, int64, exact) and its values vs onnxruntime."""
    shape, attrs = INDICES_CASES[case]
    x = rand(*shape)
    graph = helper.make_graph([N("MaxPool", ["X"], ["Y", "I"], **attrs)], "t",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("I", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    (y, i), _ = compile_and_run(model, [x], tmp_path)
    ry, ri = ort_run(model, {"X": x})
    assert i.dtype == np.int64 and i.shape == ri.shape
    np.testing.assert_array_equal(i, ri)
    assert_close_to(y, ry)


# ----------------------------------------------------------------------------------------- per-axis Q / DQ

QDQ_AXIS_CASES = {  # id: (input shape, axis, zero points dtype)
    "axis1_uint8": ((1, 3, 4, 2), 1, np.uint8),
    "axis_last_int8": ((2, 3, 5), -1, np.int8),
    "axis0_int8": ((4, 6), 0, np.int8),
}


@pytest.mark.parametrize("case", QDQ_AXIS_CASES, ids=list(QDQ_AXIS_CASES))
def test_quantize_dequantize_per_axis(tmp_path, case):
    """Per-axis QuantizeLinear of a float activation and DequantizeLinear of the quantized model input
    (frontend/onnx_quant_axis.py) vs onnxruntime: the quantized values exactly, the floats closely."""
    shape, axis, zdt = QDQ_AXIS_CASES[case]
    n = shape[axis]
    rng = np.random.default_rng(3)
    info = np.iinfo(zdt)
    scale = (rng.uniform(0.01, 0.2, n)).astype(np.float32)
    zp = rng.integers(info.min // 2, info.max // 2 + 1, n).astype(zdt)
    qtype = TensorProto.UINT8 if zdt == np.uint8 else TensorProto.INT8
    nodes = [N("QuantizeLinear", ["X", "s", "z"], ["Q"], axis=axis), N("DequantizeLinear", ["Qin", "s", "z"], ["D"],
                                                                      axis=axis)]
    graph = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape),
                                           helper.make_tensor_value_info("Qin", qtype, shape)],
                              [helper.make_tensor_value_info("Q", qtype, None),
                               helper.make_tensor_value_info("D", TensorProto.FLOAT, None)],
                              initializer=[numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zp, "z")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = rand(*shape) * 10
    qin = rng.integers(info.min, info.max + 1, shape).astype(zdt)
    (q, d), _ = compile_and_run(model, [x, qin], tmp_path)
    rq, rd = ort_run(model, {"X": x, "Qin": qin})
    assert q.dtype == zdt
    np.testing.assert_array_equal(q, rq)
    assert_close_to(d, rd)


# ----------------------------------------------------------------------------------------- in int8 QDQ graphs

@pytest.mark.parametrize("mode", ["edge", "reflect", "wrap"])
def test_int8_qdq_border_pad_and_cubic_resize(tmp_path, mode):
    """DQ → Pad(mode) → Q copies int8 bytes (nn.border_pad moves data: exact), and DQ → Resize(cubic) →
    Q keeps the resize in float between the int8 tensors; both vs onnxruntime (int8 exactly / 1 LSB)."""
    i8 = TensorProto.INT8
    nodes = [N("DequantizeLinear", ["X", "s", "z"], ["xf"]),
             N("Pad", ["xf", "pads"], ["pf"], mode=mode), N("QuantizeLinear", ["pf", "s", "z"], ["P"]),
             N("Resize", ["xf", "", "scales"], ["rf"], mode="cubic"), N("QuantizeLinear", ["rf", "s", "z"], ["R"])]
    inits = [numpy_helper.from_array(np.array(0.05, np.float32), "s"), numpy_helper.from_array(np.array(3, np.int8), "z"),
             numpy_helper.from_array(np.array([0, 0, 2, 1, 0, 0, 1, 3], np.int64), "pads"),
             numpy_helper.from_array(np.array([1, 1, 1.5, 2], np.float32), "scales")]
    shape = (1, 3, 5, 6)
    graph = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("X", i8, shape)],
                              [helper.make_tensor_value_info("P", i8, None), helper.make_tensor_value_info("R", i8, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    x = np.random.default_rng(5).integers(-128, 128, shape).astype(np.int8)
    (p, r), result = compile_and_run(model, [x], tmp_path)
    rp, rr = ort_run(model, {"X": x})
    np.testing.assert_array_equal(p, rp)
    assert np.abs(r.astype(np.int32) - rr.astype(np.int32)).max() <= 1
    assert any("nn.border_pad" in k.ops for k in result.kernels)
