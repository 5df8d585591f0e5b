"""Model builders shared by the test modules (import them from here, not from another test module).

- ONNX QDQ (opset 13) twins of the one-op int8 TFLite models in ../shared/tools/tflm_oneop.py, and the
  int8 one-op cases (TFLite model + QDQ twin + TFLM output) built from both;
- float models: the demo DS-CNN, a residual block, a tiny MLP, one-graph models from nodes.

QDQ twins:

Every builder takes the same integer weights / bias and quantization parameters as the matching
tflm_oneop builder and returns an onnx.ModelProto describing the same computation:

    int8 NHWC input → Transpose(0,3,1,2) → DequantizeLinear → float op [→ Relu | Clip(0,6)]
        → QuantizeLinear → Transpose(0,2,3,1) → int8 NHWC output

(the transposes only where the float op needs NCHW: conv, depthwise, pools, concat). A quantization
q is (scale, zero_point); scales are written as float32, zero points as int8 (int32 for bias).

``probe=True`` drops the final QuantizeLinear (float output, same layout): run it with onnxruntime
to see the real output range before choosing the output quantization.
"""
from __future__ import annotations

import functools
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.conftest import ROOT, ort_run, shared_or_skip

OPSET = 13


def same_pads(in_size: int, k: int, s: int, d: int) -> tuple[int, int]:
    """TF SAME padding (before, after) of one spatial dim: the odd extra goes after."""
    out = -(-in_size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - in_size, 0)
    return total // 2, total - total // 2


def onnx_pads(x_shape_nhwc, k, stride, dilation, padding) -> list[int]:
    """ONNX pads [top, left, bottom, right] for TFLite 'SAME' / 'VALID'."""
    if padding == "VALID":
        return [0, 0, 0, 0]
    (t, b), (l, r) = (same_pads(x_shape_nhwc[1 + i], k[i], stride[i], dilation[i]) for i in (0, 1))
    return [t, l, b, r]


class _Graph:
    def __init__(self):
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self._n = 0

    def name(self, base: str) -> str:
        self._n += 1
        return f"{base}_{self._n}"

    def const(self, base: str, arr) -> str:
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def node(self, op: str, ins, base: str | None = None, **attrs) -> str:
        out = self.name(base or op.lower())
        self.nodes.append(helper.make_node(op, list(ins), [out], name=out, **attrs))
        return out

    def input(self, name: str, shape, elem=TensorProto.INT8) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem, list(shape)))
        return name

    def dq(self, x: str, q) -> str:
        """DequantizeLinear with a per-tensor q = (scale, zp int8)."""
        s = self.const("s", np.float32(q[0]))
        z = self.const("z", np.int8(q[1]))
        return self.node("DequantizeLinear", [x, s, z], "dq")

    def dq_const(self, arr, scales, zero_dtype, axis: int = 0) -> str:
        """DequantizeLinear of a constant; scales float32 scalar (per tensor) or [n] (per axis)."""
        scales = np.asarray(scales, np.float32)
        w = self.const("w", arr)
        s = self.const("ws", scales)
        z = self.const("wz", np.zeros(scales.shape, zero_dtype))
        attrs = {"axis": axis} if scales.ndim else {}
        return self.node("DequantizeLinear", [w, s, z], "dqw", **attrs)

    def act(self, y: str, activation: str) -> str:
        if activation == "RELU":
            return self.node("Relu", [y])
        if activation == "RELU6":
            return self.node("Clip", [y, self.const("lo", np.float32(0)), self.const("hi", np.float32(6))])
        assert activation == "NONE", activation
        return y

    def finish(self, y: str, out_q, probe: bool, nchw: bool, out_name: str = "y") -> onnx.ModelProto:
        if not probe:
            y = self.node("QuantizeLinear", [y, self.const("so", np.float32(out_q[0])),
                                              self.const("zo", np.int8(out_q[1]))], "q")
        if nchw:
            y = self.node("Transpose", [y], "to_nhwc", perm=[0, 2, 3, 1])
        assert self.nodes[-1].output[0] == y
        self.nodes[-1].output[0] = out_name          # the last node writes the graph output
        elem = TensorProto.FLOAT if probe else TensorProto.INT8
        self.outputs.append(helper.make_tensor_value_info(out_name, elem, None))
        graph = helper.make_graph(self.nodes, "qdq_oneop", self.inputs, self.outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="tinyfuse-tests")
        model.ir_version = 8
        model = onnx.shape_inference.infer_shapes(model)
        onnx.checker.check_model(model, full_check=True)
        return model

    def nchw_input(self, name: str, shape_nhwc) -> str:
        x = self.input(name, shape_nhwc)
        return self.node("Transpose", [x], "to_nchw", perm=[0, 3, 1, 2])


