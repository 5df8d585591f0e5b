"""onnxruntime.quantization.quantize_static of float ONNX models with any activation / weight type
(QUInt8 activations: onnxruntime's older default) in QDQ or QOperator format, and a small conv net
to quantize."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from tests.builders.float_models import model_of, rand
from tests.builders.int8_models import calibration_reader


def quantize_ort(model: onnx.ModelProto, tmp_path, activation: str = "QUInt8", weight: str = "QInt8",
                 fmt: str = "QDQ", per_channel: bool = False, n: int = 16, seed: int = 3) -> onnx.ModelProto:
    """quant_pre_process (BatchNormalization folded into Conv, as the shared ``_qdq`` models) then
    quantize_static calibrated (MinMax) on ``n`` seeded standard-normal inputs; ``activation`` and
    ``weight`` name onnxruntime QuantType members, ``fmt`` a QuantFormat member (QDQ, QOperator)."""
    from onnxruntime.quantization.shape_inference import quant_pre_process
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    src, pre = tmp_path / "float.onnx", tmp_path / "pre.onnx"
    dst = tmp_path / f"{activation}_{weight}_{fmt}.onnx"
    onnx.save(model, src)
    quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
    src = pre
    quantize_static(str(src), str(dst), calibration_reader(model, n, seed),
                    quant_format=getattr(QuantFormat, fmt), per_channel=per_channel,
                    activation_type=getattr(QuantType, activation), weight_type=getattr(QuantType, weight))
    return onnx.load(dst)


def small_conv_net() -> onnx.ModelProto:
    """X[1, 3, 12, 12] → conv 3x3 (8) + relu → maxpool 2 → depthwise 3x3 + relu → conv 1x1 (8) → add
    (residual) → global average pool → flatten → gemm (5) → Y[1, 5]: float32, opset 13."""
    N = helper.make_node
    nodes = [N("Conv", ["X", "W1", "B1"], ["c1"], pads=[1, 1, 1, 1]), N("Relu", ["c1"], ["r1"]),
             N("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             N("Conv", ["p1", "W2", "B2"], ["c2"], pads=[1, 1, 1, 1], group=8), N("Relu", ["c2"], ["r2"]),
             N("Conv", ["r2", "W3", "B3"], ["c3"]), N("Add", ["c3", "p1"], ["a"]),
             N("GlobalAveragePool", ["a"], ["g"]), N("Flatten", ["g"], ["f"]),
             N("Gemm", ["f", "W4", "B4"], ["Y"], transB=1)]
    inits = {"W1": rand(8, 3, 3, 3, seed=1), "B1": rand(8, seed=2), "W2": rand(8, 1, 3, 3, seed=3),
             "B2": rand(8, seed=4), "W3": rand(8, 8, 1, 1, seed=5), "B3": rand(8, seed=6),
             "W4": rand(5, 8, seed=7), "B4": rand(5, seed=8)}
    return model_of(nodes, {"X": np.zeros((1, 3, 12, 12))}, {"Y": [1, 5]}, 13, inits)
