"""One-op .tflite models of the transposed convolutions, built with tflite-micro's model editor (as
../shared/tools/tflm_oneop.py builds its int8 ops, whose tensor helpers these reuse; tflm_oneop has no
TRANSPOSE_CONV builder):

- ``transpose_conv_int8``: TRANSPOSE_CONV, x NHWC int8, w int8 OHWI per-channel (dim 0), optional
  int32 bias (scale s_x·s_w[c]), output_shape given; run it with TFLite Micro;
- ``convt_bias_custom``: MediaPipe's CUSTOM Convolution2DTransposeBias (float32, custom options
  TfLiteTransposeConvParams: padding, stride_w, stride_h as int32), and ``convt_bias_rewritten``:
  the same computation as TRANSPOSE_CONV + ADD of the bias, which LiteRT runs. MediaPipe's SAME crops
  total = max(0, k − (in−1) mod s − 1) rows, top = total // 2, output s·(in−1) + k − total; TFLite's
  TRANSPOSE_CONV with that output size and the same padding name crops the same top rows
  (ComputePaddingHeightWidth: ceil(out / s) = in, so its total is the same), VALID crops none in both.
"""
from __future__ import annotations

import struct

import numpy as np

from tests.builders.tflm_cases import tflm_oneop

_PAD = {"SAME": 1, "VALID": 2}   # TfLitePadding / schema Padding + 1 (the custom options' enum)


def _oneop():
    return tflm_oneop()


def _f32(array, name):
    me = _oneop().me
    return me.Tensor(shape=tuple(array.shape), dtype=_oneop().S.TensorType.FLOAT32,
                     data=np.ascontiguousarray(array, np.float32), name=name)


def _f32_act(shape, name):
    o = _oneop()
    return o.me.Tensor(shape=tuple(int(d) for d in shape), dtype=o.S.TensorType.FLOAT32, name=name)


def _out_shape(out_shape):
    o = _oneop()
    return o._const(np.asarray(out_shape, np.int32), o._I32, "output_shape")


def transpose_conv_int8(x_shape, w, bias, in_q, w_scales, out_q, out_hw, stride=(1, 1), padding="SAME",
                        activation="NONE") -> bytes:
    """TRANSPOSE_CONV int8 (v2, v3 with a bias, v5 with a fused activation): output [N, out_hw..., O]."""
    o = _oneop()
    w = o._int8(w)
    n_out = w.shape[0]
    out = (x_shape[0], *out_hw, n_out)
    inputs = [_out_shape(out), o._const(w, o._I8, "w", o._per_axis(w_scales, n_out, 0)), o._act(x_shape, in_q, "x")]
    if bias is not None:
        inputs.append(o._bias(bias, in_q[0], w_scales, n_out))
    return o._model("TRANSPOSE_CONV", inputs, o._act(out, out_q, "y"), "TransposeConvOptions",
                    padding=o._PAD[padding], strideH=int(stride[0]), strideW=int(stride[1]),
                    fusedActivationFunction=o._ACT[activation])


def mediapipe_out_size(size: int, k: int, s: int, padding: str) -> int:
    """Output size of Convolution2DTransposeBias (module doc)."""
    total = max(0, k - (size - 1) % s - 1) if padding == "SAME" else 0
    return s * (size - 1) + k - total


def convt_bias_custom(x_shape, w, b, stride, padding="SAME") -> bytes:
    """CUSTOM Convolution2DTransposeBias (float32): w OHWI, b [O]."""
    o = _oneop()
    oh = [mediapipe_out_size(n, k, s, padding) for n, k, s in zip(x_shape[1:3], w.shape[1:3], stride)]
    op = o.me.Operator(opcode=o.S.BuiltinOperator.CUSTOM, custom_code="Convolution2DTransposeBias",
                       inputs=[_f32_act(x_shape, "x"), _f32(w, "w"), _f32(b, "b")],
                       outputs=[_f32_act((x_shape[0], *oh, w.shape[0]), "y")])
    op._fb.customOptions = list(struct.pack("<iii", _PAD[padding], int(stride[1]), int(stride[0])))
    return _single(op)


