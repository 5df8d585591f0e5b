"""int16x8 (16x8 quantization) .tflite models built with the flatbuffer builder of tflm_twin_models.Net,
for the tests that compare tinyfuse with TFLM on whole networks (tests/c/test_int16_models.py) and for
the instructions-per-MAC table (benchmarks/int16_ipm.py):

- ``keyword_svdf``: the architecture of TFLM's keyword benchmark model (tflite-micro
  tensorflow/lite/micro/models/keyword_scrambled.tflite, itself scrambled weights): int16 [1, 96] input
  requantized to int8, seven SVDF layers with an int16 (or int8) activation state interleaved with four
  FULLY_CONNECTED layers, FC → SOFTMAX int8 → int16 (1/65536, -32768) → QUANTIZE int16 → int32. Seeded
  random weights and scales of the original's orders of magnitude.
- ``kws_16x8``: the MLPerf Tiny DS-CNN keyword spotter (../shared/models/tflite/kws_ref_model_float32.tflite)
  quantized 16x8 from the float model's weights: weights int8 per output channel (symmetric, max |w| /
  127), biases int64 of scale s_in·s_w[c], activations int16 symmetric with the real ranges of the int8
  reference model's calibration (kws_ref_model.tflite: range / 32767 per tensor), SOFTMAX int16 → int16
  (1/32768, 0) as the TFLite converter writes it for 16x8.
"""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_twin_models import Net

I16 = "int16"


def _svdf(net: Net, x, x_q, feat: int, filters: int, memory: int, rng, state: str, out_q):
    """One SVDF (rank 1) x [1, feat] int8 → [1, filters] int8 with a variable state of ``state``."""
    wf_s = float(rng.uniform(0.005, 0.01))
    wt_s = float(rng.uniform(1e-5, 3e-5) if state == I16 else rng.uniform(0.002, 0.004))     # |w_time| <= 1
    state_q = (float(rng.uniform(4e-4, 5e-3)), 0) if state == I16 else (float(rng.uniform(0.1, 0.8)), int(rng.integers(-50, 50)))
    lim = 32767 if state == I16 else 127
    wf = net.const(rng.integers(-127, 128, (filters, feat)).astype(np.int8), (wf_s, 0))
    wt = net.const(rng.integers(-lim, lim + 1, (filters, memory)).astype(np.int16 if state == I16 else np.int8), (wt_s, 0))
    b = net.const(rng.integers(-20000, 20001, filters).astype(np.int32), (float(np.float32(state_q[0]) * np.float32(wt_s)), 0))
    st = net.act((1, filters * memory), state_q, "state", state)
    st.is_variable = True
    y = net.act((1, filters), out_q)
    net.op("SVDF", [x, wf, wt, b, st], y, "SVDFOptions", rank=1)
    return y


def _fc(net: Net, x, x_q, n: int, k: int, rng, out_q, dtype="int8", w_scale=(0.005, 0.009)):
    ws = float(rng.uniform(*w_scale))
    w = net.weights(rng.integers(-127, 128, (n, k)).astype(np.int8), ws, 0)
    b = net.bias(rng.integers(-300, 301, n).astype(np.int32), x_q[0], np.full(n, ws, np.float32))
    y = net.act((1, n), out_q, dtype=dtype)
    net.op("FULLY_CONNECTED", [x, w, b], y, "FullyConnectedOptions")
    return y


def keyword_svdf(seed: int = 0, state: str = I16) -> bytes:
    """The keyword benchmark architecture (module docstring) with seeded random weights; ``state`` int16
    (keyword_scrambled.tflite) or int8 (keyword_scrambled_8bit.tflite)."""
    rng = np.random.default_rng(seed)
    net = Net()
    x = net.input((1, 96), (0.000625, 0), I16)
    q = (float(rng.uniform(0.04, 0.08)), -128)
    h = net.act((1, 96), q)
    net.op("QUANTIZE", [x], h)
    feat = 96
    layers = [(64, 8, True)] * 4 + [(32, 32, False)] * 3
    for i, (filters, memory, fc) in enumerate(layers):
        out_q = (float(rng.uniform(0.06, 0.15)), -128)
        h, hq = _svdf(net, h, q, feat, filters, memory, rng, state, out_q), out_q
        q, feat = hq, filters
        if fc and i < 4:
            q2 = (float(rng.uniform(0.6, 1.2)), int(rng.integers(-13, 1)))
            h, q, feat = _fc(net, h, q, 16, feat, rng, q2), q2, 16
    q2 = (float(rng.uniform(0.02, 0.04)), int(rng.integers(-3, 4)))      # logits within ±5: a softmax not saturated
    logits = _fc(net, h, q, 2, feat, rng, q2, w_scale=(0.0003, 0.0006))
    prob = net.act((1, 2), (1 / 65536, -32768), dtype=I16)
    net.op("SOFTMAX", [logits], prob, "SoftmaxOptions", beta=1.0)
    out = net.act((1, 2), (float(np.float32(2 / 65535)), 0), dtype="int32")
    net.op("QUANTIZE", [prob], out)
    return net.build([out])


# ----------------------------------------------------------------------------- DS-CNN 16x8
def _tflite_graph(path):
    """(model, subgraph 0, [(opcode name, inputs, outputs, options table)]) of a .tflite file (tflite package)."""
    import tflite
    buf = open(path, "rb").read()
    m = tflite.Model.GetRootAsModel(buf, 0)
    sg = m.Subgraphs(0)
    names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
    ops = []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        code = m.OperatorCodes(op.OpcodeIndex())
        name = names[max(code.BuiltinCode(), code.DeprecatedBuiltinCode())]
        table = op.BuiltinOptions()
        opts = None
        if table is not None:
            cls = {"CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
                   "AVERAGE_POOL_2D": "Pool2DOptions", "FULLY_CONNECTED": "FullyConnectedOptions",
                   "SOFTMAX": "SoftmaxOptions", "RESHAPE": "ReshapeOptions"}[name]
            opts = getattr(tflite, cls)()
            opts.Init(table.Bytes, table.Pos)
        ops.append((name, [op.Inputs(j) for j in range(op.InputsLength())],
                    [op.Outputs(j) for j in range(op.OutputsLength())], opts))
    return m, sg, ops


