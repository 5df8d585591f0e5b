"""ONNX QDQ (opset 13) twins of the one-op int8 TFLite models in ../shared/tools/tflm_oneop.py.

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

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

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
