""".tflite models compiled directly (compiler/frontend/tflite.py), checked against TFLite Micro.

- The MLPerf Tiny int8 models equal TFLM byte for byte (all-zero input, the io.npz input and 5 seeded
  random inputs); the float models are within 1e-5 x max|TFLM|; the hybrid KWS model (float
  activations, int8 weights: TFLM refuses it) is within 5e-4 of onnxruntime on its .onnx twin.
- The .tflite and its tf2onnx .onnx twin give the same kernels, arena and int8 outputs.
- One-operator models (../shared/tools/tflm_oneop.py builders, plus the same editor for the ops it
  has no builder for) are compiled from their bytes and equal TFLM bit for bit.
- Unsupported operators, versions and types are one-line errors naming the operator.
"""
from __future__ import annotations

import math

import numpy as np
import onnx
import pytest

from tinyfuse.cli import main as cli_main
from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tinyfuse.harness import build_host, run_host
from tests.builders import tflm_oneop
from tests.conftest import TFLM_HEAD, ort_run, shared_or_skip, tflm_run

INT8_MODELS = list(TFLM_HEAD)
FLOAT_MODELS = ["pretrainedResnet", "ad01_fp32"]
TWINS = ["kws_ref_model", "pretrainedResnet_quant"]


def model_inputs(info, seed=2024, n=5):
    """The all-zero input and ``n`` seeded random ones (full int8 range; normal floats)."""
    rng = np.random.default_rng(seed)
    xs = [np.zeros(info.shape, info.dtype)]
    for _ in range(n):
        xs.append(rng.integers(-128, 128, info.shape).astype(np.int8) if info.dtype == "int8"
                  else rng.standard_normal(info.shape).astype(np.float32))
    return xs


# ----------------------------------------------------------------------------------------- MLPerf Tiny models

@pytest.mark.parametrize("model", INT8_MODELS)
def test_mlperf_int8_tflite_bit_exact_with_tflm(model, tmp_path):
    path = shared_or_skip("models", "tflite", f"{model}.tflite")
    io = np.load(shared_or_skip("models", "onnx", f"{model}.io.npz"))
    result = compile_model(path)
    assert [(t.dtype, t.shape) for t in result.inputs] == [("int8", io["input"].shape)]
    exe = build_host(result, tmp_path)
    for i, x in enumerate([io["input"], *model_inputs(result.inputs[0])]):
        (got,) = run_host(exe, result, [x])
        (want,) = tflm_run(path, [x])
        assert got.dtype == want.dtype and np.array_equal(got, want), \
            f"{model} input {i}: {np.sum(got != want)} of {got.size} outputs differ from TFLM"
    assert result.arena_bytes <= TFLM_HEAD[model]     # TFLM's planned head, input and output included
    for k in result.kernels:          # int8 end to end: nothing (de)quantized in float
        assert not {"qnn.dequantize", "qnn.quantize"} & set(k.ops), k.ops


@pytest.mark.parametrize("model", FLOAT_MODELS)
def test_mlperf_float_tflite_matches_tflm(model, tmp_path):
    path = shared_or_skip("models", "tflite", f"{model}.tflite")
    result = compile_model(path)
    exe = build_host(result, tmp_path)
    for i, x in enumerate(model_inputs(result.inputs[0], n=3)):
        (got,) = run_host(exe, result, [x])
        (want,) = tflm_run(path, [x])
        err, ref = float(np.max(np.abs(got - want))), float(np.max(np.abs(want)))
        assert err <= 1e-5 * ref, f"{model} input {i}: max |tinyfuse - TFLM| {err:.3g} > 1e-5 x {ref:.3g}"


