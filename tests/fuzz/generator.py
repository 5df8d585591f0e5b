"""Differential fuzzing: random valid ONNX graphs through tinyfuse (compile → C → gcc → run), compared
with onnxruntime (float: |C − ORT| ≤ 1e-4 · max|ORT|) and, for int8 QDQ graphs, with the per-kernel
real-arithmetic oracle (harness/real_oracle.py: every int8 kernel within 1 LSB of the real arithmetic of
its ops, on its own C inputs) and with the compiler's own numpy reference (``run_module(result.module,
inputs)`` must equal the C output exactly); the LSB difference to onnxruntime, which requantizes in
float, is recorded and, for graphs quantized by onnxruntime's quantizer, bounded by ``LSB_LIMIT`` unless a kernel
amplifies one input LSB beyond it (``_lsb_gain``: then recorded, not judged).
Half the int8 graphs draw their quantization by hand (tests/fuzz/handqdq.py: weight scales 2^-20..2^4
per channel, multipliers > 1, zero points at -128/127), and half the rank-4 graphs get layers of the
newer ops (tests/fuzz/newops.py: Resize, ConvTranspose, PRelu, Slice, Split, Gather, Expand, Tile).

A graph is a *spec*: plain data (dicts and lists, JSON-able) that ``build_model`` turns into ONNX.
Layers name their operands relative to the values built so far (``src`` 1 = the latest), and a layer
whose operands do not fit (after minimisation removed a producer, say) is skipped, so every subset
of a spec's layers is still a valid graph. That is what ``minimise`` relies on: it drops layers and
shrinks shapes and attributes while the failure stays the same kind, and the result is pasted into
``tests/fuzz/test_regressions.py``.

    python -m tests.fuzz.generator --count 2000 --seed 1000        # what `make fuzz` runs
    python -m tests.fuzz.generator --seed 17 --count 1 --show       # one spec, its model and result
"""
from __future__ import annotations

import argparse
import copy
import json
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.fuzz.newops import NEW_OPS, build_new_layer, random_new_layer

ROOT = Path(__file__).resolve().parents[2]
CFLAGS = ["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror"]
FLOAT_REL = 1e-4            # the float criterion: 1e-4 x max|ref|
LSB_LIMIT = 8               # int8 vs onnxruntime (float requantization), output LSBs
OPSET = 14            # HardSwish-14

ACTS = ["Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Clip"]


# --------------------------------------------------------------------------- random specs

def random_spec(seed: int, quant: bool | None = None) -> dict:
    """A random graph spec from ``seed`` (the same seed always gives the same spec). Half of the int8
    specs draw their quantization parameters by hand (``qdq: "hand"``, tests/fuzz/handqdq.py), from
    a generator of their own so the layers of a seed do not depend on it."""
    spec = _random_spec(seed, quant)
    extra = np.random.default_rng([seed, 6])          # the new ops' layers, inserted among the others
    if len(spec["input"]) == 4 and extra.random() < 0.5:
        for _ in range(int(extra.integers(1, 3))):
            pos = int(extra.integers(0, len(spec["layers"]) + 1))
            spec["layers"].insert(pos, random_new_layer(extra, len(spec["layers"])))
    if spec["quant"] and np.random.default_rng([seed, 5]).random() < 0.5:
        spec["qdq"] = "hand"
    return spec


def _random_spec(seed: int, quant: bool | None) -> dict:
    rng = np.random.default_rng(seed)
    quant = bool(rng.random() < 0.35) if quant is None else quant
    if rng.random() < 0.15:
        return _random_dense_spec(rng, seed, quant)
    n = 2 if rng.random() < 0.1 else 1
    c = int(rng.integers(1, 9))
    h, w = (int(v) for v in rng.integers(1, 13, 2))
    if rng.random() < 0.8:
        h, w = max(h, 4), max(w, 4)
    layers = []
    for i in range(int(rng.integers(1, 8))):
        layers.append(_random_layer(rng, i))
    if rng.random() < 0.4:
        layers.append({"op": "head", "features": int(rng.integers(1, 11)), "transB": int(rng.integers(0, 2)),
                       "softmax": bool(rng.random() < 0.5), "gap": bool(rng.random() < 0.3),
                       "alpha": float(rng.choice([1.0, 0.5])), "wseed": 1000 + len(layers)})
    return {"seed": seed, "quant": quant, "per_channel": bool(rng.random() < 0.5), "input": [n, c, h, w],
            "layers": layers, "extra_output": bool(rng.random() < 0.15)}