def convt_bias_rewritten(x_shape, w, b, stride, padding="SAME") -> bytes:
    """The same computation as TRANSPOSE_CONV (float32, padding as the custom op's) + ADD(bias)."""
    o = _oneop()
    oh = [mediapipe_out_size(n, k, s, padding) for n, k, s in zip(x_shape[1:3], w.shape[1:3], stride)]
    out = (x_shape[0], *oh, w.shape[0])
    x, t, y = _f32_act(x_shape, "x"), _f32_act(out, "t"), _f32_act(out, "y")
    conv = o.me.Operator(opcode=o.S.BuiltinOperator.TRANSPOSE_CONV, inputs=[_out_shape(out), _f32(w, "w"), x],
                         outputs=[t])
    conv._fb.builtinOptionsType = o.S.BuiltinOptions.TransposeConvOptions
    conv._fb.builtinOptions = o.S.TransposeConvOptionsT()
    conv._fb.builtinOptions.padding = o._PAD[padding]
    conv._fb.builtinOptions.strideH, conv._fb.builtinOptions.strideW = int(stride[0]), int(stride[1])
    add = o.me.Operator(opcode=o.S.BuiltinOperator.ADD, inputs=[t, _f32(b.reshape(1, 1, 1, -1), "b")], outputs=[y])
    return _single(conv, add)


def _single(*ops) -> bytes:
    o = _oneop()
    tensors, seen = [], set()
    for op in ops:
        for t in [*op.inputs, *op.outputs]:
            if id(t) not in seen:
                seen.add(id(t))
                tensors.append(t)
    model = o.me.Model(description="tinyfuse tests")
    model.add_subgraph(tensors=tensors, operators=list(ops), outputs=[ops[-1].outputs[0]],
                       inputs=[ops[0].inputs[0] if ops[0].inputs[0].buffer is None else ops[0].inputs[2]])
    return bytes(model.build())


def litert_run(model: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run a float .tflite with LiteRT (ai-edge-litert), the reference TFLite interpreter."""
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_content=bytes(model))
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], np.ascontiguousarray(x))
    it.invoke()
    return [np.array(it.get_tensor(d["index"])) for d in it.get_output_details()]


def tflite_crop(x_hw, k_hw, stride, out_hw, padding) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) crop of TRANSPOSE_CONV (TFLite's ComputePaddingHeightWidth with the
    output as its input); bottom/right may be negative (rows no tap reaches)."""
    crop = []
    for n, k, s, o in zip(x_hw, k_hw, stride, out_hw):
        m = -(-o // s) if padding == "SAME" else (o - k + s) // s
        top = max((m - 1) * s + k - o, 0) // 2
        crop.append((top, s * (n - 1) + k - top - o))
    (t, b), (l, r) = crop
    return t, l, b, r


def qdq_conv_transpose(x_shape, w_ohwi, bias, in_q, w_scales, out_q, out_hw, stride, padding, activation="NONE"):
    """The ONNX QDQ twin of transpose_conv_int8: x int8 NHWC → NCHW, ConvTranspose(DQ(x), DQ(W IOHW,
    per-channel axis 1), DQ(int32 bias)) with the same crop as pads (+ output_padding for a negative
    end), QuantizeLinear, back to NHWC."""
    from tests.builders.qdq import _Graph
    g = _Graph()
    o = w_ohwi.shape[0]
    ws = np.broadcast_to(np.asarray(w_scales, np.float32), (o,)).copy()
    t, l, b, r = tflite_crop(x_shape[1:3], w_ohwi.shape[1:3], stride, out_hw, padding)
    x = g.dq(g.nchw_input("x", x_shape), in_q)
    w = g.dq_const(np.ascontiguousarray(w_ohwi.transpose(3, 0, 1, 2)), ws, np.int8, axis=1)
    ins = [x, w]
    if bias is not None:
        ins.append(g.dq_const(np.asarray(bias, np.int32), np.float32(in_q[0]) * ws, np.int32, axis=0))
    y = g.node("ConvTranspose", ins, "convt", strides=list(stride), pads=[t, l, max(b, 0), max(r, 0)],
               output_padding=[max(-b, 0), max(-r, 0)])
    return g.finish(g.act(y, activation), out_q, False, nchw=True)


def transpose_conv_float(x_shape, w, b, out_hw, stride, padding="SAME", activation="NONE") -> bytes:
    """TRANSPOSE_CONV float32 (w OHWI, optional bias [O] as the 4th input, fused activation as v5)."""
    o = _oneop()
    out = (x_shape[0], *out_hw, w.shape[0])
    inputs = [_out_shape(out), _f32(w, "w"), _f32_act(x_shape, "x")] + ([] if b is None else [_f32(b, "b")])
    conv = o.me.Operator(opcode=o.S.BuiltinOperator.TRANSPOSE_CONV, inputs=inputs, outputs=[_f32_act(out, "y")])
    conv._fb.builtinOptionsType = o.S.BuiltinOptions.TransposeConvOptions
    opts = conv._fb.builtinOptions = o.S.TransposeConvOptionsT()
    opts.padding, opts.strideH, opts.strideW = o._PAD[padding], int(stride[0]), int(stride[1])
    opts.fusedActivationFunction = o._ACT[activation]
    return _single(conv)