def test_hybrid_kws_runs_in_float_like_its_onnx_twin(tmp_path):
    """Float activations with int8 conv weights: TFLM refuses the model; tinyfuse dequantizes the
    weights at compile time, exactly what the .onnx twin (DequantizeLinear on initializers) says."""
    path = shared_or_skip("models", "tflite", "kws_ref_model_float32.tflite")
    twin = shared_or_skip("models", "onnx", "kws_ref_model_float32.onnx")
    result = compile_model(path)
    assert all("qnn.dequantize" not in k.ops for k in result.kernels)      # weights folded to float
    exe = build_host(result, tmp_path)
    name = onnx.load(str(twin), load_external_data=False).graph.input[0].name
    io = np.load(twin.with_suffix(".io.npz"))
    for x in [io["input"], *model_inputs(result.inputs[0], n=2)]:
        (got,) = run_host(exe, result, [x])
        (want,) = ort_run(twin, {name: x})
        assert np.max(np.abs(got - want)) <= 5e-4 * np.max(np.abs(want))


@pytest.mark.parametrize("model", TWINS)
def test_tflite_and_onnx_twin_compile_to_the_same_program(model, tmp_path):
    tfl = compile_model(shared_or_skip("models", "tflite", f"{model}.tflite"))
    onx = compile_model(shared_or_skip("models", "onnx", f"{model}.onnx"))
    assert [k.ops for k in tfl.kernels] == [k.ops for k in onx.kernels]
    assert (tfl.arena_bytes, tfl.weights_bytes, tfl.macs) == (onx.arena_bytes, onx.weights_bytes, onx.macs)
    exe_t, exe_o = build_host(tfl, tmp_path / "tflite"), build_host(onx, tmp_path / "onnx")
    for x in model_inputs(tfl.inputs[0], seed=7):
        assert np.array_equal(run_host(exe_t, tfl, [x])[0], run_host(exe_o, onx, [x])[0])


# ----------------------------------------------------------------------------------------- one-op models

def _q(rng, lo=0.01, hi=0.1):
    return float(np.float32(rng.uniform(lo, hi))), int(rng.integers(-40, 41))


def _i8(rng, shape):
    return rng.integers(-128, 128, shape).astype(np.int8)


def _fitted_q(rng, act, ws, taps):
    """(in_q, out_q) such that the real pre-activation spreads over about 40 output steps: few
    saturated outputs, whatever the fused activation."""
    out_q = (float(np.float32(rng.uniform(0.02, 0.04) if act == "RELU6" else rng.uniform(0.02, 0.2))),
             int(rng.integers(-40, 41)))
    sigma = 40 * out_q[0]                                  # uniform int8 inputs and weights: std ~74 and ~73
    in_s = sigma / (74 * 73 * float(np.mean(ws)) * math.sqrt(taps))
    return (float(np.float32(in_s)), int(rng.integers(-40, 41))), out_q


def _conv(kind, x, o, k, stride=(1, 1), padding="SAME", dilation=(1, 1), act="NONE", mult=1):
    def build(rng, oo):
        oc = x[3] * mult if kind == "depthwise" else o
        w = rng.integers(-127, 128, (1, *k, oc) if kind == "depthwise" else (oc, *k, x[3])).astype(np.int8)
        ws = rng.uniform(0.002, 0.02, oc)
        in_q, out_q = _fitted_q(rng, act, ws, k[0] * k[1] * (1 if kind == "depthwise" else x[3]))
        b = rng.integers(-3000, 3000, oc).astype(np.int32)
        geo = dict(stride=stride, padding=padding, dilation=dilation, activation=act)
        if kind == "depthwise":
            return oo.depthwise_conv2d(x, w, b, in_q, ws, out_q, depth_multiplier=mult, **geo), [x]
        return oo.conv2d(x, w, b, in_q, ws, out_q, **geo), [x]
    return build


def _fc(x, n, act="NONE", per_channel=False, keep=False):
    def build(rng, oo):
        k = x[-1] if keep else x[-1] * (x[-2] if len(x) > 2 else 1)
        w = rng.integers(-127, 128, (n, k)).astype(np.int8)
        ws = rng.uniform(0.002, 0.02, n) if per_channel else float(rng.uniform(0.002, 0.02))
        in_q, out_q = _fitted_q(rng, act, ws, k)
        b = rng.integers(-3000, 3000, n).astype(np.int32)
        return oo.fully_connected(x, w, b, in_q, ws, out_q, act, keep), [x]
    return build