def _real(m, sg, t: int) -> np.ndarray:
    """The float value of constant tensor ``t`` (int8 weights dequantized with their per-tensor scale)."""
    import tflite
    T = sg.Tensors(t)
    data = m.Buffers(T.Buffer()).DataAsNumpy()
    shape = tuple(T.ShapeAsNumpy())
    if T.Type() == tflite.TensorType.INT8:
        q = T.Quantization()
        return data.view(np.int8).reshape(shape).astype(np.float64) * q.ScaleAsNumpy().astype(np.float64).reshape(-1)[0]
    return data.view(np.float32).reshape(shape).astype(np.float64)


def _range16(sg, t: int) -> tuple[float, int]:
    """int16 (scale, 0) of the real range of int8 tensor ``t`` of the calibrated int8 model."""
    q = sg.Tensors(t).Quantization()
    s, z = float(q.ScaleAsNumpy()[0]), int(q.ZeroPointAsNumpy()[0])
    return float(np.float32(max(abs(s * (-128 - z)), abs(s * (127 - z))) / 32767)), 0


def _per_channel(w: np.ndarray, axis: int):
    """int8 weights symmetric per channel along ``axis``: (int8 array, float32 scales)."""
    amax = np.max(np.abs(np.moveaxis(w, axis, 0)).reshape(w.shape[axis], -1), axis=1)
    scales = np.maximum(amax, 1e-12).astype(np.float32) / np.float32(127)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scales.astype(np.float64).reshape(shape)), -127, 127).astype(np.int8)
    return q, scales


def kws_16x8(float_path, int8_path) -> bytes:
    """The MLPerf Tiny DS-CNN quantized 16x8 (module docstring): weights of the float model ``float_path``,
    activation ranges of the calibrated int8 model ``int8_path`` (the same 13 operators)."""
    fm, fsg, fops = _tflite_graph(float_path)
    _, isg, iops = _tflite_graph(int8_path)
    net = Net()
    x_q = _range16(isg, iops[0][1][0])
    h = net.input(tuple(fsg.Tensors(fops[0][1][0]).ShapeAsNumpy()), x_q, I16)
    for (name, ins, outs, o), (_, iins, iouts, _) in zip(fops, iops):
        shape = tuple(int(d) for d in fsg.Tensors(outs[0]).ShapeAsNumpy())
        out_q = (1 / 32768, 0) if name == "SOFTMAX" else x_q if name in ("AVERAGE_POOL_2D", "RESHAPE") \
            else _range16(isg, iouts[0])
        y = net.act(shape, out_q, dtype=I16)
        if name in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            axis = {"CONV_2D": 0, "DEPTHWISE_CONV_2D": 3, "FULLY_CONNECTED": 0}[name]
            w, ws = _per_channel(_real(fm, fsg, ins[1]), axis)
            if name == "FULLY_CONNECTED":                     # per tensor, as the TFLite converter writes FC
                ws = np.full(w.shape[0], np.max(ws), np.float32)
                w = np.clip(np.round(_real(fm, fsg, ins[1]) / np.float64(ws[0])), -127, 127).astype(np.int8)
            bias = np.round(_real(fm, fsg, ins[2]) / (np.float64(np.float32(x_q[0])) * ws.astype(np.float64)))
            wt = net.weights(w, ws if name != "FULLY_CONNECTED" else ws[0], axis)
            inputs = [h, wt, net.bias(bias.astype(np.int64), x_q[0], ws)]
        else:
            inputs = [h] + ([net.const(np.array(shape, np.int32))] if name == "RESHAPE" else [])
        opts = _options(name, o)
        net.op(name, inputs, y, opts[0], **opts[1])
        h, x_q = y, out_q
    return net.build([h])


def _options(name: str, o) -> tuple[str | None, dict]:
    """The builtin options of the float model's operator, for the 16x8 twin."""
    if name == "CONV_2D":
        return "Conv2DOptions", dict(padding=o.Padding(), strideH=o.StrideH(), strideW=o.StrideW(),
                                     fusedActivationFunction=o.FusedActivationFunction(),
                                     dilationHFactor=o.DilationHFactor(), dilationWFactor=o.DilationWFactor())
    if name == "DEPTHWISE_CONV_2D":
        return "DepthwiseConv2DOptions", dict(padding=o.Padding(), strideH=o.StrideH(), strideW=o.StrideW(),
                                              depthMultiplier=o.DepthMultiplier(),
                                              fusedActivationFunction=o.FusedActivationFunction(),
                                              dilationHFactor=o.DilationHFactor(), dilationWFactor=o.DilationWFactor())
    if name == "AVERAGE_POOL_2D":
        return "Pool2DOptions", dict(padding=o.Padding(), strideH=o.StrideH(), strideW=o.StrideW(),
                                     filterHeight=o.FilterHeight(), filterWidth=o.FilterWidth(),
                                     fusedActivationFunction=o.FusedActivationFunction())
    if name == "FULLY_CONNECTED":
        return "FullyConnectedOptions", dict(fusedActivationFunction=o.FusedActivationFunction())
    if name == "SOFTMAX":
        return "SoftmaxOptions", dict(beta=o.Beta())
    return ("ReshapeOptions", {}) if name == "RESHAPE" else (None, {})
