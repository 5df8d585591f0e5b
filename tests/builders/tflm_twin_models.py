"""Small int8 (and float32 at the edges) .tflite graphs of one or two operators for the TFLM twin
fuzzer (tests/fuzz/tflm_twin.py), built with tflite-micro's model editor through the tensor helpers of
../shared/tools/tflm_oneop.py (``_act``, ``_const``, ``_per_axis``, ``_bias``, ``_ACT``, ``_PAD``), as
tflm_misc.py and tflite_convt.py build the ops tflm_oneop lacks. TFLM runs the bytes (``tflm_oneop().run``)
as the exact oracle; tinyfuse compiles the same bytes.

    net = Net()
    x = net.input((1, 5, 5, 3), (0.05, -3))
    y = net.op("MAX_POOL_2D", [x], net.act((1, 2, 2, 3), (0.05, -3)), "Pool2DOptions", filterHeight=2, ...)
    model = net.build([y])          # bytes of a .tflite flatbuffer

Conventions are tflm_oneop's: q = (scale, zero_point), real = scale * (q - zero_point); weights int8
symmetric (zero point 0) with per-channel scales; int32 bias with scale s_x * s_w[c].
"""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_cases import tflm_oneop


class Net:
    """A graph under construction: the operators in execution order, the graph inputs in order."""

    def __init__(self):
        self.o = tflm_oneop()
        self.S = self.o.S
        self.ops: list = []
        self.inputs: list = []
        self._n = 0

    def _name(self, base: str) -> str:
        self._n += 1
        return f"{base}{self._n}"

    def input(self, shape, q=None, dtype: str | None = None):
        """A graph input: quantized int8 (or ``dtype`` int16) with (scale, zero point) ``q``, else of
        ``dtype`` (default float32) unquantized."""
        t = self.act(shape, q, "x", dtype)
        self.inputs.append(t)
        return t

    def act(self, shape, q=None, name: str = "t", dtype: str | None = None):
        """A non-constant tensor: quantized with ``q`` (int8, or ``dtype`` int16 / int32), else of ``dtype``
        (default float32; int8, int32, int64, bool) without quantization."""
        if q is None:
            return self.o.me.Tensor(shape=tuple(int(d) for d in shape), dtype=self.tensor_type(dtype or "float32"),
                                    name=self._name(name))
        if dtype not in (None, "int8"):
            return self.o.me.Tensor(shape=tuple(int(d) for d in shape), dtype=getattr(self.S.TensorType, dtype.upper()),
                                    name=self._name(name), quantization=self.o.me.Quantization(float(q[0]), int(q[1])))
        return self.o._act(shape, q, self._name(name))

    def tensor_type(self, dtype) -> int:
        """The schema TensorType of a numpy dtype name."""
        return getattr(self.S.TensorType, {"float32": "FLOAT32", "int8": "INT8", "int32": "INT32", "int64": "INT64",
                                           "int16": "INT16", "bool": "BOOL"}[str(np.dtype(dtype))])

    def const(self, array, q=None):
        """A constant int8/int32/int64/float32/bool tensor; q: (scale, zero point), a Quantization, or None."""
        array = np.ascontiguousarray(array)
        dtype = self.tensor_type(array.dtype)
        if isinstance(q, tuple):
            q = self.o.me.Quantization(float(q[0]), int(q[1]))
        return self.o.me.Tensor(shape=array.shape, dtype=dtype, data=array, name=self._name("c"), quantization=q)

    def weights(self, w: np.ndarray, scales, axis: int):
        """int8 weights with per-channel scales on ``axis`` (one scale: per tensor)."""
        scales = np.atleast_1d(np.asarray(scales, np.float32))
        if scales.size == 1:
            return self.const(w, self.o.me.Quantization(float(scales[0]), 0))
        return self.const(w, self.o._per_axis(scales, scales.size, axis))

    def bias(self, b: np.ndarray, in_scale: float, w_scales):
        """int32 bias [n] (int64 when ``b`` is: 16x8), scale in_scale * w_scale[c] (float32 product, as
        TFLite), zero point 0."""
        if np.asarray(b).dtype == np.int64:
            scales = np.float32(in_scale) * np.broadcast_to(np.asarray(w_scales, np.float32), (b.size,))
            return self.const(np.asarray(b), self.o._per_axis(scales, b.size, 0))
        return self.o._bias(np.asarray(b, np.int32), in_scale, w_scales, b.size)

    def op(self, opcode: str, inputs, outputs, options: str | None = None, **fields):
        """Append one operator; ``outputs`` one tensor or a list. Returns ``outputs``."""
        outs = outputs if isinstance(outputs, list) else [outputs]
        op = self.o.me.Operator(opcode=getattr(self.S.BuiltinOperator, opcode), inputs=list(inputs), outputs=outs)
        if options is not None:
            op._fb.builtinOptionsType = getattr(self.S.BuiltinOptions, options)
            op._fb.builtinOptions = getattr(self.S, options + "T")()
            for key, value in fields.items():
                setattr(op._fb.builtinOptions, key, value)
        self.ops.append(op)
        return outputs

    def build(self, outputs) -> bytes:
        """The .tflite bytes; graph outputs ``outputs`` (tensors), inputs as added with ``input``."""
        tensors, seen = [], set()
        for op in self.ops:
            for t in [*op.inputs, *op.outputs]:
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    tensors.append(t)
        model = self.o.me.Model(description="tinyfuse tflm_twin")
        model.add_subgraph(tensors=tensors, operators=self.ops, outputs=list(outputs), inputs=self.inputs)
        return bytes(model.build())


