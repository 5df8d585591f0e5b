"""int8 ONNX models built for the tests: QDQ conv chains with onnxruntime-probed scales (poly fusion),
and float graphs quantized by onnxruntime's static QDQ quantizer."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.builders import qdq as qb
from tests.builders.float_models import model_of, rand


def qdq_chain(x_shape, layers, seed=0):
    """int8 NHWC input -> chain of QDQ convs (3x3 / 1x1 / depthwise, relu) and residual adds -> int8
    NHWC output. ``layers``: dicts with cout, k, s, dw (bool), relu, src (index of the input layer,
    -1 = model input, default previous) or add=(i, j) for a residual add of two layers' outputs."""
    rng = np.random.default_rng(seed)

    def build(scales):
        nodes, inits, outs = [], [], []

        def const(name, arr):
            inits.append(numpy_helper.from_array(np.asarray(arr), name))
            return name

        def q_dq(x, i, s):
            q = f"q{i}"
            nodes.append(helper.make_node("QuantizeLinear", [x, const(f"s{i}", np.float32(s)),
                                                             const(f"z{i}", np.int8(i % 7 - 3))], [q]))
            nodes.append(helper.make_node("DequantizeLinear", [q, f"s{i}", f"z{i}"], [f"d{i}"]))
            return q, f"d{i}"

        nodes.append(helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 3, 1, 2]))
        nodes.append(helper.make_node("DequantizeLinear", ["xt", const("sx", np.float32(0.05)),
                                                           const("zx", np.int8(-5))], ["xd"]))
        vals, chans = ["xd"], [x_shape[3]]
        for i, L in enumerate(layers):
            if "add" in L:
                a, b = (vals[j + 1] for j in L["add"])
                nodes.append(helper.make_node("Add", [a, b], [f"f{i}"]))
                c = chans[L["add"][0] + 1]
            else:
                src = vals[L.get("src", i - 1) + 1]
                cin = chans[L.get("src", i - 1) + 1]
                k, s, cout = L.get("k", 3), L.get("s", 1), L["cout"]
                group = cin if L.get("dw") else 1
                w = rng.integers(-127, 128, (cout, cin // group, k, k)).astype(np.int8)
                ws = (np.full(cout, 0.5, np.float32) / np.sqrt(k * k * cin // group) / 64).astype(np.float32)
                nodes.append(helper.make_node("DequantizeLinear", [const(f"w{i}", w), const(f"ws{i}", ws),
                                                                   const(f"wz{i}", np.zeros(cout, np.int8))],
                                              [f"wd{i}"], axis=0))
                bias = rng.integers(-500, 500, cout).astype(np.int32)
                bs = (np.float32(0.05) * ws).astype(np.float32)
                nodes.append(helper.make_node("DequantizeLinear", [const(f"b{i}", bias), const(f"bs{i}", bs),
                                                                   const(f"bz{i}", np.zeros(cout, np.int32))],
                                              [f"bd{i}"], axis=0))
                p = L.get("pads", [k // 2] * 4 if k > 1 else [0] * 4)
                conv_out = f"f{i}c" if L.get("relu") else f"f{i}"
                nodes.append(helper.make_node("Conv", [src, f"wd{i}", f"bd{i}"], [conv_out], kernel_shape=[k, k],
                                              strides=[s, s], pads=p, group=group))
                if L.get("relu"):
                    nodes.append(helper.make_node("Relu", [conv_out], [f"f{i}"]))
                c = cout
            if scales is None:
                outs.append(helper.make_tensor_value_info(f"f{i}", TensorProto.FLOAT, None))
                vals.append(f"f{i}")
            else:
                q, d = q_dq(f"f{i}", i, scales[i])
                vals.append(d)
            chans.append(c)
        if scales is not None:
            nodes.append(helper.make_node("Transpose", [f"q{len(layers) - 1}"], ["y"], perm=[0, 2, 3, 1]))
            outs = [helper.make_tensor_value_info("y", TensorProto.INT8, None)]
        g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.INT8, list(x_shape))],
                              outs, inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        return m

    import onnxruntime as ort
    probe = build(None)
    x = rng.integers(-128, 128, x_shape).astype(np.int8)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    res = ort.InferenceSession(probe.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    model = onnx.shape_inference.infer_shapes(build([max(float(np.max(np.abs(r))), 1e-3) / 100 for r in res]))
    return model, x


MBV2_BLOCK = [dict(cout=24, k=1), dict(cout=24, dw=True, s=2, relu=True), dict(cout=8, k=1)]
RESNET_BLOCK = [dict(cout=16, relu=True), dict(cout=16, relu=True), dict(cout=16), dict(add=(0, 2))]
MBV2_RESIDUAL = [dict(cout=8, k=1), dict(cout=24, k=1, relu=True), dict(cout=24, dw=True, relu=True),
                 dict(cout=8, k=1), dict(add=(0, 3))]
DOWN_BLOCK = [dict(cout=16, relu=True), dict(cout=32, s=2, pads=[0, 0, 1, 1], relu=True), dict(cout=32),
              dict(cout=32, k=1, s=2, src=0), dict(add=(2, 3))]


def calibration_reader(model: onnx.ModelProto, n: int, seed: int):
    """An onnxruntime CalibrationDataReader over ``n`` seeded standard-normal feeds of ``model``'s inputs."""
    from onnxruntime.quantization import CalibrationDataReader
    rng = np.random.default_rng(seed)
    feeds = [{i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
              for i in model.graph.input} for _ in range(n)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(feeds)

        def get_next(self):
            return next(self.it, None)

    return Reader()


def quantize_qdq(model: onnx.ModelProto, tmp_path, n: int = 16, seed: int = 3) -> onnx.ModelProto:
    """onnxruntime.quantization.quantize_static, QDQ, int8 activations and per-channel int8 weights."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    src, dst = tmp_path / "float.onnx", tmp_path / "qdq.onnx"
    onnx.save(model, src)
    quantize_static(str(src), str(dst), calibration_reader(model, n, seed), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    return onnx.load(dst)


def sibling_int8_convs(cin: int, tmp_path) -> onnx.ModelProto:
    """X[1, cin, 6, 5] → two sibling 1x1 convs (6 channels; 4 channels + relu) → Concat → Y[1, 10, 6, 5],
    quantized to QDQ by quantize_qdq: one horizontal group once fused."""
    N = helper.make_node
    nodes = [N("Conv", ["X", "W1", "B1"], ["c1"]), N("Relu", ["c1"], ["r1"]), N("Conv", ["X", "W2", "B2"], ["c2"]),
             N("Concat", ["c2", "r1"], ["Y"], axis=1)]
    inits = {"W1": rand(4, cin, 1, 1, seed=1), "B1": rand(4, seed=2), "W2": rand(6, cin, 1, 1, seed=3),
             "B2": rand(6, seed=4)}
    return quantize_qdq(model_of(nodes, {"X": np.zeros((1, cin, 6, 5))}, {"Y": [1, 10, 6, 5]}, 13, inits),
                        tmp_path)


def real_conv_valid(x, zx, sx, w_ohwi, sw, bias, so, zo):
    """float64 real-arithmetic model of the QDQ conv (VALID, stride 1): dequantize, conv, quantize (ONNX
    QuantizeLinear: round half to even), saturate. NHWC in and out."""
    xf = (x.astype(np.float64) - zx) * sx
    wf = w_ohwi.astype(np.float64) * sw[:, None, None, None]
    kh, kw = w_ohwi.shape[1:3]
    oh, ow = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    y = np.zeros((1, oh, ow, w_ohwi.shape[0]))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nhwc,oc->nhwo", xf[:, i:i + oh, j:j + ow, :], wf[:, i, j, :])
    y += bias * sx * sw
    return np.clip(np.rint(y / so) + zo, -128, 127).astype(np.int8)


def multiplier_conv_case(case: str):
    """(model, int8 NHWC input, real-arithmetic expected output) of a 3x3 conv with 64 input channels:
    per tensor with multiplier 256 (the issue's case: −128 where the answer is 127), or per channel
    with multipliers 2^1 … 2^35."""
    rng = np.random.default_rng(16)
    cout = 1 if case == "per_tensor_256" else 35
    x = rng.integers(-128, 128, (1, 6, 6, 64)).astype(np.int8)
    w = rng.integers(-127, 128, (cout, 3, 3, 64)).astype(np.int8)
    sw = np.array([256.0] if cout == 1 else [2.0 ** (k + 1) for k in range(cout)], np.float32)
    w[0] = 127                                # channel 0, pixel (0, 0): acc = 576 · 124 · 127 > 2^31 / 256
    x[0, :3, :3, :] = 127
    bias = rng.integers(-50, 50, cout).astype(np.int32)
    model = qb.conv2d(x.shape, w, bias, (1.0, 3), sw, (1.0, -2), padding="VALID")
    return model, x, real_conv_valid(x, 3, 1.0, w, sw.astype(np.float64), bias, 1.0, -2)
