"""One-op and small .tflite models of TFLM's signal library (custom ops ``Signal*``, tflite-micro
signal/micro/kernels) built with tflite-micro's model editor, their options a flexbuffer map as the
TensorFlow signal ops write it (keys sorted; TFLM reads them by position). TFLM runs the bytes.

    m = SignalNet()
    x = m.input((1, 480), "int16")
    y = m.op("SignalWindow", [x, m.const(np.ones(480, np.int16))], m.tensor((1, 480), "int16"), shift=12)
    model = m.build([y])
"""
from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from tests.builders.tflm_cases import tflm_oneop

TYPES = {"float32": "FLOAT32", "int8": "INT8", "int16": "INT16", "int32": "INT32", "uint32": "UINT32",
         "uint64": "UINT64", "bool": "BOOL", "uint8": "UINT8"}


class SignalNet:
    """A graph under construction (operators in execution order, inputs in order)."""

    def __init__(self):
        self.o = tflm_oneop()
        self.me, self.S = self.o.me, self.o.S
        self.ops, self.inputs, self._n = [], [], 0

    def tensor(self, shape, dtype: str, data=None, q=None, variable: bool = False):
        self._n += 1
        t = self.me.Tensor(shape=tuple(int(d) for d in shape), dtype=getattr(self.S.TensorType, TYPES[dtype]),
                           data=None if data is None else np.ascontiguousarray(data), name=f"t{self._n}",
                           quantization=None if q is None else self.me.Quantization(float(q[0]), int(q[1])))
        if variable:
            t._fb.isVariable = True
        return t

    def input(self, shape, dtype: str, q=None):
        t = self.tensor(shape, dtype, q=q)
        self.inputs.append(t)
        return t

    def const(self, array: np.ndarray, q=None):
        array = np.ascontiguousarray(array)
        return self.tensor(array.shape, str(array.dtype), data=array, q=q)

    def op(self, name: str, inputs, outputs, **options):
        """A custom op ``name`` with its options (a flexbuffer map); ``outputs`` one tensor or a list."""
        outs = outputs if isinstance(outputs, list) else [outputs]
        op = self.me.Operator(opcode=self.S.BuiltinOperator.CUSTOM, custom_code=name, inputs=list(inputs),
                              outputs=outs)
        op._fb.customOptions = list(flexbuffers.Dumps(options))
        op._fb.customOptionsFormat = 0
        self.ops.append(op)
        return outputs

    def builtin(self, opcode: str, inputs, outputs, options: str | None = None, **fields):
        outs = outputs if isinstance(outputs, list) else [outputs]
        op = self.me.Operator(opcode=getattr(self.S.BuiltinOperator, opcode), inputs=list(inputs), outputs=outs)
        if options is not None:
            op._fb.builtinOptionsType = getattr(self.S.BuiltinOptions, options)
            op._fb.builtinOptions = getattr(self.S, options + "T")()
            for key, value in fields.items():
                setattr(op._fb.builtinOptions, key, value)
        self.ops.append(op)
        return outputs

    def build(self, outputs) -> bytes:
        tensors, seen = [], set()
        for op in self.ops:
            for t in [*op.inputs, *op.outputs]:
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    tensors.append(t)
        model = self.me.Model(description="tinyfuse signal")
        model.add_subgraph(tensors=tensors, operators=self.ops, outputs=list(outputs), inputs=self.inputs)
        return bytes(model.build())


def tflm_frames(model: bytes, frames: list[list[np.ndarray]], arena_size: int = 1 << 20) -> list[list[np.ndarray]]:
    """TFLM's outputs for each frame of ``frames`` (one interpreter, invoked frame after frame)."""
    import tflite_micro
    it = tflite_micro.runtime.Interpreter.from_bytes(bytes(model), arena_size=arena_size)
    n_out, out = _outputs(model), []
    for inputs in frames:
        for i, x in enumerate(inputs):
            it.set_input(np.ascontiguousarray(x), i)
        it.invoke()
        out.append([np.array(it.get_output(k), copy=True) for k in range(n_out)])
    return out


def _outputs(model: bytes) -> int:
    o = tflm_oneop()
    return o.S.Model.GetRootAs(bytes(model), 0).Subgraphs(0).OutputsLength()
