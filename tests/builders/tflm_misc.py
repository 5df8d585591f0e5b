"""One-op .tflite models (int8 or float32) for STRIDED_SLICE, SPLIT, SPLIT_V, GATHER and PRELU, which
../shared/tools/tflm_oneop.py has no builders for: built with the same tflite-micro model editor, run
by TFLM (``tflm_oneop().run``) as the exact oracle."""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_cases import tflm_oneop


def _mods():
    oneop = tflm_oneop()
    return oneop.me, oneop.S


def act(shape, q, name):
    """An input/output tensor: int8 with (scale, zero point) q, or float32 when q is None."""
    me, S = _mods()
    if q is None:
        return me.Tensor(shape=tuple(int(d) for d in shape), dtype=S.TensorType.FLOAT32, name=name)
    return me.Tensor(shape=tuple(int(d) for d in shape), dtype=S.TensorType.INT8, name=name,
                     quantization=me.Quantization(float(q[0]), int(q[1])))


def const(array, name, q=None):
    me, S = _mods()
    array = np.ascontiguousarray(array)
    dtype = {np.dtype(np.int8): S.TensorType.INT8, np.dtype(np.int32): S.TensorType.INT32,
             np.dtype(np.float32): S.TensorType.FLOAT32}[array.dtype]
    quant = None if q is None else me.Quantization(float(q[0]), int(q[1]))
    return me.Tensor(shape=array.shape, dtype=dtype, data=array, name=name, quantization=quant)


def operator(opcode, inputs, outputs, options=None, **fields):
    """One model-editor operator; the editor's private ``_fb`` sets its builtin options (as tflm_oneop does)."""
    me, S = _mods()
    op = me.Operator(opcode=getattr(S.BuiltinOperator, opcode), inputs=list(inputs), outputs=list(outputs))
    if options is not None:
        op._fb.builtinOptionsType = getattr(S.BuiltinOptions, options)
        op._fb.builtinOptions = getattr(S, options + "T")()
        for key, value in fields.items():
            setattr(op._fb.builtinOptions, key, value)
    return op


def model(opcode, inputs, outputs, options=None, **fields) -> bytes:
    """One operator with any number of outputs; graph inputs are the op inputs without data."""
    me, _ = _mods()
    op = operator(opcode, inputs, outputs, options, **fields)
    m = me.Model(description="tinyfuse tflm_misc")
    m.add_subgraph(tensors=list(inputs) + list(outputs), operators=[op], outputs=list(outputs),
                   inputs=[t for t in inputs if t.buffer is None])
    return bytes(m.build())


def strided_slice(x_shape, out_shape, begin, end, strides, q=None, **masks) -> bytes:
    """STRIDED_SLICE; masks: beginMask, endMask, shrinkAxisMask (ints); out_shape as TFLite computes it."""
    ins = [act(x_shape, q, "x"), const(np.array(begin, np.int32), "begin"), const(np.array(end, np.int32), "end"),
           const(np.array(strides, np.int32), "strides")]
    return model("STRIDED_SLICE", ins, [act(out_shape, q, "y")], "StridedSliceOptions", **masks)


def split(x_shape, axis, num, q=None) -> bytes:
    shape = list(x_shape)
    shape[axis % len(shape)] //= num
    outs = [act(shape, q, f"y{i}") for i in range(num)]
    return model("SPLIT", [const(np.array(axis, np.int32), "axis"), act(x_shape, q, "x")], outs,
                 "SplitOptions", numSplits=num)


def split_v(x_shape, sizes, axis, q=None) -> bytes:
    a = axis % len(x_shape)
    full = [s if s != -1 else x_shape[a] - sum(v for v in sizes if v != -1) for s in sizes]
    outs = [act(tuple(x_shape[:a]) + (s,) + tuple(x_shape[a + 1:]), q, f"y{i}") for i, s in enumerate(full)]
    ins = [act(x_shape, q, "x"), const(np.array(sizes, np.int32), "sizes"), const(np.array(axis, np.int32), "axis")]
    return model("SPLIT_V", ins, outs, "SplitVOptions", numSplits=len(sizes))


def gather(x_shape, indices, axis, q=None) -> bytes:
    idx = np.array(indices, np.int32)
    a = axis % len(x_shape)
    out = tuple(x_shape[:a]) + idx.shape + tuple(x_shape[a + 1:])
    return model("GATHER", [act(x_shape, q, "x"), const(idx, "indices")], [act(out, q, "y")], "GatherOptions",
                 axis=axis)


def prelu(x_shape, alpha, in_q=None, alpha_q=None, out_q=None) -> bytes:
    """PRELU(x, alpha constant): float32 alpha when the qs are None, else int8 alpha with alpha_q."""
    return model("PRELU", [act(x_shape, in_q, "x"), const(alpha, "alpha", alpha_q)], [act(x_shape, out_q, "y")])