def _binary(kind, a, b, act="NONE"):
    def build(rng, oo):
        a_q, b_q = _q(rng), _q(rng)
        if act == "RELU6":
            out_s = rng.uniform(0.02, 0.04)
        else:                           # the real result's spread over about 40 output steps
            spread = 74 * (a_q[0] * 74 * b_q[0] if kind == "mul" else math.hypot(a_q[0], b_q[0]))
            out_s = spread / 40 * rng.uniform(0.8, 1.25)
        qs = [a_q, b_q, (float(np.float32(out_s)), int(rng.integers(-40, 41)))]
        if kind == "sub":
            return _sub(oo, a, b, *qs, act), [a, b]
        return getattr(oo, kind)(a, b, *qs, act), [a, b]
    return build


def _pool(kind, x, f, stride, padding="VALID", act="NONE"):
    def build(rng, oo):
        fn = oo.average_pool2d if kind == "avg_pool" else oo.max_pool2d
        return fn(x, _q(rng), f, stride, padding, act), [x]
    return build


def _unary(kind, x):
    def build(rng, oo):
        return getattr(oo, kind)(x, _q(rng, 0.015, 0.08)), [x]
    return build


def _with_q(fn, x, *extra, n_q=1, **kw):
    """Builder calling tflm_oneop.fn(x, *extra, q_1 .. q_n, **kw) with random (scale, zero point)s."""
    def build(rng, oo):
        return getattr(oo, fn)(x, *extra, *[_q(rng) for _ in range(n_q)], **kw), [x]
    return build


def _concat(shapes, axis):
    def build(rng, oo):
        q = _q(rng)
        return oo.concatenation(shapes, axis, [q] * len(shapes), q), list(shapes)
    return build


# -- ops tflm_oneop has no builder for: the same model editor (its private helpers) -------------------

def _sub(oo, a, b, a_q, b_q, out_q, act):
    y = oo._act(np.broadcast_shapes(a, b), out_q, "y")
    return oo._model("SUB", [oo._act(a, a_q, "a"), oo._act(b, b_q, "b")], y, "SubOptions",
                     fusedActivationFunction=oo._ACT[act])


def _extra(opcode, x, out_shape=None, options=None, const=None, in_dtype="int8", out_dtype="int8", **fields):
    """One-input op; ``const`` is an int32 second input (perm ...); scales random."""
    def build(rng, oo):
        from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
        from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as S

        def tensor(shape, dtype, name, q):
            if dtype == "float32":
                return me.Tensor(shape=tuple(shape), dtype=S.TensorType.FLOAT32, name=name)
            return oo._act(shape, q, name)
        in_q = _q(rng, 0.02, 0.08) if opcode != "RELU6" else (float(np.float32(rng.uniform(0.06, 0.1))), -20)
        out_q = _q(rng, 0.02, 0.08) if opcode != "HARD_SWISH" else _q(rng, 0.01, 0.03)
        ins = [tensor(x, in_dtype, "x", in_q)]
        if const is not None:
            ins.append(oo._const(np.asarray(const), oo._I32, "c"))
        y = tensor(out_shape or x, out_dtype, "y", out_q)
        return oo._model(opcode, ins, y, options, **fields), [x]
    return build


