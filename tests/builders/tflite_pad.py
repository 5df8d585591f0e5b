"""Small int8 .tflite graphs in the form the TFLite converter gives PyTorch models (issue 14, padfold):
an NCHW input read through a TRANSPOSE to NHWC, and an explicit PAD / PADV2 before every strided or 3x3
conv (the conv itself VALID). Built with the tflite-micro model editor (as tflm_misc does), so TFLM runs
them as the exact oracle; weights, biases, scales and zero points are seeded random numbers."""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_cases import tflm_oneop
from tests.builders.tflm_misc import act, const

_RELU6 = 3                                   # tflite ActivationFunctionType.RELU6


class Graph:
    """A growing int8 subgraph: ``x`` the current activation tensor, ``ops`` the operators so far."""

    def __init__(self, x_shape, q, seed: int, nchw: bool):
        oneop = tflm_oneop()
        self.me, self.S = oneop.me, oneop.S
        self.rng = np.random.default_rng(seed)
        self.inp = act(x_shape, q, "input")
        self.x, self.q, self.ops, self.tensors = self.inp, q, [], [self.inp]
        if nchw:
            n, c, h, w = x_shape
            self.add("TRANSPOSE", [const(np.array([0, 2, 3, 1], np.int32), "perm")], (n, h, w, c), q,
                     "TransposeOptions")

    def add(self, opcode, extra, out_shape, out_q, options=None, **fields):
        """Append ``opcode`` reading the current activation and the constant tensors ``extra``."""
        me, S = self.me, self.S
        y = act(out_shape, out_q, f"t{len(self.ops)}")
        op = me.Operator(opcode=getattr(S.BuiltinOperator, opcode), inputs=[self.x, *extra], outputs=[y])
        if options is not None:
            op._fb.builtinOptionsType = getattr(S.BuiltinOptions, options)
            op._fb.builtinOptions = getattr(S, options + "T")()
            for key, value in fields.items():
                setattr(op._fb.builtinOptions, key, value)
        self.ops.append(op)
        self.tensors += [*extra, y]
        self.x, self.q = y, out_q
        return self

    def pad(self, pads_hw, value=None):
        """PAD (with the zero point) or PADV2 (with the int8 ``value``; "zp": the zero point) of H and W."""
        n, h, w, c = self.x.shape
        value = self.q[1] if value == "zp" else value
        (t, b), (l, r) = pads_hw
        paddings = const(np.array([[0, 0], [t, b], [l, r], [0, 0]], np.int32), "paddings")
        extra = [paddings] if value is None else [paddings, const(np.array([value], np.int8), "value", self.q)]
        return self.add("PAD" if value is None else "PADV2", extra, (n, h + t + b, w + l + r, c), self.q,
                        "PadOptions" if value is None else "PadV2Options")

    def conv(self, out_ch, k, stride=1, depthwise=False, out_q=None):
        """CONV_2D or DEPTHWISE_CONV_2D, VALID, fused RELU6, per-channel weights."""
        n, h, w, c = self.x.shape
        oc = c if depthwise else out_ch
        shape = (1, k, k, oc) if depthwise else (oc, k, k, c)
        wq = self.rng.uniform(0.004, 0.02, oc).astype(np.float32)
        me = self.me
        wt = const(self.rng.integers(-127, 128, shape, dtype=np.int8), "w")
        wt.quantization = me.Quantization([float(s) for s in wq], [0] * oc, axis=3 if depthwise else 0)
        bias = const(self.rng.integers(-300, 300, oc, dtype=np.int32), "b")
        bias.quantization = me.Quantization([float(np.float32(self.q[0]) * s) for s in wq], [0] * oc, axis=0)
        oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
        out_q = out_q or (float(self.rng.uniform(0.02, 0.05)), int(self.rng.integers(-128, -100)))
        fields = dict(padding=self.S.Padding.VALID, strideH=stride, strideW=stride, fusedActivationFunction=_RELU6)
        if depthwise:
            return self.add("DEPTHWISE_CONV_2D", [wt, bias], (n, oh, ow, oc), out_q, "DepthwiseConv2DOptions",
                            depthMultiplier=1, **fields)
        return self.add("CONV_2D", [wt, bias], (n, oh, ow, oc), out_q, "Conv2DOptions", **fields)

    def max_pool(self, k, stride):
        """MAX_POOL_2D, VALID, the same quantization in and out."""
        n, h, w, c = self.x.shape
        return self.add("MAX_POOL_2D", [], (n, (h - k) // stride + 1, (w - k) // stride + 1, c), self.q,
                        "Pool2DOptions", padding=self.S.Padding.VALID, strideH=stride, strideW=stride,
                        filterHeight=k, filterWidth=k)

    def build(self) -> bytes:
        m = self.me.Model(description="tinyfuse tflite_pad")
        m.add_subgraph(tensors=self.tensors, operators=self.ops, outputs=[self.x], inputs=[self.inp])
        return bytes(m.build())


def pytorch_style_block(seed: int = 0, hw: int = 12, c: int = 3, nchw: bool = True, padv2_value=None) -> bytes:
    """NCHW input → TRANSPOSE → PAD → 3x3/2 conv → 1x1 conv (expand) → PAD → 3x3/1 depthwise → PAD →
    3x3/2 depthwise → 1x1 conv: MobileNetV2's stem and a strided inverted residual as the TFLite
    converter writes them for a PyTorch model. ``padv2_value``: the middle pad is a PADV2 with that int8
    value ("zp": its zero point, which conv padding stands for; another value, which it cannot)."""
    g = Graph((1, c, hw, hw) if nchw else (1, hw, hw, c), (0.02, -3), seed, nchw)
    g.pad(((0, 1), (0, 1))).conv(8, 3, stride=2)
    g.conv(16, 1)
    g.pad(((1, 1), (1, 1)), padv2_value).conv(0, 3, depthwise=True)
    g.pad(((1, 1), (1, 1))).conv(0, 3, stride=2, depthwise=True)
    return g.conv(8, 1).build()


def padded_max_pool(seed: int = 0, value: int = -128) -> bytes:
    """NHWC input → 3x3/2 conv → PADV2(``value``) → 3x3/2 MAX_POOL_2D (ResNet's stem as PyTorch writes it:
    MaxPool2d(3, 2, padding=1), converted with an explicit pad of the lowest int8 value)."""
    g = Graph((1, 13, 13, 4), (0.03, 5), seed, nchw=False)
    g.conv(6, 3, stride=1)
    return g.pad(((1, 1), (1, 1)), value).max_pool(3, 2).build()
