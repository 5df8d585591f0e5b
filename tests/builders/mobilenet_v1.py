"""A small MobileNetV1-style float ONNX model (seeded weights, NCHW) and onnxruntime's static QDQ
quantization of it with a chosen activation type (QUInt8: onnxruntime's "U8S8" on x86; QInt8)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.builders.int8_models import calibration_reader


def mobilenet_v1(hw: int = 32, widths=(16, 32, 32, 64), n_cls: int = 4, head: bool = True,
                 seed: int = 0, first_stride: int = 1) -> onnx.ModelProto:
    """x[1, 3, hw, hw] float → conv 3x3 (stride ``first_stride``) + relu → (depthwise 3x3 + relu, pointwise 1x1 + relu)
    per further width, stride 2 on every other depthwise → [global average pool → flatten → gemm
    → y[1, n_cls]] (``head``; else the last relu, 4-D NCHW, is the output). He-scaled normal weights."""
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def const(name, a):
        inits.append(numpy_helper.from_array(np.asarray(a, np.float32), name))
        return name

    def conv(x, name, cin, cout, k, s, group):
        w = rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / (k * k * cin // group))
        nodes.append(helper.make_node("Conv", [x, const(name + "_w", w), const(name + "_b", rng.normal(0, .1, cout))],
                                      [name + "_c"], kernel_shape=[k, k], strides=[s, s], pads=[k // 2] * 4,
                                      group=group, name=name))
        nodes.append(helper.make_node("Relu", [name + "_c"], [name], name=name + "_relu"))
        return name

    x, cin = conv("x", "conv0", 3, widths[0], 3, first_stride, 1), widths[0]
    for i, c in enumerate(widths[1:]):
        x = conv(x, f"dw{i}", cin, cin, 3, 2 if i % 2 == 0 else 1, cin)
        x, cin = conv(x, f"pw{i}", cin, c, 1, 1, 1), c
    out = x
    if head:
        nodes += [helper.make_node("GlobalAveragePool", [x], ["gap"]), helper.make_node("Flatten", ["gap"], ["flat"]),
                  helper.make_node("Gemm", ["flat", const("fc_w", rng.standard_normal((n_cls, cin)) * .3),
                                            const("fc_b", rng.normal(0, .1, n_cls))], ["y"], transB=1, name="fc")]
        out = "y"
    g = helper.make_graph(nodes, "mobilenet_v1", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, hw, hw])],
                          [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def quantize_static_qdq(model: onnx.ModelProto, tmp_path: Path, activation: str = "QUInt8", n: int = 8,
                        seed: int = 3, fmt: str = "QDQ") -> onnx.ModelProto:
    """onnxruntime.quantization.quantize_static in ``fmt`` format (QDQ or QOperator): ``activation``
    activations (QUInt8 or QInt8), per-channel symmetric int8 weights, MinMax calibration on ``n``
    standard-normal inputs."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    src, dst = tmp_path / "float.onnx", tmp_path / f"{fmt}_{activation}.onnx"
    onnx.save(model, src)
    quantize_static(str(src), str(dst), calibration_reader(model, n, seed),
                    quant_format=getattr(QuantFormat, fmt), per_channel=True,
                    activation_type=getattr(QuantType, activation), weight_type=QuantType.QInt8)
    return onnx.load(dst)
