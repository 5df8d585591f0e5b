"""A copy of a MediaPipe .tflite that LiteRT can run: each CUSTOM ``Convolution2DTransposeBias`` becomes a
builtin TRANSPOSE_CONV (v3, bias as its fourth input), so LiteRT's reference kernels can serve as the
float oracle of models such as ``selfie_segmentation.tflite`` (LiteRT has no kernel for the custom op).

The custom op (mediapipe/util/tflite/operations/transpose_conv_bias.cc) takes input NHWC, weights OHWI and
bias [O]; its custom options are TfLiteTransposeConvParams as raw little-endian int32 (padding 1 SAME /
2 VALID, stride_width, stride_height). Per spatial dim with input size ``n``, kernel ``k``, stride ``s``:

    total = max(0, k − (n − 1) mod s − 1)  (SAME; VALID: 0),   out = s·(n − 1) + k − total,   top = total // 2

TRANSPOSE_CONV (tensorflow/lite/kernels/transpose_conv.cc) takes output_shape, weights OHWI, input, bias
and derives its crop from ``out`` the way a conv derives padding: SAME with n' = ceil(out / s),
top = max((n' − 1)·s + k − out, 0) // 2; VALID: top = 0. The rewrite picks the TFLite padding whose crop
equals MediaPipe's (and n' = n), and gives up (returns None) for a layer where neither does, so the copy
computes exactly what the custom op computes or is not made at all. The input file is never modified.
"""
from __future__ import annotations

import struct

import numpy as np

CUSTOM_CODE = "Convolution2DTransposeBias"


def _schema():
    """The flatbuffer schema with its object API, from the LiteRT wheel (the oracle's own package)."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as S
    return flatbuffers, S


def _tflite_padding(n: int, k: int, s: int, total: int):
    """0 (SAME) or 1 (VALID) giving MediaPipe's crop for one spatial dim, or None when neither does."""
    out = s * (n - 1) + k - total
    n_conv = -(-out // s)
    same_total = max((n_conv - 1) * s + k - out, 0)
    if n_conv == n and same_total // 2 == total // 2 and same_total == total:
        return 0
    return 1 if total == 0 else None


def _custom_index(model, S) -> int | None:
    for i, code in enumerate(model.operatorCodes or []):
        name = code.customCode.decode() if isinstance(code.customCode, bytes) else code.customCode
        if name == CUSTOM_CODE:
            return i
    return None


def _rewrite_op(model, sg, op, tc_index: int, S) -> bool:
    """Turn one custom op into TRANSPOSE_CONV in place; False when its padding has no TFLite twin."""
    x, w, b = (sg.tensors[i] for i in op.inputs)
    pad_code, stride_w, stride_h = struct.unpack("<iii", bytes(op.customOptions)[:12])
    n_out, paddings = [], set()
    for n, k, s in zip(x.shape[1:3], w.shape[1:3], (stride_h, stride_w)):
        total = max(0, k - (n - 1) % s - 1) if pad_code == 1 else 0
        paddings.add(_tflite_padding(int(n), int(k), int(s), total))
        n_out.append(s * (n - 1) + k - total)
    if len(paddings) != 1 or None in paddings:
        return False
    shape = np.array([x.shape[0], n_out[0], n_out[1], w.shape[0]], np.int32)
    model.buffers.append(S.BufferT())
    model.buffers[-1].data = np.frombuffer(shape.tobytes(), np.uint8)
    t = S.TensorT()
    t.shape, t.type, t.buffer, t.name = [4], S.TensorType.INT32, len(model.buffers) - 1, b"output_shape"
    sg.tensors.append(t)
    options = S.TransposeConvOptionsT()
    options.padding, options.strideW, options.strideH = paddings.pop(), stride_w, stride_h
    op.opcodeIndex, op.customOptions = tc_index, None
    op.inputs = [len(sg.tensors) - 1, op.inputs[1], op.inputs[0], op.inputs[2]]
    op.builtinOptionsType, op.builtinOptions = S.BuiltinOptions.TransposeConvOptions, options
    return True


def rewrite_transpose_conv_bias(data: bytes) -> bytes | None:
    """The .tflite ``data`` with every Convolution2DTransposeBias replaced by TRANSPOSE_CONV; None when the
    model has none, one cannot be rewritten exactly, or the schema package (ai-edge-litert) is missing."""
    try:
        flatbuffers, S = _schema()
    except ImportError:
        return None
    model = S.ModelT.InitFromPackedBuf(bytearray(data), 0)
    custom = _custom_index(model, S)
    if custom is None:
        return None
    code = S.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = S.BuiltinOperator.TRANSPOSE_CONV
    code.version = 3
    model.operatorCodes.append(code)
    tc_index = len(model.operatorCodes) - 1
    for sg in model.subgraphs:
        for op in sg.operators or []:
            if op.opcodeIndex == custom and not _rewrite_op(model, sg, op, tc_index, S):
                return None
    builder = flatbuffers.Builder(1 << 20)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())