def conv2d(x_shape, w_ohwi, bias, in_q, w_scales, out_q, stride=(1, 1), padding="SAME",
           dilation=(1, 1), activation="NONE", probe=False):
    """TFLM CONV_2D twin: w int8 OHWI → ONNX OIHW, per-channel scales on axis 0."""
    return _conv(x_shape, np.ascontiguousarray(np.transpose(w_ohwi, (0, 3, 1, 2))), bias, in_q, w_scales,
                 out_q, stride, padding, dilation, activation, group=1, probe=probe)


def depthwise_conv2d(x_shape, w_1hwc, bias, in_q, w_scales, out_q, depth_multiplier=1, stride=(1, 1),
                     padding="SAME", dilation=(1, 1), activation="NONE", probe=False):
    """TFLM DEPTHWISE_CONV_2D twin: w [1,KH,KW,C*M] → ONNX [C*M,1,KH,KW], group=C
    (ONNX group conv: output channel c*M+m reads input channel c, as in TFLite)."""
    w = np.ascontiguousarray(np.transpose(w_1hwc[0], (2, 0, 1))[:, None])
    assert w.shape[0] == x_shape[3] * depth_multiplier
    return _conv(x_shape, w, bias, in_q, w_scales, out_q, stride, padding, dilation, activation,
                 group=x_shape[3], probe=probe)


def _conv(x_shape, w_oihw, bias, in_q, w_scales, out_q, stride, padding, dilation, activation, group, probe):
    g = _Graph()
    o = w_oihw.shape[0]
    ws = np.broadcast_to(np.asarray(w_scales, np.float32), (o,)).copy()
    x = g.dq(g.nchw_input("x", x_shape), in_q)
    w = g.dq_const(w_oihw.astype(np.int8), ws, np.int8, axis=0)
    b = g.dq_const(np.asarray(bias, np.int32), np.float32(in_q[0]) * ws, np.int32, axis=0)
    k = w_oihw.shape[2:]
    y = g.node("Conv", [x, w, b], "conv", kernel_shape=list(k), strides=list(stride),
               dilations=list(dilation), group=int(group),
               pads=onnx_pads(x_shape, k, stride, dilation, padding))
    return g.finish(g.act(y, activation), out_q, probe, nchw=True)


def fully_connected(x_shape, w_nk, bias, in_q, w_scale, out_q, activation="NONE", probe=False):
    """TFLM FULLY_CONNECTED twin (2-D x [B, K]): MatMul(DQ(x), DQ(W^T [K, N])) + DQ(bias [N]).
    w_scale: a scalar (per tensor) or [N] (per output channel: axis 1 of W^T)."""
    g = _Graph()
    x = g.dq(g.input("x", x_shape), in_q)
    ws = np.asarray(w_scale, np.float32)
    w = g.dq_const(np.ascontiguousarray(np.asarray(w_nk, np.int8).T), ws, np.int8, axis=1)
    b = g.dq_const(np.asarray(bias, np.int32), np.float32(in_q[0]) * ws, np.int32, axis=0)
    y = g.node("Add", [g.node("MatMul", [x, w]), b], "bias_add")
    return g.finish(g.act(y, activation), out_q, probe, nchw=False)