def _specs():
    s = {}
    for i, args in enumerate([((1, 7, 5, 3), 8, (3, 3)),
                              ((1, 8, 10, 3), 5, (3, 3), (2, 2), "SAME", (1, 1), "RELU6"),   # pads 0/1
                              ((1, 9, 11, 5), 6, (3, 3), (2, 2), "SAME", (1, 1), "RELU"),
                              ((1, 7, 5, 6), 4, (3, 3), (1, 1), "SAME", (2, 2)),             # dilation 2
                              ((1, 9, 11, 6), 5, (1, 1), (1, 1), "VALID", (1, 1), "RELU"),
                              ((1, 6, 8, 4), 7, (5, 3), (1, 2), "VALID", (1, 1), "RELU6"),
                              ((2, 5, 7, 3), 6, (3, 3), (1, 1), "SAME", (1, 1), "RELU"),     # batch 2
                              ((1, 49, 10, 1), 8, (10, 4), (2, 2), "SAME", (1, 1), "RELU")]):  # KWS layer 1
        s[f"conv{i}"] = _conv("conv", *args)
    for i, (x, mult, *rest) in enumerate([((1, 7, 5, 3), 1, (3, 3)),
                                          ((1, 9, 11, 5), 3, (3, 3), (1, 1), "SAME", (1, 1), "RELU"),
                                          ((1, 8, 10, 6), 1, (3, 3), (2, 2), "SAME", (1, 1), "RELU6"),
                                          ((1, 9, 7, 5), 1, (3, 3), (1, 1), "SAME", (2, 2)),
                                          ((2, 6, 5, 3), 2, (5, 5), (1, 1), "VALID")]):
        s[f"depthwise{i}"] = _conv("depthwise", x, None, *rest, mult=mult)
    s["fc0"] = _fc((1, 10), 6)
    s["fc1"] = _fc((3, 17), 5, "RELU")
    s["fc2"] = _fc((2, 33), 7, "RELU6", per_channel=True)
    s["fc3"] = _fc((2, 3, 8), 4, keep=True)
    s["fc4"] = _fc((1, 4, 5), 9)                       # flattened [1, 20] input
    for kind in ("add", "mul", "sub"):
        s[f"{kind}0"] = _binary(kind, (1, 7, 5, 3), (1, 7, 5, 3))
        s[f"{kind}1"] = _binary(kind, (1, 5, 7, 6), (1, 1, 1, 6), "RELU")
        s[f"{kind}2"] = _binary(kind, (2, 4, 6, 6), (2, 4, 6, 6), "RELU6")
    for kind in ("avg_pool", "max_pool"):
        s[f"{kind}0"] = _pool(kind, (1, 8, 10, 3), (2, 2), (2, 2))
        s[f"{kind}1"] = _pool(kind, (1, 7, 5, 5), (3, 3), (2, 2), "SAME")
        s[f"{kind}2"] = _pool(kind, (1, 8, 10, 6), (3, 3), (2, 2), "SAME", "RELU")
        s[f"{kind}3"] = _pool(kind, (2, 5, 5, 4), (5, 5), (1, 1))
    for i, x in enumerate([(1, 10), (3, 12), (1, 4, 6, 7)]):
        s[f"softmax{i}"] = _unary("softmax", x)
    s["softmax_beta"] = lambda rng, oo: (oo.softmax((2, 9), _q(rng, 0.02, 0.1), beta=0.5), [(2, 9)])
    for kind in ("logistic", "tanh"):
        s[f"{kind}0"] = _unary(kind, (1, 256))
        s[f"{kind}1"] = _unary(kind, (1, 7, 5, 3))
    s["concat0"] = _concat([(1, 5, 7, 3), (1, 5, 7, 5)], 3)
    s["concat1"] = _concat([(1, 4, 6, 2), (1, 3, 6, 2), (1, 1, 6, 2)], 1)
    s["concat2"] = _concat([(2, 3), (2, 4)], -1)
    s["pad0"] = _with_q("pad", (1, 5, 7, 3), [(0, 0), (1, 2), (2, 1), (0, 0)])
    s["pad1"] = _with_q("pad", (2, 6), [(1, 0), (0, 3)])
    for i, (x, axes, keep) in enumerate([((1, 5, 7, 8), [1, 2], True), ((1, 5, 7, 8), [1, 2], False),
                                         ((2, 4, 6, 3), [1], False), ((1, 4, 6, 3), [2], True),
                                         ((1, 4, 6, 3), [-1], False), ((2, 3, 4, 5), [0, 1, 2, 3], False),
                                         ((3, 10), [1], False), ((1, 49, 10, 64), [1, 2], True)]):
        s[f"mean{i}"] = _with_q("mean", x, axes, n_q=2, keep_dims=keep)
    s["reshape0"] = _with_q("reshape", (1, 5, 7, 3), (1, 105))
    s["reshape1"] = _with_q("reshape", (2, 3, 5, 1), (2, -1))
    s["relu"] = _extra("RELU", (1, 6, 5, 4))
    s["relu6"] = _extra("RELU6", (1, 6, 5, 4))
    s["hard_swish0"] = _extra("HARD_SWISH", (1, 256))
    s["hard_swish1"] = _extra("HARD_SWISH", (1, 7, 5, 3))
    s["leaky_relu0"] = _extra("LEAKY_RELU", (1, 256), options="LeakyReluOptions", alpha=0.2)
    s["leaky_relu1"] = _extra("LEAKY_RELU", (1, 7, 5, 3), options="LeakyReluOptions", alpha=0.01)
    s["transpose"] = _extra("TRANSPOSE", (1, 4, 5, 3), (1, 3, 4, 5), "TransposeOptions", const=[0, 3, 1, 2])
    s["squeeze"] = _extra("SQUEEZE", (1, 1, 5, 3), (5, 3), "SqueezeOptions", squeezeDims=[0, 1])
    s["quantize_requant"] = _extra("QUANTIZE", (1, 6, 5, 4))
    s["quantize_float"] = _extra("QUANTIZE", (1, 6, 5, 4), in_dtype="float32")
    s["dequantize"] = _extra("DEQUANTIZE", (1, 6, 5, 4), out_dtype="float32")
    return s