# ----------------------------------------------------------------------------- layers used by the draws
ACT = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}          # schema ActivationFunctionType
PAD = {"SAME": 0, "VALID": 1}                     # schema Padding


def out_size(n: int, k: int, s: int, d: int, padding: str) -> int:
    """TFLite ComputeOutSize of a window op (0 when a VALID window does not fit)."""
    eff = (k - 1) * d + 1
    return -(-n // s) if padding == "SAME" else max((n - eff + s) // s, 0)


def conv(net: Net, x, x_shape, in_q, w, b, w_scales, out_q, stride, padding, dilation, act, depth_mult=0,
         dtype: str = "int8"):
    """CONV_2D (w OHWI, scales on dim 0) or, with depth_mult > 0, DEPTHWISE_CONV_2D (w 1HWC, dim 3); the
    output of ``dtype`` (int16: 16x8, with an int64 ``b``). Returns (output tensor, output shape)."""
    kh, kw = w.shape[1:3]
    oc = w.shape[3] if depth_mult else w.shape[0]
    oh, ow = (out_size(n, k, s, d, padding) for n, k, s, d in zip(x_shape[1:3], (kh, kw), stride, dilation))
    shape = (x_shape[0], oh, ow, oc)
    ins = [x, net.weights(w, w_scales, 3 if depth_mult else 0),
           None if b is None else net.bias(b, in_q[0], np.broadcast_to(np.asarray(w_scales, np.float32), (oc,)))]
    fields = dict(padding=PAD[padding], strideH=int(stride[0]), strideW=int(stride[1]),
                  dilationHFactor=int(dilation[0]), dilationWFactor=int(dilation[1]), fusedActivationFunction=ACT[act])
    if depth_mult:
        y = net.op("DEPTHWISE_CONV_2D", ins, net.act(shape, out_q, dtype=dtype), "DepthwiseConv2DOptions",
                   depthMultiplier=int(depth_mult), **fields)
    else:
        y = net.op("CONV_2D", ins, net.act(shape, out_q, dtype=dtype), "Conv2DOptions", **fields)
    return y, shape


def pool(net: Net, kind: str, x, x_shape, q, filt, stride, padding, act, dtype: str = "int8"):
    """MAX_POOL_2D / AVERAGE_POOL_2D with one q in and out (TFLM pools do not rescale)."""
    oh, ow = (out_size(n, k, s, 1, padding) for n, k, s in zip(x_shape[1:3], filt, stride))
    shape = (x_shape[0], oh, ow, x_shape[3])
    y = net.op(kind, [x], net.act(shape, q, dtype=dtype), "Pool2DOptions", padding=PAD[padding], strideH=int(stride[0]),
               strideW=int(stride[1]), filterHeight=int(filt[0]), filterWidth=int(filt[1]),
               fusedActivationFunction=ACT[act])
    return y, shape


def binary(net: Net, opcode: str, a, b, out_shape, out_q, act, dtype: str = "int8"):
    """ADD / SUB / MUL with numpy broadcasting and a fused activation."""
    options = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions"}[opcode]
    return net.op(opcode, [a, b], net.act(out_shape, out_q, dtype=dtype), options, fusedActivationFunction=ACT[act])