def binary(op: str, a_shape, b_shape, a_q, b_q, out_q, activation="NONE", probe=False):
    """ADD / MUL twin ('Add' | 'Mul'), same layout as TFLM, numpy broadcasting."""
    g = _Graph()
    a = g.dq(g.input("a", a_shape), a_q)
    b = g.dq(g.input("b", b_shape), b_q)
    return g.finish(g.act(g.node(op, [a, b]), activation), out_q, probe, nchw=False)


def pool2d(op: str, x_shape, q, filter=(2, 2), stride=(2, 2), padding="VALID", activation="NONE", probe=False):
    """AVERAGE_POOL_2D / MAX_POOL_2D twin ('AveragePool' | 'MaxPool'); same q in and out.
    AveragePool keeps count_include_pad=0: divides by the valid taps, as TFLM does."""
    g = _Graph()
    x = g.dq(g.nchw_input("x", x_shape), q)
    y = g.node(op, [x], op.lower(), kernel_shape=list(filter), strides=list(stride),
               pads=onnx_pads(x_shape, filter, stride, (1, 1), padding))
    return g.finish(g.act(y, activation), q, probe, nchw=True)


UNARY_OUT_Q = {"Softmax": (1 / 256, -128), "Sigmoid": (1 / 256, -128), "Tanh": (1 / 128, 0)}


def unary(op: str, x_shape, in_q, probe=False):
    """SOFTMAX (last axis) / LOGISTIC / TANH twin with TFLite's fixed output quantization."""
    g = _Graph()
    x = g.dq(g.input("x", x_shape), in_q)
    y = g.node(op, [x], op.lower(), **({"axis": -1} if op == "Softmax" else {}))
    return g.finish(y, UNARY_OUT_Q[op], probe, nchw=False)


def concatenation(shapes, q, probe=False):
    """CONCATENATION over channels (NHWC axis 3 = NCHW axis 1), one q for everything."""
    g = _Graph()
    xs = [g.dq(g.nchw_input(f"x{i}", s), q) for i, s in enumerate(shapes)]
    return g.finish(g.node("Concat", xs, "concat", axis=1), q, probe, nchw=True)


def reshape(x_shape, new_shape, q, probe=False):
    """RESHAPE twin, same q in and out."""
    g = _Graph()
    x = g.dq(g.input("x", x_shape), q)
    y = g.node("Reshape", [x, g.const("shape", np.asarray(new_shape, np.int64))], "reshape")
    return g.finish(y, q, probe, nchw=False)


# ----------------------------------------------------------------------------- int8 one-op cases (TFLM oracle)
def tflm_oneop():
    """The ../shared/tools/tflm_oneop.py module (one-op int8 TFLite builders and ``run`` through TFLM);
    skips outside CI and fails in CI when ../shared is absent."""
    tools = shared_or_skip("tools", "tflm_oneop.py").parent
    if str(tools) not in sys.path:
        sys.path.insert(0, str(tools))
    import tflm_oneop
    return tflm_oneop


@dataclass
class Case:
    kind: str
    tflm: bytes
    model: onnx.ModelProto
    inputs: list[np.ndarray]             # int8, in model input order
    want: np.ndarray                     # TFLM output
    desc: str                            # quantization parameters, for failure messages

    @property
    def feeds(self):
        return {vi.name: x for vi, x in zip(self.model.graph.input, self.inputs)}


# ----------------------------------------------------------------------------- random parameters
def _f32(v) -> float:
    return float(np.float32(v))


def _act_q(rng, lo=0.01, hi=0.1):
    return (_f32(rng.uniform(lo, hi)), int(rng.integers(-100, 101)))


def _i8(rng, shape, zp=0, spread=55):
    """int8 activations around the zero point (real values around 0), some saturated."""
    return np.clip(np.round(zp + rng.normal(0, spread, shape)), -128, 127).astype(np.int8)