SPECS = _specs()


def _inputs(rng, shapes, model):
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as S
    m = S.ModelT.InitFromPackedBuf(model, 0)
    g = m.subgraphs[0]
    out = []
    for shape, i in zip(shapes, g.inputs):
        if g.tensors[i].type == S.TensorType.FLOAT32:
            out.append((rng.standard_normal(shape) * 3).astype(np.float32))
        else:
            out.append(_i8(rng, shape))
    return out


@pytest.mark.parametrize("case", list(SPECS))
def test_one_op_tflite_bit_exact_with_tflm(case, tmp_path):
    oo = tflm_oneop()
    rng = np.random.default_rng(sum(map(ord, case)))
    model, shapes = SPECS[case](rng, oo)
    result = compile_model(model)
    exe = build_host(result, tmp_path)
    for trial in range(3):
        xs = _inputs(rng, shapes, model)
        got = run_host(exe, result, xs)
        want = oo.run(model, xs)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
            assert np.array_equal(g, w), f"{case} trial {trial}: {np.sum(g != w)}/{g.size} outputs differ " \
                                         f"(max {np.max(np.abs(g.astype(np.float64) - w))})"
    if result.outputs[0].dtype == "int8" and result.inputs[0].dtype == "int8":
        for k in result.kernels:     # int8 end to end: nothing computed in float
            assert not {"qnn.dequantize", "qnn.quantize"} & set(k.ops), (case, k.ops)


def test_chained_ops_two_inputs_two_outputs_bit_exact(tmp_path):
    """ADD → RELU → MEAN with the ADD result also a model output: values flow between converted
    operators, several I/O tensors, an output that another operator reads too."""
    from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as S
    oo = tflm_oneop()
    shape = (1, 4, 5, 3)
    a, b = oo._act(shape, (0.05, 3), "a"), oo._act(shape, (0.04, -5), "b")
    s, r, m = oo._act(shape, (0.08, 1), "s"), oo._act(shape, (0.07, -2), "r"), oo._act((1, 3), (0.03, 2), "m")
    axes = oo._const(np.array([1, 2], np.int32), oo._I32, "axes")
    add = me.Operator(opcode=S.BuiltinOperator.ADD, inputs=[a, b], outputs=[s])
    add._fb.builtinOptionsType, add._fb.builtinOptions = S.BuiltinOptions.AddOptions, S.AddOptionsT()
    mean = me.Operator(opcode=S.BuiltinOperator.MEAN, inputs=[r, axes], outputs=[m])
    mean._fb.builtinOptionsType, mean._fb.builtinOptions = S.BuiltinOptions.ReducerOptions, S.ReducerOptionsT()
    relu = me.Operator(opcode=S.BuiltinOperator.RELU, inputs=[s], outputs=[r])
    model = me.Model(description="chain")
    model.add_subgraph(tensors=[a, b, s, r, axes, m], operators=[add, relu, mean], inputs=[a, b], outputs=[m, s])
    model = bytes(model.build())
    result = compile_model(model)
    assert [(t.shape, t.dtype) for t in result.outputs] == [((1, 3), "int8"), (shape, "int8")]
    exe = build_host(result, tmp_path)
    rng = np.random.default_rng(3)
    for _ in range(3):
        xs = [_i8(rng, shape), _i8(rng, shape)]
        for got, want in zip(run_host(exe, result, xs), oo.run(model, xs)):
            assert np.array_equal(got, want)