def _random_dense_spec(rng, seed, quant) -> dict:
    layers = []
    for i in range(int(rng.integers(1, 6))):
        r = rng.random()
        if r < 0.45:
            layers.append({"op": "gemm", "features": int(rng.integers(1, 33)), "transB": int(rng.integers(0, 2)),
                           "bias": bool(rng.random() < 0.8), "matmul": bool(rng.random() < 0.3), "wseed": i})
        elif r < 0.7:
            layers.append({"op": "act", "act": str(rng.choice(ACTS)), "alpha": float(rng.uniform(0.05, 0.3)),
                           "lo": float(rng.uniform(-1, 0)), "hi": float(rng.uniform(0.2, 6))})
        elif r < 0.85:
            layers.append({"op": "binary", "kind": str(rng.choice(["Add", "Mul"])), "src2": int(rng.integers(1, 4))})
        else:
            layers.append({"op": "concat", "src2": int(rng.integers(1, 4)), "axis": 1})
    if rng.random() < 0.3:
        layers.append({"op": "softmax"})
    return {"seed": seed, "quant": quant, "per_channel": bool(rng.random() < 0.5),
            "input": [int(rng.integers(1, 4)), int(rng.integers(1, 40))], "layers": layers,
            "extra_output": bool(rng.random() < 0.15)}


def _random_layer(rng, i: int) -> dict:
    r = rng.random()
    src = 1 if rng.random() < 0.8 else int(rng.integers(2, 5))
    if r < 0.40:
        kind = str(rng.choice(["full", "depthwise", "grouped", "pointwise"], p=[0.4, 0.3, 0.1, 0.2]))
        k = [1, 1] if kind == "pointwise" else [int(v) for v in rng.choice([1, 2, 3, 3, 5], 2)]
        if rng.random() < 0.6:
            k = [k[0], k[0]]
        dil = [1, 1] if rng.random() < 0.75 or kind == "pointwise" else [int(v) for v in rng.integers(1, 3, 2)]
        stride = [int(v) for v in rng.choice([1, 1, 2, 3], 2)]
        if rng.random() < 0.6:
            stride = [stride[0], stride[0]]
        pads = [int(rng.integers(0, (k[j % 2] - 1) * dil[j % 2] + 1)) for j in range(4)]
        auto = str(rng.choice(["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"], p=[0.8, 0.08, 0.06, 0.06]))
        return {"op": "conv", "src": src, "kind": kind, "out": int(rng.integers(1, 9)), "mult": int(rng.integers(1, 3)),
                "groups": int(rng.choice([2, 3, 4])), "k": k, "stride": stride, "dil": dil, "pads": pads,
                "auto_pad": auto if dil == [1, 1] else "NOTSET", "bias": bool(rng.random() < 0.7),
                "bn": bool(rng.random() < 0.2), "act": str(rng.choice(ACTS + ["", "", ""])),
                "alpha": float(rng.uniform(0.05, 0.3)), "lo": float(rng.uniform(-1, 0)), "hi": float(rng.uniform(0.2, 6)),
                "wseed": i}
    if r < 0.52:
        k = [int(v) for v in rng.integers(1, 4, 2)]
        return {"op": "pool", "src": src, "kind": str(rng.choice(["MaxPool", "AveragePool"])), "k": k,
                "stride": [int(v) for v in rng.integers(1, 4, 2)],
                "pads": [int(rng.integers(0, k[j % 2])) for j in range(4)],
                "ceil": int(rng.random() < 0.3), "count_include_pad": int(rng.random() < 0.3)}
    if r < 0.62:
        return {"op": "act", "src": src, "act": str(rng.choice(ACTS)), "alpha": float(rng.uniform(0.05, 0.3)),
                "lo": float(rng.uniform(-1, 0)), "hi": float(rng.uniform(0.2, 6))}
    if r < 0.72:
        return {"op": "const_binary", "src": src, "kind": str(rng.choice(["Add", "Mul", "Sub"])),
                "shape": str(rng.choice(["channel", "channel4", "width", "scalar", "full"])), "wseed": 100 + i}
    if r < 0.84:
        return {"op": "binary", "src": src, "kind": str(rng.choice(["Add", "Add", "Mul"])), "src2": int(rng.integers(1, 5))}
    if r < 0.90:
        return {"op": "concat", "src": src, "src2": int(rng.integers(1, 5)), "axis": int(rng.choice([1, 1, 2, 3]))}
    if r < 0.93:
        return {"op": "gap", "src": src}
    if r < 0.96:
        return {"op": "pad", "src": src, "pads": [int(v) for v in rng.integers(0, 3, 4)],
                "value": float(rng.choice([0.0, 0.5]))}
    return {"op": "reshape", "src": src, "how": str(rng.choice(["merge_ch", "merge_hw", "transpose"]))}