def _out_q(rng, probe: onnx.ModelProto, feeds) -> tuple[float, int]:
    """An output (scale, zero point) fitted to the real output range of the float probe: a few
    percent saturate, the zero point is jittered (and is never forced to -128)."""
    y = ort_run(probe, feeds)[0].astype(np.float64)
    lo, hi = min(np.percentile(y, 1), 0.0), max(np.percentile(y, 99), 0.0)
    scale = max(hi - lo, 1e-3) / 255 * rng.uniform(0.7, 1.1)
    zp = int(np.clip(np.round(-128 - lo / scale) + rng.integers(-12, 13), -128, 127))
    return _f32(scale), zp


# ----------------------------------------------------------------------------- case builders
# Each returns a Case: seeded int8 inputs, weights and quantization put into both the TFLite model and
# its QDQ twin, the output quantization fitted to the twin's float output, TFLM's output as ``want``.
def conv_case(kind, seed, x_shape, out_ch, k, stride=(1, 1), padding="SAME", dilation=(1, 1),
               act="NONE", mult=1):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    in_q = _act_q(rng)
    x = _i8(rng, x_shape, in_q[1])
    if kind == "conv":
        w = rng.integers(-127, 128, (out_ch, *k, x_shape[3])).astype(np.int8)            # OHWI
        taps = k[0] * k[1] * x_shape[3]
    else:
        out_ch = x_shape[3] * mult
        w = rng.integers(-127, 128, (1, *k, out_ch)).astype(np.int8)                     # 1HWC
        taps = k[0] * k[1]
    w_scales = rng.uniform(0.002, 0.02, out_ch).astype(np.float32)
    lim = int(1500 * np.sqrt(taps))
    bias = rng.integers(-lim, lim + 1, out_ch).astype(np.int32)
    geo = dict(stride=stride, padding=padding, dilation=dilation)
    if kind == "conv":
        build_onnx = functools.partial(conv2d, x_shape, w, bias, in_q, w_scales, **geo)
        build_tflm = functools.partial(oneop.conv2d, x_shape, w, bias, in_q, w_scales, **geo)
    else:
        build_onnx = functools.partial(depthwise_conv2d, x_shape, w, bias, in_q, w_scales,
                                       depth_multiplier=mult, **geo)
        build_tflm = functools.partial(oneop.depthwise_conv2d, x_shape, w, bias, in_q, w_scales,
                                       depth_multiplier=mult, **geo)
    out_q = _out_q(rng, build_onnx(None, activation="NONE", probe=True), {"x": x})
    model, tflm = build_onnx(out_q, activation=act), build_tflm(out_q, activation=act)
    return _case(kind, tflm, model, [x], f"in_q={in_q} out_q={out_q} w_scales[:3]={w_scales[:3]}")


def fc_case(seed, batch, k, n, act="NONE", per_channel=False):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    in_q = _act_q(rng)
    x = _i8(rng, (batch, k), in_q[1])
    w = rng.integers(-127, 128, (n, k)).astype(np.int8)
    w_scale = (rng.uniform(0.002, 0.02, n).astype(np.float32) if per_channel
               else _f32(rng.uniform(0.002, 0.02)))
    lim = int(1500 * np.sqrt(k))
    bias = rng.integers(-lim, lim + 1, n).astype(np.int32)
    out_q = _out_q(rng, fully_connected(x.shape, w, bias, in_q, w_scale, None, probe=True), {"x": x})
    model = fully_connected(x.shape, w, bias, in_q, w_scale, out_q, activation=act)
    tflm = oneop.fully_connected(x.shape, w, bias, in_q, w_scale, out_q, activation=act)
    return _case("fc", tflm, model, [x], f"in_q={in_q} w_scale={w_scale} out_q={out_q}")


