"""ConvTranspose / TRANSPOSE_CONV / MediaPipe Convolution2DTransposeBias: one-op models compiled → gcc →
run, against independent oracles:

- float ONNX ConvTranspose vs onnxruntime (and the numpy reference on the frontend's IR), within
  1e-4 x max|ref| (tests/conftest.check);
- int8 TRANSPOSE_CONV .tflite (tests/builders/tflite_convt.py) vs TFLite Micro, bit exact;
- Convolution2DTransposeBias (a custom op nothing here interprets) vs the same model rewritten as
  TRANSPOSE_CONV + ADD, run by LiteRT (ai-edge-litert), within 1e-4 x max|ref|; and once on the exact
  shapes of selfie_segmentation.tflite's instance.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.builders import rand
from tests.conftest import assert_close_to, check, compile_and_run, ort_run, tflm_run

N = helper.make_node

# id: (input shape, weight shape [C, M, KH, KW], attributes)
CONVT_CASES = {
    "k3_s1": ((1, 3, 5, 6), (3, 4, 3, 3), {}),
    "k3_s2_pads": ((1, 3, 5, 6), (3, 4, 3, 3), dict(strides=[2, 2], pads=[1, 0, 1, 1])),
    "k3_s2_output_padding": ((1, 3, 5, 6), (3, 4, 3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1],
                                                                output_padding=[1, 0])),
    "k2_s2": ((1, 4, 4, 5), (4, 3, 2, 2), dict(strides=[2, 2])),
    "k3_s3_odd": ((1, 2, 3, 5), (2, 3, 3, 3), dict(strides=[3, 3])),
    "k4_s3_op2": ((1, 2, 4, 3), (2, 3, 4, 4), dict(strides=[3, 3], output_padding=[2, 1], pads=[0, 1, 2, 0])),
    "dilation2": ((1, 2, 5, 4), (2, 3, 3, 3), dict(dilations=[2, 2], pads=[1, 2, 0, 1])),
    "dilation2_s2": ((1, 2, 4, 5), (2, 2, 3, 2), dict(dilations=[2, 3], strides=[2, 3], output_padding=[1, 2])),
    "groups2": ((1, 4, 5, 5), (4, 3, 3, 3), dict(group=2, strides=[2, 2], pads=[1, 1, 1, 1])),
    "depthwise_groups4": ((1, 4, 5, 6), (4, 1, 3, 3), dict(group=4, strides=[2, 1])),
    "same_upper_s2": ((1, 3, 5, 6), (3, 2, 3, 3), dict(auto_pad="SAME_UPPER", strides=[2, 2])),
    "same_lower_s2": ((1, 3, 5, 6), (3, 2, 3, 3), dict(auto_pad="SAME_LOWER", strides=[2, 2])),
    "same_upper_k4_s2": ((1, 2, 5, 5), (2, 2, 4, 4), dict(auto_pad="SAME_UPPER", strides=[2, 2])),
    "valid_s2": ((1, 2, 5, 6), (2, 2, 3, 3), dict(auto_pad="VALID", strides=[2, 2])),
    "output_shape": ((1, 2, 5, 5), (2, 3, 3, 3), dict(strides=[3, 2], output_shape=[16, 10])),
    "k3x5_s1x2_batch2": ((2, 3, 4, 5), (3, 2, 3, 5), dict(strides=[1, 2], pads=[0, 2, 1, 1])),
    "1d_s2_op1": ((1, 3, 7), (3, 2, 3), dict(strides=[2], pads=[1, 0], output_padding=[1])),
}
NO_BIAS = ["k3_s2_pads", "groups2", "1d_s2_op1"]


@pytest.mark.parametrize("case,bias", [(c, True) for c in CONVT_CASES] + [(c, False) for c in NO_BIAS],
                         ids=list(CONVT_CASES) + [c + "_nobias" for c in NO_BIAS])
def test_conv_transpose_vs_onnxruntime(tmp_path, case, bias):
    xs, ws, attrs = CONVT_CASES[case]
    group = attrs.get("group", 1)
    inits = {"W": rand(*ws, seed=1)} | ({"B": rand(ws[1] * group, seed=2)} if bias else {})
    result = check(tmp_path, [N("ConvTranspose", ["X", "W"] + (["B"] if bias else []), ["Y"], **attrs)],
                   {"X": rand(*xs)}, ["Y"], inits=inits)
    kernels = [k for k in result.kernels if "nn.conv2d_transpose" in k.ops]
    assert len(kernels) == 1
    if bias:       # the bias is the anchor's fused epilogue, not a kernel of its own
        assert "add" in kernels[0].ops


def test_conv_transpose_relu_fused(tmp_path):
    inits = {"W": rand(3, 4, 3, 3, seed=1), "B": rand(4, seed=2)}
    result = check(tmp_path, [N("ConvTranspose", ["X", "W", "B"], ["T"], strides=[2, 2], pads=[1, 1, 0, 0]),
                              N("Relu", ["T"], ["Y"])], {"X": rand(1, 3, 4, 4)}, ["Y"], inits=inits)
    assert [k.ops for k in result.kernels if "nn.conv2d_transpose" in k.ops] == \
        [["nn.conv2d_transpose", "add", "nn.relu"]]


# ----------------------------------------------------------------------------------------- int8 TRANSPOSE_CONV vs TFLM

# id: (x shape NHWC, O, kernel, stride, padding, output H/W or None (TFLite's usual size), bias, per-channel[,
#      fused activation])
INT8_CASES = {
    "k3_s1_same": ((1, 5, 6, 3), 4, (3, 3), (1, 1), "SAME", None, True, True),
    "k3_s2_same": ((1, 5, 6, 3), 4, (3, 3), (2, 2), "SAME", None, True, True),
    "k3_s2_same_nobias": ((1, 5, 6, 3), 4, (3, 3), (2, 2), "SAME", None, False, True),
    "k2_s2_valid": ((1, 4, 5, 4), 3, (2, 2), (2, 2), "VALID", None, True, True),
    "k3_s3_valid_odd": ((1, 3, 5, 2), 5, (3, 3), (3, 3), "VALID", None, True, True),
    "k4_s2_same_odd_out": ((1, 4, 5, 3), 2, (4, 4), (2, 2), "SAME", (7, 9), True, True),
    "k3x2_s2x1_valid_per_tensor": ((2, 4, 3, 3), 4, (3, 2), (2, 1), "VALID", None, False, False),
    "k5_s3_same": ((1, 3, 4, 6), 3, (5, 5), (3, 3), "SAME", None, True, True),
    "k3_s2_same_relu": ((1, 5, 6, 3), 4, (3, 3), (2, 2), "SAME", None, True, True, "RELU"),
    "k2_s2_valid_relu6": ((1, 4, 5, 4), 3, (2, 2), (2, 2), "VALID", None, True, False, "RELU6"),
}


def _int8_case(case):
    from tests.builders import tflite_convt
    xs, o, (kh, kw), stride, padding, out_hw, with_bias, per_channel, *act = INT8_CASES[case]
    act = act[0] if act else "NONE"
    rng = np.random.default_rng(sum(map(ord, case)))
    c = xs[3]
    w = rng.integers(-127, 128, (o, kh, kw, c), dtype=np.int8)
    w_scales = rng.uniform(0.002, 0.02, o) if per_channel else np.full(o, rng.uniform(0.002, 0.02))
    in_q = (float(np.float32(rng.uniform(0.01, 0.1))), int(rng.integers(-60, 61)))
    b = rng.integers(-3000, 3000, o, dtype=np.int32) if with_bias else None
    if out_hw is None:
        out_hw = tuple(n * s if padding == "SAME" else s * (n - 1) + k
                       for n, s, k in zip(xs[1:3], stride, (kh, kw)))
    taps = kh * kw * c / (stride[0] * stride[1])
    out_scale = 6 * 60 * 73 * np.sqrt(taps) * in_q[0] * float(np.median(w_scales)) / 255
    out_q = (float(np.float32(out_scale)), int(rng.integers(-20, 21)))
    x = np.clip(np.round(in_q[1] + rng.normal(0, 60, xs)), -128, 127).astype(np.int8)
    model = tflite_convt.transpose_conv_int8(xs, w, b, in_q, w_scales, out_q, out_hw, stride, padding, act)
    twin = tflite_convt.qdq_conv_transpose(xs, w, b, in_q, w_scales, out_q, out_hw, stride, padding, act)
    return model, twin, x


@pytest.mark.parametrize("case", list(INT8_CASES))
def test_int8_transpose_conv_bit_exact_with_tflm(tmp_path, case):
    """The .tflite and its ONNX QDQ twin both compile to TFLM's output bit for bit; onnxruntime's float
    QDQ reading of the twin is within 1 LSB (the twin means the same computation)."""
    model, twin, x = _int8_case(case)
    (want,) = tflm_run(model, [x])
    assert np.unique(want).size > 20, "the case should exercise the output range"
    assert np.abs(ort_run(twin, {"x": x})[0].astype(np.int32) - want).max() <= 1
    for name, m in (("tflite", model), ("onnx_qdq", twin)):
        (got,), result = compile_and_run(m, [x], tmp_path / name)
        assert [k for k in result.kernels if "qnn.conv2d_transpose" in k.ops], [k.ops for k in result.kernels]
        np.testing.assert_array_equal(got, want, err_msg=name)


# ----------------------------------------------------------------------------------------- Convolution2DTransposeBias

# id: (x shape NHWC, O, kernel, stride, padding)
MEDIAPIPE_CASES = {
    "selfie_segmentation_segment": ((1, 128, 128, 16), 1, (2, 2), (2, 2), "SAME"),
    "k3_s2_same_odd": ((1, 5, 6, 3), 4, (3, 3), (2, 2), "SAME"),
    "k4_s2_same_even": ((1, 4, 4, 2), 3, (4, 4), (2, 2), "SAME"),
    "k3_s2_valid": ((1, 5, 4, 3), 2, (3, 3), (2, 2), "VALID"),
    "k2_s3_same": ((1, 3, 4, 2), 2, (2, 2), (3, 3), "SAME"),
}


@pytest.mark.parametrize("case", list(MEDIAPIPE_CASES))
def test_convolution2d_transpose_bias_vs_litert_rewrite(tmp_path, case):
    from tests.builders import tflite_convt
    xs, o, k, stride, padding = MEDIAPIPE_CASES[case]
    w, b, x = rand(o, *k, xs[3], seed=1), rand(o, seed=2), rand(*xs)
    custom = tflite_convt.convt_bias_custom(xs, w, b, stride, padding)
    (want,) = tflite_convt.litert_run(tflite_convt.convt_bias_rewritten(xs, w, b, stride, padding), [x])
    (got,), result = compile_and_run(custom, [x], tmp_path)
    assert [k.ops for k in result.kernels if "nn.conv2d_transpose" in k.ops] == [["nn.conv2d_transpose", "add"]]
    assert_close_to(got, want)


@pytest.mark.parametrize("case", list(MEDIAPIPE_CASES))
def test_oracle_rewrite_of_convolution2d_transpose_bias(case):
    """harness/litert_custom.py (what `run` uses as the LiteRT oracle of MediaPipe models) computes what the
    hand-built TRANSPOSE_CONV + ADD twin computes (to float rounding), and does not touch its input."""
    from tests.builders import tflite_convt
    from tinyfuse.harness.litert_custom import rewrite_transpose_conv_bias
    xs, o, k, stride, padding = MEDIAPIPE_CASES[case]
    w, b, x = rand(o, *k, xs[3], seed=1), rand(o, seed=2), rand(*xs)
    custom = tflite_convt.convt_bias_custom(xs, w, b, stride, padding)
    before = bytes(custom)
    rewritten = rewrite_transpose_conv_bias(custom)
    assert custom == before and rewritten is not None
    (want,) = tflite_convt.litert_run(tflite_convt.convt_bias_rewritten(xs, w, b, stride, padding), [x])
    (got,) = tflite_convt.litert_run(rewritten, [x])     # the bias inside the kernel vs a separate ADD: rounding
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * float(np.abs(want).max()))


def test_oracle_rewrite_leaves_models_without_the_custom_op():
    from tests.builders import tflite_convt
    from tinyfuse.harness.litert_custom import rewrite_transpose_conv_bias
    w, b = rand(2, 3, 3, 2, seed=1), rand(2, seed=2)
    assert rewrite_transpose_conv_bias(tflite_convt.transpose_conv_float((1, 4, 4, 2), w, b, (8, 8), (2, 2))) is None


# ----------------------------------------------------------------------------------------- float TRANSPOSE_CONV vs LiteRT

# id: (x shape NHWC, O, kernel, stride, padding, output H/W, bias, fused activation)
FLOAT_TFLITE_CASES = {
    "k3_s2x3_same_relu": ((1, 5, 6, 3), 4, (3, 3), (2, 3), "SAME", (10, 18), True, "RELU"),
    "k2_s2_valid_nobias": ((1, 4, 4, 2), 3, (2, 2), (2, 2), "VALID", (8, 8), False, "NONE"),
    "k4_s2_same_odd_out_relu6": ((2, 4, 5, 3), 2, (4, 4), (2, 2), "SAME", (7, 9), True, "RELU6"),
}


@pytest.mark.parametrize("case", list(FLOAT_TFLITE_CASES))
def test_float_transpose_conv_vs_litert(tmp_path, case):
    from tests.builders import tflite_convt
    xs, o, k, stride, padding, out_hw, with_bias, act = FLOAT_TFLITE_CASES[case]
    w, b, x = rand(o, *k, xs[3], seed=1), (rand(o, seed=2) if with_bias else None), rand(*xs)
    model = tflite_convt.transpose_conv_float(xs, w, b, out_hw, stride, padding, act)
    (want,) = tflite_convt.litert_run(model, [x])
    (got,), result = compile_and_run(model, [x], tmp_path)
    assert len([kn for kn in result.kernels if "nn.conv2d_transpose" in kn.ops]) == 1
    assert_close_to(got, want)


def test_conv_transpose_between_convs_runs_in_nhwc(tmp_path):
    """Conv → ConvTranspose (+ bias, ReLU) → Conv: one NHWC chain, no layout transposes between kernels."""
    inits = {"W1": rand(4, 3, 3, 3, seed=1), "W2": rand(4, 2, 2, 2, seed=2), "B2": rand(2, seed=3),
             "W3": rand(3, 2, 3, 3, seed=4)}
    nodes = [N("Conv", ["X", "W1"], ["A"], pads=[1, 1, 1, 1], strides=[2, 2]),
             N("ConvTranspose", ["A", "W2", "B2"], ["T"], strides=[2, 2]), N("Relu", ["T"], ["R"]),
             N("Conv", ["R", "W3"], ["Y"], pads=[1, 1, 1, 1])]
    result = check(tmp_path, nodes, {"X": rand(1, 3, 8, 10)}, ["Y"], inits=inits)
    ops = [k.ops for k in result.kernels]
    # the model's output only: the first conv reads the NCHW input through the permutation (fold_input_transpose)
    assert [o for o in ops if "transpose" in o] == [ops[-1]] == [["transpose"]], ops


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_int8_transpose_conv_compiles_for_arm(target):
    """The portable kernel on the Arm targets (no SIMD variant declines it): C is generated."""
    from tinyfuse.driver import compile_model
    model, _twin, _x = _int8_case("k3_s2_same")
    result = compile_model(model, target=target)
    kernels = [k for k in result.kernels if "qnn.conv2d_transpose" in k.ops]
    assert len(kernels) == 1 and kernels[0].variant == "ref"
    assert any("qnn.conv2d_transpose" in text for text in result.files.values())


def test_selfie_segmentation_instance_with_its_weights(tmp_path):
    """selfie_segmentation.tflite's Convolution2DTransposeBias as stored (custom options, float16 weights
    and bias behind DEQUANTIZE, input shape) as a one-op model, vs its TRANSPOSE_CONV + ADD rewrite in LiteRT."""
    import struct

    from tests.builders import tflite_convt
    from tests.conftest import shared_or_skip
    from tinyfuse.frontend.tflite.reader import _operator, _parse, _tensor, convert_op, load_tflite
    from tinyfuse.frontend.tflite.registry import Graph
    from tinyfuse.ir import TensorType, Var, post_order
    data = load_tflite(shared_or_skip("models", "real", "selfie_segmentation.tflite"))
    m = _parse(data)
    sg = m.subgraphs[0]
    tensors = [_tensor(m, data, t, i) for i, t in enumerate(sg.tensors)]
    ops = [_operator(m, tensors, op, k) for k, op in enumerate(sg.operators)]
    (op,) = [o for o in ops if o.name == "CUSTOM 'Convolution2DTransposeBias'"]
    producer = {o.outputs[0].index: o for o in ops}
    x_t, w_t, b_t = op.inputs
    w, b = (producer[t.index].inputs[0].data.astype(np.float32) for t in (w_t, b_t))   # DEQUANTIZE of float16
    pad_code, sw, sh = struct.unpack("<iii", op.options[:12])
    padding = {1: "SAME", 2: "VALID"}[pad_code]
    assert (x_t.shape, w.shape, op.outputs[0].shape) == ((1, 128, 128, 16), (1, 2, 2, 16), (1, 256, 256, 1))
    g = Graph(tensors)                    # the converter on the stored operator itself
    g.env[x_t.index] = Var("x", TensorType(x_t.shape, "float32"))
    for o in (producer[w_t.index], producer[b_t.index], op):
        convert_op(g, o)
    (conv,) = [n for n in post_order(g.env[op.outputs[0].index]) if getattr(n, "op", None) == "nn.conv2d_transpose"]
    assert (conv.attrs["strides"], conv.attrs["padding"]) == ((sh, sw), (0, 0, 0, 0))
    x = rand(*x_t.shape)
    (want,) = tflite_convt.litert_run(tflite_convt.convt_bias_rewritten(x_t.shape, w, b, (sh, sw), padding), [x])
    (got,), _ = compile_and_run(tflite_convt.convt_bias_custom(x_t.shape, w, b, (sh, sw), padding), [x], tmp_path)
    assert got.shape == op.outputs[0].shape
    assert_close_to(got, want)


def test_conv_transpose_with_residual_add(tmp_path):
    """A skip tensor added in the epilogue (the residual_add in-place rule may put the output over it)."""
    inits = {"W": rand(3, 2, 3, 3, seed=1), "B": rand(2, seed=2)}
    nodes = [N("ConvTranspose", ["X", "W", "B"], ["T"], strides=[2, 2], pads=[1, 1, 0, 0]),
             N("Relu", ["S"], ["R"]), N("Add", ["T", "R"], ["Y"])]
    result = check(tmp_path, nodes, {"X": rand(1, 3, 4, 4), "S": rand(1, 2, 8, 8, seed=3)}, ["Y"], inits=inits)
    assert [k.ops for k in result.kernels if "nn.conv2d_transpose" in k.ops] == [["nn.conv2d_transpose", "add", "add"]]