def test_one_op_cases_cover_the_issue_list():
    kinds = {c.rstrip("0123456789").removesuffix("_beta").removesuffix("_requant").removesuffix("_float")
             for c in SPECS}
    assert {"conv", "depthwise", "fc", "add", "mul", "avg_pool", "max_pool", "softmax", "logistic", "tanh",
            "concat", "pad", "mean", "reshape"} <= kinds


FLOAT_ONE_OPS = {
    "conv": lambda oo: _float_model(oo, "CONV_2D", [(1, 7, 6, 3), ("w", (4, 3, 3, 3)), ("b", (4,))], (1, 4, 3, 4),
                                    "Conv2DOptions", padding=0, strideH=2, strideW=2, fusedActivationFunction=3),
    "depthwise": lambda oo: _float_model(oo, "DEPTHWISE_CONV_2D", [(1, 7, 6, 3), ("w", (1, 3, 3, 6)), ("b", (6,))],
                                         (1, 7, 6, 6), "DepthwiseConv2DOptions", padding=0, strideH=1, strideW=1,
                                         depthMultiplier=2),
    "fc": lambda oo: _float_model(oo, "FULLY_CONNECTED", [(2, 12), ("w", (5, 12)), ("b", (5,))], (2, 5),
                                  "FullyConnectedOptions", fusedActivationFunction=1),
    "sub": lambda oo: _float_model(oo, "SUB", [(1, 4, 4, 3), (1, 1, 1, 3)], (1, 4, 4, 3), "SubOptions"),
    "mean": lambda oo: _float_model(oo, "MEAN", [(1, 5, 4, 3), ("axes", np.array([1, 2], np.int32))], (1, 3),
                                    "ReducerOptions", keepDims=False),
    "hard_swish": lambda oo: _float_model(oo, "HARD_SWISH", [(2, 40)], (2, 40)),
    "leaky_relu": lambda oo: _float_model(oo, "LEAKY_RELU", [(2, 40)], (2, 40), "LeakyReluOptions", alpha=0.3),
    "max_pool": lambda oo: _float_model(oo, "MAX_POOL_2D", [(1, 7, 5, 2)], (1, 4, 3, 2), "Pool2DOptions",
                                        padding=0, strideH=2, strideW=2, filterHeight=3, filterWidth=3),
    "avg_pool": lambda oo: _float_model(oo, "AVERAGE_POOL_2D", [(1, 7, 5, 2)], (1, 4, 3, 2), "Pool2DOptions",
                                        padding=0, strideH=2, strideW=2, filterHeight=3, filterWidth=3),
    "softmax": lambda oo: _float_model(oo, "SOFTMAX", [(3, 7)], (3, 7), "SoftmaxOptions", beta=0.7),
    "logistic": lambda oo: _float_model(oo, "LOGISTIC", [(3, 7)], (3, 7)),
    "tanh": lambda oo: _float_model(oo, "TANH", [(3, 7)], (3, 7)),
    "relu6": lambda oo: _float_model(oo, "RELU6", [(3, 7)], (3, 7)),
    "pad": lambda oo: _float_model(oo, "PAD", [(1, 3, 4, 2), ("p", np.array([[0, 0], [1, 0], [0, 2], [0, 0]],
                                                                             np.int32))], (1, 4, 6, 2), "PadOptions"),
}


