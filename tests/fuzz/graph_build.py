"""Graph fuzzer specs (graph_spec.py) → ONNX: the float model and its seeded input, and its QDQ int8
form (onnxruntime's calibrating quantizer, or hand-drawn quantization: handqdq.py). A layer whose
operands do not fit the values built so far is skipped."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.fuzz.newops import NEW_OPS, build_new_layer

OPSET = 14            # HardSwish-14


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