# --------------------------------------------------------------------------- spec → ONNX

class _Builder:
    def __init__(self, spec: dict):
        self.spec = spec
        self.nodes, self.inits, self.values = [], [], []   # values: (name, shape)
        self.k = 0

    def name(self, base: str) -> str:
        self.k += 1
        return f"{base}{self.k}"

    def const(self, arr: np.ndarray, base: str = "c") -> str:
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def node(self, op: str, inputs, out_shape, **attrs) -> str:
        out = self.name(op.lower() + "_")
        self.nodes.append(helper.make_node(op, list(inputs), [out], name=out, **attrs))
        self.values.append((out, tuple(out_shape)))
        return out

    def pick(self, src: int):
        src = max(1, min(int(src), len(self.values)))
        return self.values[-src]


def _rng(spec, layer) -> np.random.Generator:
    return np.random.default_rng([spec["seed"], int(layer.get("wseed", 0)) + 17])


def _conv_out(n, k, s, d, p0, p1):
    return (n + p0 + p1 - ((k - 1) * d + 1)) // s + 1


def _same_pads(size, k, s, d, upper):
    total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
    return (total // 2, total - total // 2) if upper else (total - total // 2, total // 2)


def _act(b: _Builder, x: str, shape, layer: dict) -> str:
    a = layer.get("act") or ""
    if not a:
        return x
    if a == "LeakyRelu":
        return b.node(a, [x], shape, alpha=float(layer["alpha"]))
    if a == "Clip":
        return b.node(a, [x, b.const(np.array(layer["lo"], np.float32)), b.const(np.array(layer["hi"], np.float32))],
                      shape)
    if a == "HardSigmoid":
        return b.node(a, [x], shape, alpha=0.2, beta=0.5)
    return b.node(a, [x], shape)


def _layer(b: _Builder, layer: dict) -> None:
    """Append ``layer`` to the graph, or nothing when it does not fit the values built so far."""
    op = layer["op"]
    x, shape = b.pick(layer.get("src", 1))
    rank4 = len(shape) == 4
    rng = _rng(b.spec, layer)
    if op in NEW_OPS:
        build_new_layer(b, layer, x, shape, rng)
    if op == "conv" and rank4:
        n, c, h, w = shape
        kind = layer["kind"]
        if kind == "depthwise":
            group, out = c, c * int(layer["mult"])
        elif kind == "grouped":
            group = int(layer["groups"])
            if c % group or c == group:
                return
            out = group * max(1, int(layer["out"]) // group)
        else:
            group, out = 1, int(layer["out"])
        kh, kw = layer["k"]
        sh, sw = layer["stride"]
        dh, dw = layer["dil"]
        auto = layer.get("auto_pad", "NOTSET")
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            (t, bo), (le, r) = (_same_pads(h, kh, sh, dh, auto == "SAME_UPPER"),
                                _same_pads(w, kw, sw, dw, auto == "SAME_UPPER"))
        elif auto == "VALID":
            t = le = bo = r = 0
        else:
            t, le, bo, r = layer["pads"]
        oh, ow = _conv_out(h, kh, sh, dh, t, bo), _conv_out(w, kw, sw, dw, le, r)
        if oh < 1 or ow < 1:
            return
        fan_in = (c // group) * kh * kw
        wt = rng.normal(0, np.sqrt(2.0 / fan_in), (out, c // group, kh, kw)).astype(np.float32)
        ins = [x, b.const(wt, "w")]
        if layer["bias"]:
            ins.append(b.const(rng.normal(0, 0.2, out).astype(np.float32), "b"))
        attrs = dict(kernel_shape=[kh, kw], strides=[sh, sw], dilations=[dh, dw], group=group)
        attrs.update(auto_pad=auto) if auto != "NOTSET" else attrs.update(pads=[t, le, bo, r])
        y = b.node("Conv", ins, (n, out, oh, ow), **attrs)
        if layer.get("bn"):
            ps = [rng.uniform(0.5, 1.5, out), rng.normal(0, 0.1, out), rng.normal(0, 0.1, out), rng.uniform(0.5, 1.5, out)]
            y = b.node("BatchNormalization", [y] + [b.const(p.astype(np.float32), "bn") for p in ps], (n, out, oh, ow),
                       epsilon=1e-3)
        _act(b, y, (n, out, oh, ow), layer)
    elif op == "pool" and rank4:
        n, c, h, w = shape
        kh, kw = layer["k"]
        sh, sw = layer["stride"]
        t, le, bo, r = layer["pads"]
        if max(t, bo) >= kh or max(le, r) >= kw:
            return
        ceil = int(layer["ceil"])

        def osz(size, k, s, p0, p1):
            o = (size + p0 + p1 - k + (s - 1 if ceil else 0)) // s + 1
            if ceil and (o - 1) * s >= size + p0:   # a last window starting in the end padding: onnx's shape
                return 0                            # inference keeps it, ORT's kernel drops it; skip the layer
            return o
        oh, ow = osz(h, kh, sh, t, bo), osz(w, kw, sw, le, r)
        if oh < 1 or ow < 1:
            return
        attrs = dict(kernel_shape=[kh, kw], strides=[sh, sw], pads=[t, le, bo, r], ceil_mode=ceil)
        if layer["kind"] == "AveragePool":
            attrs["count_include_pad"] = int(layer["count_include_pad"])
        b.node(layer["kind"], [x], (n, c, oh, ow), **attrs)
    elif op == "act":
        _act(b, x, shape, layer)
    elif op == "const_binary" and rank4:
        n, c, h, w = shape
        cshape = {"channel": (c, 1, 1), "channel4": (1, c, 1, 1), "width": (w,), "scalar": (),
                  "full": (1, c, h, w)}[layer["shape"]]
        v = rng.normal(0, 1, cshape).astype(np.float32)
        if layer["kind"] == "Mul":
            v = (np.abs(v) + 0.5).astype(np.float32)
        b.node(layer["kind"], [x, b.const(v, "k")], shape)
    elif op == "binary":
        y, yshape = b.pick(layer["src2"])
        try:
            out = np.broadcast_shapes(shape, yshape)
        except ValueError:
            return
        if len(shape) != len(yshape) or (out != shape and out != yshape):
            return
        b.node(layer["kind"], [x, y], out)
    elif op == "concat":
        y, yshape = b.pick(layer["src2"])
        axis = int(layer.get("axis", 1))
        if len(shape) != len(yshape) or axis >= len(shape) or \
                any(a != bb for j, (a, bb) in enumerate(zip(shape, yshape)) if j != axis):
            return
        out = list(shape)
        out[axis] += yshape[axis]
        b.node("Concat", [x, y], out, axis=axis)
    elif op == "gap" and rank4:
        b.node("GlobalAveragePool", [x], shape[:2] + (1, 1))
    elif op == "pad" and rank4:
        n, c, h, w = shape
        t, le, bo, r = layer["pads"]
        pads = np.array([0, 0, t, le, 0, 0, bo, r], np.int64)
        b.node("Pad", [x, b.const(pads, "p"), b.const(np.array(layer["value"], np.float32), "pv")],
               (n, c, h + t + bo, w + le + r), mode="constant")
    elif op == "reshape" and rank4:
        n, c, h, w = shape
        if layer["how"] == "transpose":
            b.node("Transpose", [x], (n, c, w, h), perm=[0, 1, 3, 2])
            return
        new = (n, c * h, w, 1) if layer["how"] == "merge_ch" else (n, c, h * w, 1)
        b.node("Reshape", [x, b.const(np.array(new, np.int64), "s")], new)
    elif op == "head":
        if rank4 and layer.get("gap"):
            x = b.node("GlobalAveragePool", [x], shape[:2] + (1, 1))
            shape = shape[:2] + (1, 1)
        if len(shape) != 2:
            x = b.node("Flatten", [x], (shape[0], int(np.prod(shape[1:]))), axis=1)
            shape = b.values[-1][1]
        _dense(b, x, shape, layer, rng)
        if layer.get("softmax"):
            b.node("Softmax", [b.values[-1][0]], b.values[-1][1], axis=-1)
    elif op == "gemm" and len(shape) == 2:
        _dense(b, x, shape, layer, rng)
    elif op == "softmax":
        b.node("Softmax", [x], shape, axis=-1)


def _dense(b: _Builder, x, shape, layer, rng):
    m, k = shape
    f = int(layer["features"])
    wt = rng.normal(0, np.sqrt(1.0 / k), (k, f)).astype(np.float32)
    if layer.get("matmul"):
        y = b.node("MatMul", [x, b.const(wt, "w")], (m, f))
        if layer.get("bias"):
            b.node("Add", [y, b.const(rng.normal(0, 0.2, f).astype(np.float32), "b")], (m, f))
        return
    trans = int(layer.get("transB", 0))
    ins = [x, b.const(np.ascontiguousarray(wt.T) if trans else wt, "w")]
    if layer.get("bias", True):
        ins.append(b.const(rng.normal(0, 0.2, f).astype(np.float32), "b"))
    b.node("Gemm", ins, (m, f), transB=trans, alpha=float(layer.get("alpha", 1.0)))


def build_model(spec: dict) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The float ONNX model of ``spec`` and its seeded test input."""
    b = _Builder(spec)
    b.values.append(("input", tuple(spec["input"])))
    for layer in spec["layers"]:
        _layer(b, layer)
    outs = [b.values[-1]]
    if len(b.values) == 1:                     # nothing fitted: one Relu keeps the graph non-empty
        outs = [(b.node("Relu", ["input"], spec["input"]), tuple(spec["input"]))]
    elif spec.get("extra_output") and len(b.values) > 2:
        outs.append(b.values[len(b.values) // 2])
    graph = helper.make_graph(b.nodes, f"fuzz{spec['seed']}",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, spec["input"])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outs],
                              initializer=b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    x = np.random.default_rng([spec["seed"], 99]).standard_normal(spec["input"]).astype(np.float32)
    return model, {"input": x}


def quantize_qdq(model: onnx.ModelProto, spec: dict) -> onnx.ModelProto:
    """QDQ int8 (activations and weights) with onnxruntime.quantization.quantize_static, calibrated
    on 8 seeded inputs."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng([spec["seed"], 7])
            self.data = iter([{"input": rng.standard_normal(spec["input"]).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.data, None)

    with tempfile.TemporaryDirectory(prefix="tf_fuzzq_") as d:
        src, dst = Path(d) / "f.onnx", Path(d) / "q.onnx"
        onnx.save(model, src)
        quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                        per_channel=bool(spec.get("per_channel")))
        return onnx.load(str(dst))


def spec_model(spec: dict) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The ONNX model of ``spec`` (float; QDQ int8 by onnxruntime's quantizer, or with hand-drawn
    quantization parameters when ``spec["qdq"] == "hand"``, tests/fuzz/handqdq.py) and its input."""
    model, feeds = build_model(spec)
    if not spec["quant"]:
        return model, feeds
    if spec.get("qdq") == "hand":
        from tests.fuzz.handqdq import hand_qdq
        return hand_qdq(model, feeds, spec["seed"]), feeds
    return quantize_qdq(model, spec), feeds


# --------------------------------------------------------------------------- one differential run

@dataclass
class Outcome:
    """``status``: ok | rejected (a clear TinyfuseError) | crash (any other exception, gcc error,
    nonzero exit) | mismatch (float vs ORT) | mismatch_ref (int8 C vs numpy reference) |
    mismatch_real (an int8 kernel more than 1 LSB from real arithmetic, or without real facts) |
    mismatch_ort (int8 more than LSB_LIMIT from ORT)."""

    status: str
    detail: str = ""
    lsb: int | None = None
    kernels: int = 0
    ops: list = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status not in ("ok", "rejected")


def ort_outputs(model: onnx.ModelProto, feeds) -> list[np.ndarray]:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)


def output_scales(model: onnx.ModelProto) -> list[float | None]:
    """The scale of the DequantizeLinear producing each graph output (None for a float op)."""
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    prod = {o: n for n in model.graph.node for o in n.output}
    out = []
    for o in model.graph.output:
        n = prod.get(o.name)
        out.append(float(inits[n.input[1]].reshape(-1)[0]) if n is not None and n.op_type == "DequantizeLinear"
                   and n.input[1] in inits else None)
    return out


def _lsb_gain(result) -> float:
    """The largest factor by which one int8 kernel turns a 1-LSB change of an input into output LSBs:
    its requantize's real multiplier (s_in·s_w/s_out, or s_in/s_out), times 127 (the largest |W_q|) when
    a weighted op feeds it. Two implementations each within 1 LSB of real arithmetic per kernel can end
    that many output LSBs apart after such a kernel (seed 7177: s_in·|w|/s_out = 24.5, 25 LSB from
    onnxruntime)."""
    from tinyfuse.ir import Call, Function, post_order
    gain = 1.0
    for step in result.steps:
        fn = step.call.op
        for node in post_order(fn.body) if isinstance(fn, Function) else ():
            real = node.attrs.get("real_multiplier") if isinstance(node, Call) else None
            if not real:
                continue
            src = node.args[0]
            while isinstance(src, Call) and src.op == "add":        # the bias add between conv and requantize
                src = src.args[0]
            weighted = isinstance(src, Call) and any(k in str(src.op) for k in ("conv", "matmul", "dense"))
            gain = max(gain, float(np.max(np.abs(real))) * (127.0 if weighted else 1.0))
    return gain


def check_model(model: onnx.ModelProto, feeds: dict, quant: bool, workdir: Path | None = None,
                lsb_limit: int | None = LSB_LIMIT) -> Outcome:
    """The whole differential check of one model (see Outcome). ``lsb_limit`` None: the int8 LSB
    difference to onnxruntime is recorded, not judged (hand-drawn QDQ: multipliers > 1 amplify the
    1-LSB steps the real-arithmetic oracle allows per kernel, so only that oracle judges)."""
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import TinyfuseError
    from tinyfuse.harness import build_host, run_host
    from tinyfuse.ir.interpreter import run_module

    try:
        refs = ort_outputs(model, feeds)
    except Exception as e:  # noqa: BLE001 - the generator made something ORT refuses: not our bug
        return Outcome("rejected", f"onnxruntime: {str(e).splitlines()[0][:200]}")
    own = workdir is None
    work = Path(tempfile.mkdtemp(prefix="tf_fuzz_")) if own else Path(workdir)
    try:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = compile_model(model, name="fuzz")
            float_fallback = any("runs in float" in str(w.message) for w in caught)
        except TinyfuseError as e:
            return Outcome("rejected", str(e))
        except Exception as e:  # noqa: BLE001
            return Outcome("crash", f"compile: {type(e).__name__}: {_last_frame(e)}")
        inputs = [feeds[t.name] for t in result.inputs]
        info = dict(kernels=len(result.steps), ops=[k.ops for k in result.kernels])
        try:
            outs = run_host(build_host(result, work, cflags=CFLAGS), result, inputs)
        except Exception as e:  # noqa: BLE001 - gcc rejecting generated C, or the model crashing
            return Outcome("crash", f"build/run: {type(e).__name__}: {str(e)[:600]}", **info)
        if not quant:
            for i, (o, r) in enumerate(zip(outs, refs)):
                scale = max(float(np.max(np.abs(r))), 1e-30)
                err = float(np.max(np.abs(o.astype(np.float64) - r.astype(np.float64))))
                if not err <= FLOAT_REL * scale:
                    return Outcome("mismatch", f"output {i}: max|C - ORT| = {err:.3g} > {FLOAT_REL} x {scale:.3g}",
                                   **info)
            return Outcome("ok", **info)
        try:
            interp = run_module(result.module, inputs)
        except Exception as e:  # noqa: BLE001
            return Outcome("crash", f"interpreter: {type(e).__name__}: {_last_frame(e)}", **info)
        scales = output_scales(model)
        for i, (o, r, s) in enumerate(zip(outs, interp, scales)):
            r = np.asarray(r).astype(o.dtype)
            if s is None:   # a float op after the last DequantizeLinear (one ORT leaves unquantized): float rules
                scale = max(float(np.max(np.abs(r))), 1e-30)
                same = float(np.max(np.abs(o.astype(np.float64) - r))) <= FLOAT_REL * scale
            elif float_fallback:   # an op legalize_qdq left in float between int8 ops: C and numpy float
                same = float(np.max(np.abs(o.astype(np.float64) - r))) <= 1.5 * s   # may round 1 LSB apart
            else:
                same = np.array_equal(o, r)
            if not same:
                return Outcome("mismatch_ref", f"output {i}: {int(np.sum(o != r))}/{o.size} C outputs differ from "
                               f"the numpy reference", **info)
        try:
            bad = _real_oracle(result, inputs, work)
        except Exception as e:  # noqa: BLE001 - the oracle or the trace build refusing the model
            return Outcome("crash", f"real oracle: {type(e).__name__}: {_last_frame(e)}", **info)
        if bad:
            return Outcome("mismatch_real", bad, **info)
        lsb = 0
        for o, r, s in zip(outs, refs, scales):
            if s:
                lsb = max(lsb, int(np.max(np.rint(np.abs(o.astype(np.float64) - r.astype(np.float64)) / s))))
        if lsb_limit is not None and lsb > lsb_limit:
            gain = _lsb_gain(result)
            if gain <= lsb_limit:
                return Outcome("mismatch_ort", f"{lsb} LSB from onnxruntime (limit {lsb_limit}; largest per-LSB gain "
                               f"{gain:.2f})", lsb=lsb, **info)
            return Outcome("ok", f"{lsb} LSB from onnxruntime: a kernel amplifies one input LSB {gain:.1f}x "
                           "(recorded, not judged: every kernel is within 1 LSB of real arithmetic)", lsb=lsb, **info)
        return Outcome("ok", lsb=lsb, **info)
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


def _real_oracle(result, inputs, work: Path) -> str:
    """The per-kernel real-arithmetic oracle (harness/real_oracle.py) on the C run's own kernel
    inputs, ONNX rounding (half to even): '' when every int8 kernel is within 1 LSB, else why not."""
    from tinyfuse.harness.real_oracle import check_kernels, report_lines
    report = check_kernels(result, inputs, work / "trace", "half_even")
    return "" if report.holds else "; ".join(report_lines(report))


def check_spec(spec: dict, workdir: Path | None = None) -> Outcome:
    try:
        model, feeds = spec_model(spec)
    except Exception as e:  # noqa: BLE001 - a generator or quantizer problem, reported as such
        return Outcome("rejected", f"generator/quantizer: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    return check_model(model, feeds, spec["quant"], workdir, None if spec.get("qdq") == "hand" else LSB_LIMIT)


def _last_frame(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
    return f"{str(e).splitlines()[0][:300] if str(e) else ''}{where}"


# --------------------------------------------------------------------------- minimisation

def minimise(spec: dict, still_fails=None, budget: int = 150) -> dict:
    """A smaller spec that fails with the same status: drop layers, the extra output, shrink the
    input and simplify layer attributes, while ``still_fails(spec)`` holds (default: same status
    as ``spec``). At most ``budget`` checks."""
    if still_fails is None:
        status = check_spec(spec).status
        still_fails = lambda s: check_spec(s).status == status  # noqa: E731
    best = copy.deepcopy(spec)
    tries = 0

    def attempt(candidate) -> bool:
        nonlocal best, tries
        if tries >= budget or candidate == best:
            return False
        tries += 1
        if still_fails(candidate):
            best = candidate
            return True
        return False

    changed = True
    while changed and tries < budget:
        changed = False
        for i in reversed(range(len(best["layers"]))):
            if i < len(best["layers"]):
                c = copy.deepcopy(best)
                del c["layers"][i]
                changed |= attempt(c)
        if best.get("extra_output"):
            changed |= attempt({**copy.deepcopy(best), "extra_output": False})
        for j, d in enumerate(best["input"]):
            for smaller in sorted({1, d // 2, d - 1}):
                if 1 <= smaller < d:
                    c = copy.deepcopy(best)
                    c["input"][j] = smaller
                    if attempt(c):
                        changed = True
                        break
        for i, layer in enumerate(best["layers"]):
            for key, simple in (("act", ""), ("bn", False), ("bias", False), ("stride", [1, 1]), ("dil", [1, 1]),
                                ("pads", [0, 0, 0, 0]), ("auto_pad", "NOTSET"), ("ceil", 0), ("softmax", False),
                                ("count_include_pad", 0), ("src", 1), ("out", 1), ("features", 1), ("mult", 1)):
                if key in layer and layer[key] != simple:
                    c = copy.deepcopy(best)
                    c["layers"][i][key] = simple
                    changed |= attempt(c)
        if best.get("quant") and best.get("per_channel"):
            changed |= attempt({**copy.deepcopy(best), "per_channel": False})
    return best


# --------------------------------------------------------------------------- campaign

def quiet() -> None:
    """Silence onnxruntime's and its quantizer's advice and legalize_qdq's float-fallback warnings
    (the fallback is handled in check_model); keeps a long campaign's progress bar readable."""
    import logging

    import onnxruntime
    onnxruntime.set_default_logger_severity(3)
    logging.getLogger().setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message="legalize_qdq")


def campaign(seeds, quant=None, minimise_failures=True, progress=True, log=None) -> dict:
    """Run every seed; returns counts, the failures (with minimised specs) and the int8 LSB histogram."""
    counts: dict[str, int] = {}
    lsb_hist: dict[int, int] = {}
    hand_hist: dict[int, int] = {}    # hand-drawn QDQ graphs' LSB to onnxruntime (recorded, not judged)
    failures = []
    quiet()
    bar = None
    if progress:
        from tqdm import tqdm          # a tinyfuse dependency
        bar = tqdm(total=len(seeds), unit="graph", dynamic_ncols=True)
    work = Path(tempfile.mkdtemp(prefix="tf_fuzz_"))
    t0 = time.time()
    try:
        for k, seed in enumerate(seeds):
            spec = random_spec(seed, quant)
            out = check_spec(spec, work)
            counts[out.status] = counts.get(out.status, 0) + 1
            if out.lsb is not None:
                hist = hand_hist if spec.get("qdq") == "hand" else lsb_hist
                hist[out.lsb] = hist.get(out.lsb, 0) + 1
            if out.failed:
                entry = {"seed": seed, "status": out.status, "detail": out.detail, "spec": spec}
                if minimise_failures:
                    entry["minimised"] = minimise(spec)
                    entry["minimised_outcome"] = check_spec(entry["minimised"]).detail
                failures.append(entry)
                if log:
                    with open(log, "a") as f:
                        f.write(json.dumps(entry) + "\n")
            if bar is not None:
                bar.update(1)
                bar.set_postfix({s: n for s, n in sorted(counts.items())})
    finally:
        if bar is not None:
            bar.close()
        shutil.rmtree(work, ignore_errors=True)
    return {"counts": counts, "failures": failures, "lsb_hist": dict(sorted(lsb_hist.items())),
            "lsb_hist_hand": dict(sorted(hand_hist.items())),
            "seconds": time.time() - t0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="differential fuzzing of tinyfuse against onnxruntime")
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1000, help="first seed (seeds are consecutive)")
    ap.add_argument("--quant", choices=["mixed", "float", "int8"], default="mixed")
    ap.add_argument("--no-minimise", action="store_true")
    ap.add_argument("--log", default=str(ROOT / "build" / "fuzz" / "failures.jsonl"),
                    help="append each failure (spec, minimised spec) as a JSON line")
    ap.add_argument("--show", action="store_true", help="print each spec and its outcome")
    a = ap.parse_args(argv)
    quant = {"mixed": None, "float": False, "int8": True}[a.quant]
    seeds = list(range(a.seed, a.seed + a.count))
    quiet()
    if a.show:
        for s in seeds:
            spec = random_spec(s, quant)
            print(json.dumps(spec))
            print(check_spec(spec))
        return 0
    Path(a.log).parent.mkdir(parents=True, exist_ok=True)
    r = campaign(seeds, quant, minimise_failures=not a.no_minimise, log=a.log)
    print(f"fuzz: {a.count} graphs (seeds {a.seed}..{a.seed + a.count - 1}) in {r['seconds']:.0f}s: "
          f"{dict(sorted(r['counts'].items()))}")
    print(f"int8 LSB difference to onnxruntime (LSB: graphs): {r['lsb_hist']}")
    print(f"  hand-drawn QDQ (recorded, not judged): {r['lsb_hist_hand']}")
    for f in r["failures"]:
        print(f"FAIL seed {f['seed']} {f['status']}: {f['detail'][:300]}")
        if "minimised" in f:
            print(f"  minimised: {json.dumps(f['minimised'])}")
    n_fail = len(r["failures"])
    print(f"fuzz: {a.count - n_fail} passed, {n_fail} failed")
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