def binary_case(kind, seed, a_shape, b_shape, act="NONE"):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    a_q, b_q = _act_q(rng, 0.01, 0.1), _act_q(rng, 0.01, 0.1)
    a, b = _i8(rng, a_shape, a_q[1]), _i8(rng, b_shape, b_q[1])
    op = {"add": "Add", "mul": "Mul"}[kind]
    out_q = _out_q(rng, binary(op, a_shape, b_shape, a_q, b_q, None, probe=True), {"a": a, "b": b})
    model = binary(op, a_shape, b_shape, a_q, b_q, out_q, activation=act)
    tflm = getattr(oneop, kind)(a_shape, b_shape, a_q, b_q, out_q, activation=act)
    return _case(kind, tflm, model, [a, b], f"a_q={a_q} b_q={b_q} out_q={out_q}")


def pool_case(kind, seed, x_shape, filter, stride, padding="VALID", act="NONE"):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    q = _act_q(rng, 0.01, 0.1)
    x = _i8(rng, x_shape, q[1], spread=30)    # the max of 25 taps must not always saturate
    op, fn = {"avg_pool": ("AveragePool", oneop.average_pool2d), "max_pool": ("MaxPool", oneop.max_pool2d)}[kind]
    geo = dict(filter=filter, stride=stride, padding=padding, activation=act)
    return _case(kind, fn(x_shape, q, **geo), pool2d(op, x_shape, q, **geo), [x], f"q={q}")


def unary_case(kind, seed, x_shape, full_range=False):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    in_q = _act_q(rng, 0.015, 0.06)      # real inputs within about ±8: few saturated outputs
    if full_range:                       # every int8 value once: the whole lookup table
        x = rng.permutation(np.arange(-128, 128)).astype(np.int8).reshape(x_shape)
    else:
        x = _i8(rng, x_shape, in_q[1], spread=40)
    op, fn = {"softmax": ("Softmax", oneop.softmax), "logistic": ("Sigmoid", oneop.logistic),
              "tanh": ("Tanh", oneop.tanh)}[kind]
    return _case(kind, fn(x_shape, in_q), unary(op, x_shape, in_q), [x], f"in_q={in_q}")


def concat_case(seed, shapes):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    q = _act_q(rng)
    xs = [_i8(rng, s, q[1]) for s in shapes]
    tflm = oneop.concatenation(shapes, 3, [q] * len(shapes), q)
    return _case("concat", tflm, concatenation(shapes, q), xs, f"q={q}")


def reshape_case(seed, x_shape, new_shape):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    q = _act_q(rng)
    x = _i8(rng, x_shape, q[1])
    return _case("reshape", oneop.reshape(x_shape, new_shape, q), reshape(x_shape, new_shape, q), [x], f"q={q}")


def _case(kind, tflm, model, inputs, desc) -> Case:
    (want,) = tflm_oneop().run(tflm, inputs)
    return Case(kind, tflm, model, inputs, want, desc)