def _float_model(oo, opcode, inputs, out_shape, options=None, **fields):
    """A float32 one-op model: shapes are graph inputs, (name, shape) random constants, (name, array)
    given constants."""
    from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as S
    rng = np.random.default_rng(len(opcode))
    ts = []
    for i, spec in enumerate(inputs):
        if isinstance(spec, tuple) and isinstance(spec[0], str):
            name, v = spec
            data = v if isinstance(v, np.ndarray) else rng.standard_normal(v).astype(np.float32)
            dtype = S.TensorType.INT32 if data.dtype == np.int32 else S.TensorType.FLOAT32
            ts.append(me.Tensor(shape=data.shape, dtype=dtype, data=data, name=name))
        else:
            ts.append(me.Tensor(shape=tuple(spec), dtype=S.TensorType.FLOAT32, name=f"x{i}"))
    y = me.Tensor(shape=tuple(out_shape), dtype=S.TensorType.FLOAT32, name="y")
    return oo._model(opcode, ts, y, options, **fields)


@pytest.mark.parametrize("case", list(FLOAT_ONE_OPS))
def test_one_op_float_tflite_matches_tflm(case, tmp_path):
    oo = tflm_oneop()
    model = FLOAT_ONE_OPS[case](oo)
    result = compile_model(model)
    rng = np.random.default_rng(1)
    xs = [(rng.standard_normal(t.shape) * 4).astype(np.float32) for t in result.inputs]
    (got,) = run_host(build_host(result, tmp_path), result, xs)
    (want,) = oo.run(model, xs)
    assert got.shape == want.shape
    assert np.max(np.abs(got - want)) <= 1e-5 * max(np.max(np.abs(want)), 1e-6)


# ----------------------------------------------------------------------------------------- errors

def _with_version(model: bytes, version: int) -> bytes:
    import flatbuffers
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as S
    m = S.ModelT.InitFromPackedBuf(model, 0)
    m.operatorCodes[0].version = version
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def test_unsupported_operator_is_a_one_line_error(tmp_path):
    oo = tflm_oneop()
    model = _float_model(oo, "SEGMENT_SUM", [(1, 4, 4, 3), (1, 4, 4, 3)], (1, 4, 4, 3))
    with pytest.raises(TinyfuseError) as e:
        compile_model(model)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("operator 0 (SEGMENT_SUM v1, inputs [1, 4, 4, 3] float32")
    assert "not supported" in msg and "CONV_2D" in msg
    path = tmp_path / "segsum.tflite"
    path.write_bytes(model)
    assert cli_main(["compile", str(path), "-o", str(tmp_path / "out")]) == 2


def test_unsupported_version_is_an_error():
    oo = tflm_oneop()
    model = _with_version(oo.conv2d((1, 5, 5, 2), np.ones((3, 3, 3, 2), np.int8), None, (0.05, 0),
                                    [0.01] * 3, (0.1, 0)), 99)
    with pytest.raises(TinyfuseError, match=r"^operator 0 \(CONV_2D v99, inputs \[1, 5, 5, 2\] int8.*version 99"):
        compile_model(model)


def test_int16_activations_are_an_error():
    from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as S
    oo = tflm_oneop()
    t = [me.Tensor(shape=(1, 8), dtype=S.TensorType.INT16, quantization=me.Quantization(0.01, 0), name=n)
         for n in ("x", "y")]
    with pytest.raises(TinyfuseError, match=r"operator 0 \(LOGISTIC v1, inputs \[1, 8\] int16\).*int16"):
        compile_model(oo._model("LOGISTIC", [t[0]], t[1]))


def test_not_a_tflite_file_is_an_error(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(TinyfuseError, match="not a TFLite flatbuffer"):
        compile_model(bad)
    with pytest.raises(TinyfuseError, match="no such file"):
        compile_model(tmp_path / "missing.tflite")


def test_cli_compiles_and_reports_a_tflite(tmp_path, capsys):
    path = shared_or_skip("models", "tflite", "ad01_int8.tflite")
    assert cli_main(["compile", str(path), "-o", str(tmp_path / "c")]) == 0
    assert (tmp_path / "c" / "ad01_int8.h").is_file()
    assert cli_main(["report", str(path)]) == 0
    assert "fused_qmatmul" in capsys.readouterr().out
