"""Float .tflite models whose weights come in the formats MediaPipe ships: float16 constants behind
DEQUANTIZE, and sparse tensors (``SparsityParameters``) behind DENSIFY, built with the TFLite object
API (tflite-micro's ``schema_py_generated``). LiteRT runs them (it has DENSIFY and float16
DEQUANTIZE); TFLM does not.

:func:`sparse_encode` writes a dense array in TFLite's sparse format (schema.fbs: levels in
traversal order, a DENSE level stores its size, a SPARSE_CSR level the segments and indices of the
non-zero sub-blocks below it), the encoder side of the decoder under test.
"""
from __future__ import annotations

import flatbuffers
import numpy as np
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as S

DENSE, CSR = "DENSE", "CSR"


def _expanded(dense: np.ndarray, order, block_map, block_size) -> np.ndarray:
    """``dense`` as the n + k dimensional array of the schema (block dims split off), axes in
    traversal order."""
    n = dense.ndim
    shape, axes = [], []                  # reshape dim d into (d // b, b) where a block splits it
    for d in range(n):
        if d in block_map:
            b = block_size[block_map.index(d)]
            shape += [dense.shape[d] // b, b]
            axes += [d, n + block_map.index(d)]
        else:
            shape.append(dense.shape[d])
            axes.append(d)
    x = dense.reshape(shape)
    where = {a: i for i, a in enumerate(axes)}      # schema dim → axis of x
    return x.transpose([where[a] for a in order])


def sparse_encode(dense: np.ndarray, order, formats, block_map=(), block_size=()):
    """(stored values, per-level metadata) of ``dense`` in TFLite's sparse format. ``formats``: one
    of DENSE/CSR per level (traversal order). Metadata entries: ('DENSE', size) or ('CSR', segments,
    indices)."""
    x = _expanded(dense, list(order), list(block_map), list(block_size))
    meta = [[f, x.shape[i]] if f == DENSE else [f, [0], []] for i, f in enumerate(formats)]
    values = []

    def walk(sub, level):
        if level == x.ndim:
            values.append(sub)
            return
        for i in range(sub.shape[0]):
            if formats[level] == CSR:
                if not np.any(sub[i]):
                    continue
                meta[level][2].append(i)
            walk(sub[i], level + 1)
        if formats[level] == CSR:
            meta[level][1].append(len(meta[level][2]))

    walk(x, 0)
    return np.array(values, dense.dtype), [tuple(m) for m in meta]


def _sparsity(order, meta, block_map, index_type: str = "Int32Vector") -> S.SparsityParametersT:
    sp = S.SparsityParametersT()
    sp.traversalOrder, sp.blockMap = list(order), (list(block_map) or None)
    sp.dimMetadata = []
    for m in meta:
        d = S.DimensionMetadataT()
        if m[0] == DENSE:
            d.format, d.denseSize = S.DimensionType.DENSE, int(m[1])
        else:
            d.format = S.DimensionType.SPARSE_CSR
            d.arraySegmentsType = d.arrayIndicesType = getattr(S.SparseIndexVector, index_type)
            d.arraySegments, d.arrayIndices = getattr(S, index_type + "T")(), getattr(S, index_type + "T")()
            d.arraySegments.values, d.arrayIndices.values = list(m[1]), list(m[2])
        sp.dimMetadata.append(d)
    return sp


class _Builder:
    def __init__(self):
        self.m, self.sg = S.ModelT(), S.SubGraphT()
        self.m.version, self.m.buffers, self.m.operatorCodes = 3, [S.BufferT()], []
        self.sg.tensors, self.sg.operators = [], []

    def tensor(self, shape, dtype, data: np.ndarray | None = None, sparsity=None) -> int:
        t = S.TensorT()
        t.shape, t.type, t.name, t.buffer = list(shape), dtype, f"t{len(self.sg.tensors)}", 0
        if data is not None:
            b = S.BufferT()
            b.data = list(np.ascontiguousarray(data).tobytes())
            self.m.buffers.append(b)
            t.buffer = len(self.m.buffers) - 1
        t.sparsity = sparsity
        self.sg.tensors.append(t)
        return len(self.sg.tensors) - 1

    def op(self, name: str, ins, outs, options_type=0, options=None) -> None:
        code = getattr(S.BuiltinOperator, name)
        codes = [c.builtinCode for c in self.m.operatorCodes]
        if code not in codes:
            c = S.OperatorCodeT()
            c.builtinCode, c.deprecatedBuiltinCode, c.version = code, min(code, 127), 1
            self.m.operatorCodes.append(c)
            codes.append(code)
        o = S.OperatorT()
        o.opcodeIndex, o.inputs, o.outputs = codes.index(code), list(ins), list(outs)
        o.builtinOptionsType, o.builtinOptions = options_type, options
        self.sg.operators.append(o)

    def build(self, inputs, outputs) -> bytes:
        self.sg.inputs, self.sg.outputs = list(inputs), list(outputs)
        self.m.subgraphs = [self.sg]
        fb = flatbuffers.Builder(1024)
        fb.Finish(self.m.Pack(fb), file_identifier=b"TFL3")
        return bytes(fb.Output())


def fc_weights_model(w: np.ndarray, bias: np.ndarray, batch: int = 2, sparse: dict | None = None) -> bytes:
    """x float32 [batch, K] → FULLY_CONNECTED(x, W, bias) → [batch, N], W [N, K] stored as float16
    (DEQUANTIZE to float32) and, with ``sparse`` (sparse_encode's keyword arguments, plus
    ``index_type``: Int32Vector, Uint16Vector or Uint8Vector), sparse behind DENSIFY; the bias stays
    a float32 constant."""
    F32, F16 = S.TensorType.FLOAT32, S.TensorType.FLOAT16
    b = _Builder()
    w16 = w.astype(np.float16)
    x = b.tensor((batch, w.shape[1]), F32)
    if sparse is None:
        w_half = b.tensor(w.shape, F16, w16)
    else:
        sparse = dict(sparse)
        index_type = sparse.pop("index_type", "Int32Vector")
        values, meta = sparse_encode(w16, **sparse)
        stored = b.tensor(w.shape, F16, values, _sparsity(sparse["order"], meta, sparse.get("block_map", ()), index_type))
        w_half = b.tensor(w.shape, F16)
        b.op("DENSIFY", [stored], [w_half])
    w32, bias_t, y = b.tensor(w.shape, F32), b.tensor(bias.shape, F32, bias.astype(np.float32)), b.tensor((batch, w.shape[0]), F32)
    b.op("DEQUANTIZE", [w_half], [w32])
    opts = S.FullyConnectedOptionsT()
    b.op("FULLY_CONNECTED", [x, w32, bias_t], [y], S.BuiltinOptions.FullyConnectedOptions, opts)
    return b.build([x], [y])


def conv_fp16_model(x_shape, w: np.ndarray, bias: np.ndarray) -> bytes:
    """x float32 NHWC → CONV_2D(x, DEQUANTIZE(float16 W [O,KH,KW,I]), DEQUANTIZE(float16 bias)),
    SAME padding, stride 1, fused RELU: BlazeFace's first layer in small."""
    F32, F16 = S.TensorType.FLOAT32, S.TensorType.FLOAT16
    b = _Builder()
    x = b.tensor(x_shape, F32)
    w16, b16 = b.tensor(w.shape, F16, w.astype(np.float16)), b.tensor(bias.shape, F16, bias.astype(np.float16))
    w32, b32 = b.tensor(w.shape, F32), b.tensor(bias.shape, F32)
    y = b.tensor((*x_shape[:3], w.shape[0]), F32)
    b.op("DEQUANTIZE", [w16], [w32])
    b.op("DEQUANTIZE", [b16], [b32])
    opts = S.Conv2DOptionsT()
    opts.padding, opts.strideH, opts.strideW = S.Padding.SAME, 1, 1
    opts.fusedActivationFunction = S.ActivationFunctionType.RELU
    b.op("CONV_2D", [x, w32, b32], [y], S.BuiltinOptions.Conv2DOptions, opts)
    return b.build([x], [y])