# ----------------------------------------------------------------------------- float models
def build_dscnn(tmp_path: Path) -> onnx.ModelProto:
    """The demo DS-CNN of examples/build_models.py, saved as tmp_path/dscnn.onnx."""
    spec = importlib.util.spec_from_file_location("build_models", ROOT / "examples" / "build_models.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build_dscnn(str(tmp_path / "dscnn.onnx"))


def residual_block() -> onnx.ModelProto:
    """x → conv → BN → relu → conv → BN → (+ x) → relu → GAP → flatten → gemm → softmax (NCHW)."""
    rng = np.random.default_rng(3)
    inits, nodes = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(arr.astype(np.float32), name))
        return name

    def conv_bn(x, name, relu):
        const(f"{name}_w", rng.standard_normal((8, 8, 3, 3)) * 0.2)
        nodes.append(helper.make_node("Conv", [x, f"{name}_w"], [f"{name}_c"], pads=[1, 1, 1, 1], name=name))
        for p, v in (("g", rng.uniform(0.5, 1.5, 8)), ("b", rng.normal(0, 0.1, 8)), ("m", rng.normal(0, 0.1, 8)),
                     ("v", rng.uniform(0.5, 1.5, 8))):
            const(f"{name}_{p}", v)
        nodes.append(helper.make_node("BatchNormalization", [f"{name}_c"] + [f"{name}_{p}" for p in "gbmv"],
                                      [f"{name}_bn"], name=f"{name}_bn"))
        if relu:
            nodes.append(helper.make_node("Relu", [f"{name}_bn"], [f"{name}_r"], name=f"{name}_relu"))
            return f"{name}_r"
        return f"{name}_bn"

    y = conv_bn(conv_bn("x", "c1", True), "c2", False)
    nodes += [helper.make_node("Add", [y, "x"], ["s"], name="residual"),
              helper.make_node("Relu", ["s"], ["sr"], name="relu_out"),
              helper.make_node("GlobalAveragePool", ["sr"], ["g"], name="gap"),
              helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
              helper.make_node("Gemm", ["f", const("fc_w", rng.standard_normal((5, 8))),
                                        const("fc_b", rng.standard_normal(5))], ["logits"], transB=1, name="fc"),
              helper.make_node("Softmax", ["logits"], ["y"], axis=1, name="softmax")]
    graph = helper.make_graph(nodes, "residual", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 6, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def tiny_mlp(path: Path, n_in: int = 16, n_hidden: int = 24, n_out: int = 8) -> Path:
    """x[1, n_in] → MatMul + Add → Relu → MatMul + Add → Softmax (float32), saved at ``path``."""
    rng = np.random.default_rng(3)
    w1, w2 = rng.standard_normal((n_in, n_hidden)), rng.standard_normal((n_hidden, n_out))
    inits = [numpy_helper.from_array(a.astype(np.float32), n) for a, n in
             ((w1, "w1"), (rng.standard_normal(n_hidden), "b1"), (w2, "w2"), (rng.standard_normal(n_out), "b2"))]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["hr"]), helper.make_node("MatMul", ["hr", "w2"], ["o"]),
             helper.make_node("Add", ["o", "b2"], ["ob"]), helper.make_node("Softmax", ["ob"], ["y"], axis=1)]
    graph = helper.make_graph(nodes, "tiny_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n_in])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n_out])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, path)
    return path


def model_of(nodes, inputs: dict[str, np.ndarray], outputs: list[str], opset: int = 13, inits=None):
    """One float graph of ``nodes``: graph inputs named and shaped as ``inputs``, outputs of unknown
    shape, ``inits`` as initializers."""
    graph = helper.make_graph(
        nodes, "t",
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in inputs.items()],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def rand(*shape, seed=0, low=None):
    """float32 standard normal of ``shape``; with ``low``: |x| + low (positive, e.g. variances)."""
    x = np.asarray(np.random.default_rng(seed).standard_normal(shape), np.float32)
    return x if low is None else np.asarray(np.abs(x) + low, np.float32)


def model_bytes(nodes, inputs, outputs=("Y",), inits=None, opset=13, domain_opsets=()) -> bytes:
    """A serialized ONNX model of ``nodes`` (outputs float, shape unknown). inputs: {name: shape} (float)
    or {name: (elem_type, shape)}; ``domain_opsets``: extra (domain, version) imports."""
    f = TensorProto.FLOAT
    vis = [helper.make_tensor_value_info(k, *(v if isinstance(v, tuple) and isinstance(v[0], int) and
                                              not isinstance(v[1], int) else (f, v))) for k, v in inputs.items()]
    graph = helper.make_graph(nodes, "bad", vis, [helper.make_tensor_value_info(o, f, None) for o in outputs],
                              initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in domain_opsets]
    return helper.make_model(graph, opset_imports=opsets).SerializeToString()


def good_model() -> bytes:
    """X[1, 3, 8, 8] → Conv 3x3 (8 channels, pads 1) → Relu → Y: a model tinyfuse compiles."""
    w = np.random.default_rng(0).standard_normal((8, 3, 3, 3)).astype(np.float32)
    return model_bytes([helper.make_node("Conv", ["X", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                        helper.make_node("Relu", ["c"], ["Y"])], {"X": [1, 3, 8, 8]}, inits={"W": w})
