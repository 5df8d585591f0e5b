"""Build example ONNX models for tinyfuse.

DS-CNN keyword-spotting network (float32, opset 13, NCHW), built with onnx.helper only:

    input  [B,1,49,10]   (49 MFCC frames x 10 coefficients)
    conv1  Conv 64x(10x4) stride 2, TF-SAME pads (4,1,5,1) + bias -> BN -> Relu   [B,64,25,5]
    4 x  { dwN  depthwise Conv 3x3 group=64 pads 1 -> BN -> Relu                  [B,64,25,5]
           pwN  pointwise Conv 1x1 64->64        -> BN -> Relu }                  [B,64,25,5]
    pool   AveragePool 25x5                                                       [B,64,1,1]
    Flatten -> Gemm (W [12,64], transB=1) -> Softmax(axis=1)        probs         [B,12]

Weights are drawn from numpy.random.default_rng(seed); they are seeded, not trained.

Usage: python examples/build_models.py OUTDIR   -> writes OUTDIR/dscnn_kws.onnx
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CHANNELS, CLASSES, BLOCKS = 64, 12, 4


def build_dscnn(path, seed=0, batch=1) -> str:
    rng = np.random.default_rng(seed)
    nodes, inits = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name))
        return name

    def conv_bn_relu(name, x, cin, kh, kw, group=1, strides=(1, 1), pads=(0, 0, 0, 0), bias=False):
        fan_in = (cin // group) * kh * kw
        w = const(f"{name}_W", rng.normal(0, np.sqrt(2.0 / fan_in), (CHANNELS, cin // group, kh, kw)))
        inputs = [x, w]
        if bias:
            inputs.append(const(f"{name}_B", rng.normal(0, 0.1, CHANNELS)))
        nodes.append(helper.make_node("Conv", inputs, [name], name=name, kernel_shape=[kh, kw],
                                      strides=list(strides), pads=list(pads), group=group))
        bn = f"{name}_bn"
        params = [const(f"{bn}_scale", rng.uniform(0.5, 1.5, CHANNELS)),
                  const(f"{bn}_bias", rng.normal(0, 0.1, CHANNELS)),
                  const(f"{bn}_mean", rng.normal(0, 0.1, CHANNELS)),
                  const(f"{bn}_var", rng.uniform(0.5, 1.5, CHANNELS))]
        nodes.append(helper.make_node("BatchNormalization", [name] + params, [bn], name=bn, epsilon=1e-3))
        nodes.append(helper.make_node("Relu", [bn], [f"{name}_relu"], name=f"{name}_relu"))
        return f"{name}_relu"

    # TF SAME for 49x10, kernel 10x4, stride 2: pad rows 9 -> (4, 5), cols 2 -> (1, 1).
    x = conv_bn_relu("conv1", "input", 1, 10, 4, strides=(2, 2), pads=(4, 1, 5, 1), bias=True)
    for i in range(1, BLOCKS + 1):
        x = conv_bn_relu(f"dw{i}", x, CHANNELS, 3, 3, group=CHANNELS, pads=(1, 1, 1, 1))
        x = conv_bn_relu(f"pw{i}", x, CHANNELS, 1, 1)
    nodes.append(helper.make_node("AveragePool", [x], ["pool"], name="pool", kernel_shape=[25, 5]))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flatten"], name="flatten", axis=1))
    fc_w = const("fc_W", rng.normal(0, np.sqrt(1.0 / CHANNELS), (CLASSES, CHANNELS)))
    fc_b = const("fc_B", rng.normal(0, 0.1, CLASSES))
    nodes.append(helper.make_node("Gemm", ["flatten", fc_w, fc_b], ["logits"], name="fc", transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1))

    graph = helper.make_graph(
        nodes, "dscnn_kws",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 1, 49, 10])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [batch, CLASSES])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="tinyfuse-examples",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # readable by older onnxruntime builds
    onnx.checker.check_model(model, full_check=True)
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    onnx.save(model, path)
    return str(path)


def calibration_data(n, seed=1, batch=1) -> list[dict]:
    """n seeded random inputs resembling normalized MFCC features (N(0, 1))."""
    rng = np.random.default_rng(seed)
    return [{"input": rng.standard_normal((batch, 1, 49, 10)).astype(np.float32)} for _ in range(n)]


def quantize_dscnn(float_path, path, n_calibration=32, seed=1) -> str:
    """int8 QDQ twin of the float model: onnxruntime.quantization.quantize_static, per-channel int8
    weights, int8 activations, MinMax calibration on ``n_calibration`` seeded inputs."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter(calibration_data(n_calibration, seed))

        def get_next(self):
            return next(self.data, None)

    from onnxruntime.quantization.shape_inference import quant_pre_process

    pre = path.replace(".onnx", "_pre.onnx")
    quant_pre_process(float_path, pre, skip_symbolic_shape=True)   # folds BatchNorm (static shapes)
    quantize_static(pre, path, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    os.remove(pre)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", help="directory to write dscnn_kws.onnx and dscnn_kws_int8.onnx into")
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    float_path = build_dscnn(os.path.join(args.outdir, "dscnn_kws.onnx"))
    print(float_path)
    print(quantize_dscnn(float_path, os.path.join(args.outdir, "dscnn_kws_int8.onnx")))


if __name__ == "__main__":
    main()
