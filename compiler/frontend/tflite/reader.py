"""TFLite flatbuffer → IRModule.

Reads the .tflite through ``schema`` (the pure-Python ``tflite`` package's flatc bindings,
seen through the flatbuffers object API's field names) and emits the IR the ONNX frontend emits for the tf2onnx
twin of the same model, so both reach the same int8 kernels:

- tensors keep TFLite's layout (NHWC) and dtypes; conv, depthwise and pools run in NCHW between
  transposes that ``convert_layout`` cancels (the model's I/O stays NHWC);
- int8 ops are written in QDQ form, ``quantize(op(dequantize(x), dequantize(W)) + dequantize(B))``,
  weights as ``qnn.dequantize(int8 Constant)`` with their per-channel scales, bias as
  ``qnn.dequantize(int32 Constant)``; ``legalize_qdq`` turns that into TFLM's integer kernels;
- where TFLM's int8 arithmetic is not what the QDQ pattern means, the qnn ops are emitted directly
  with TFLM's parameters (see ``int8``): fused activations (clamps from
  CalculateActivationRangeQuantized), MEAN, SUB, HARD_SWISH and LEAKY_RELU, and the ops TFLM runs
  on raw bytes without rescaling (RESHAPE, SQUEEZE, TRANSPOSE, PAD, MAX_POOL_2D, AVERAGE_POOL_2D).

Hybrid models (float activations, int8 weights) run in float with the weights dequantized at
compile time. Errors are one-line :class:`TinyfuseError` naming the operator index, its op and
version and the tensor shapes. This file reads the model; the converters are in ``ops.py`` and its siblings,
the registry they fill and the helpers they share in ``registry.py``.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ... import ops  # noqa: F401  (registers the ops)
from ...errors import TinyfuseError
from ...userdir import read_input
from ...ir import Constant, Function, IRModule, TensorType, Tuple, Var
from ...ir.types import C_TYPES
from ..onnx.reader import check_size, first_line, own_buffers, sanitize
from .int16 import INT16_OPS
from .registry import CONVERTERS, EFFECTS, MULTI_OUTPUTS, TYPES, Graph, Op, S, Tensor, _names, check_types
from .state import StateTable

from .schema import read_model
from .schema import schema as _schema
from .weights import densify, fold_weights
from .dilated import fold_dilated_convs
from .fold import fold_op
DTYPES = {} if S is None else {
    S.TensorType.FLOAT32: "float32", S.TensorType.FLOAT16: "float16", S.TensorType.INT8: "int8",
    S.TensorType.UINT8: "uint8", S.TensorType.INT16: "int16", S.TensorType.INT32: "int32",
    S.TensorType.INT64: "int64", S.TensorType.BOOL: "bool", S.TensorType.UINT16: "uint16",
    S.TensorType.UINT32: "uint32", S.TensorType.UINT64: "uint64"}




# ----------------------------------------------------------------------------------------- reading the file

def load_tflite(model: str | Path | bytes) -> bytes:
    """The bytes of a .tflite file (or the bytes given), checked to be a TFLite flatbuffer."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        data, where = bytes(model), "model bytes"
    else:
        data, where = read_input(model), str(model)     # bounded: never a directory or /dev/zero
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise TinyfuseError(f"{where}: not a TFLite flatbuffer (no 'TFL3' identifier; truncated or wrong file?)")
    return data


def _parse(data: bytes, where: str = "the TFLite flatbuffer"):
    try:
        return read_model(data)
    except TinyfuseError:
        raise
    except Exception as e:
        raise TinyfuseError(f"{where}: the TFLite flatbuffer cannot be read ({type(e).__name__}: {first_line(e)}); "
                            "the file is damaged or truncated") from None


def _text(b) -> str:
    s = b.decode("utf-8", "replace") if isinstance(b, bytes) else str(b or "")
    return s if s.isprintable() else s.encode("unicode_escape").decode("ascii")


def _tensor(model, data: bytes, t, index: int) -> Tensor:
    names = _names(S.TensorType)
    dtype = DTYPES.get(t.type, names.get(t.type, f"type {t.type}"))
    shape = tuple(int(d) for d in (t.shape if t.shape is not None else ()))
    out = Tensor(index, _text(t.name) or f"tensor_{index}", shape, dtype)
    out.variable = bool(t.isVariable)     # state (state.py); TFLM ignores its buffer
    q = t.quantization
    if q is not None and q.scale is not None and len(q.scale):
        out.scale = np.asarray(q.scale, np.float32).reshape(-1)
        if not np.all(np.isfinite(out.scale) & (out.scale > 0)):
            raise TinyfuseError(f"tensor {index} '{out.name}' {out} has quantization scale "
                                f"{out.scale[:4].tolist()}, not positive and finite; the file is damaged")
        zp = q.zeroPoint if q.zeroPoint is not None and len(q.zeroPoint) else [0]
        if len(zp) not in (1, out.scale.size):
            raise TinyfuseError(f"tensor {index} '{out.name}' {out} has {out.scale.size} scales but {len(zp)} zero "
                                "points; the file is damaged")
        out.zero_point = np.broadcast_to(np.asarray(zp, np.int64).reshape(-1), out.scale.shape).copy()
        info = np.iinfo(dtype if dtype in ("int8", "uint8", "int16", "int32") else "int32")
        if out.zero_point.min() < info.min or out.zero_point.max() > info.max:
            raise TinyfuseError(f"tensor {index} '{out.name}' {out} has zero point {out.zero_point[:4].tolist()}, "
                                f"outside the range of {info.dtype}; the file is damaged")
        out.axis = int(q.quantizedDimension)
    buf = model.buffers[t.buffer] if 0 < t.buffer < len(model.buffers or ()) else None
    raw = None
    if buf is not None and buf.offset > 1:             # large models keep buffers after the flatbuffer
        raw = data[buf.offset:buf.offset + buf.size]
    elif buf is not None and buf.data is not None and len(buf.data):
        raw = np.asarray(buf.data, np.uint8).tobytes()
    if raw is not None and not out.variable:
        if dtype not in C_TYPES and dtype != "float16":
            raise TinyfuseError(f"constant tensor {index} '{out.name}' has element type {dtype}; "
                                "supported: float32, float16, int8, int32, int64")
        out.data = _constant(raw, t.sparsity, out)
    elif t.sparsity is not None:
        raise TinyfuseError(f"tensor {index} '{out.name}' {out} is sparse but not a constant; the file is damaged")
    return out


def _constant(raw: bytes, sparsity, out: Tensor) -> np.ndarray:
    """The dense value of constant tensor ``out`` from its buffer bytes (densified when sparse)."""
    size = np.dtype(out.dtype).itemsize
    if sparsity is not None:
        if len(raw) % size:
            raise TinyfuseError(f"sparse constant tensor {out.index} '{out.name}' {out} holds {len(raw)} bytes; "
                                "the file is damaged")
        try:
            return densify(np.frombuffer(raw, out.dtype), out.shape, sparsity)
        except TinyfuseError as e:
            raise TinyfuseError(f"constant tensor {out.index} '{out.name}' {out}: {e}") from None
    if len(raw) != math.prod(out.shape) * size:
        raise TinyfuseError(f"constant tensor {out.index} '{out.name}' {out} holds {len(raw)} bytes; "
                            "the file is damaged")
    return np.frombuffer(raw, out.dtype).reshape(out.shape).copy()


def _operator(model, tensors: list[Tensor], op, index: int) -> Op:
    if not 0 <= op.opcodeIndex < len(model.operatorCodes or ()):
        raise TinyfuseError(f"operator {index}: opcode index {op.opcodeIndex} out of range; the file is damaged")
    code = model.operatorCodes[op.opcodeIndex]
    builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
    name = _names(S.BuiltinOperator).get(builtin, f"builtin {builtin}")
    if name == "CUSTOM":
        name = f"CUSTOM '{_text(code.customCode)}'"

    def pick(i):
        if i < 0:
            return None
        if i >= len(tensors):
            raise TinyfuseError(f"operator {index} ({name}): tensor index {i} out of range; the file is damaged")
        return tensors[i]
    ins = [pick(i) for i in (op.inputs if op.inputs is not None else [])]
    outs = [pick(i) for i in (op.outputs if op.outputs is not None else [])]
    options = bytes(op.customOptions) if name.startswith("CUSTOM") and op.customOptions is not None else op.builtinOptions
    return Op(index, name, int(code.version), options, ins, [t for t in outs if t is not None])


# ----------------------------------------------------------------------------------------- the model

def _io_tensor(tensors: list[Tensor], i: int, what: str) -> Tensor:
    """The subgraph's ``what`` ('input'/'output') tensor ``i``; TinyfuseError when out of range."""
    if not 0 <= i < len(tensors):
        raise TinyfuseError(f"subgraph {what} tensor index {int(i)} out of range (the subgraph has {len(tensors)} "
                            "tensors); the file is damaged")
    return tensors[i]


def from_tflite(model: str | Path | bytes, name: str | None = None, where: str | None = None) -> IRModule:
    """Convert a .tflite (path or bytes) to an IRModule with the model's NHWC I/O and dtypes.

    Subgraph 0 is the model; another subgraph is converted as a CALL_ONCE init subgraph, or inlined
    where an IF or WHILE calls it with a compile-time condition (control.py).
    Resource variables and variable tensors become ``IRModule.states`` (state.py): extra
    trailing parameters and outputs of ``main``, after the model's own. ``where`` (default: the path, or
    "the TFLite flatbuffer") names the file in the errors about its bytes."""
    _schema()
    if not isinstance(model, (bytes, bytearray, memoryview)):
        name = name or sanitize(Path(model).stem)
        where = where or str(model)
    data = load_tflite(model)
    m = _parse(data, where or "the TFLite flatbuffer")
    if not m.subgraphs:
        raise TinyfuseError(f"{where or 'the TFLite model'}: no subgraph (truncated or damaged file?)")
    sg = m.subgraphs[0]
    g = _graph(m, data, sg, StateTable())
    params = [_input(g, i) for i in (sg.inputs if sg.inputs is not None else [])]
    _convert_all(g, m, sg)
    outputs = []
    for i in sg.outputs if sg.outputs is not None else []:
        t = _io_tensor(g.tensors, i, "output")
        if i not in g.env:
            raise TinyfuseError(f"output '{t.name}' {t} is not computed by any operator")
        outputs.append(g.env[i] if i not in g.gates else g.states.hold(("output", i), f"{t.name}_held", g.env[i],
                                                                        g.gates[i]))
    if not outputs:
        raise TinyfuseError("the TFLite subgraph has no outputs")
    n_out = len(outputs)
    outputs = own_buffers(outputs + g.states.outputs())
    body = outputs[0] if len(outputs) == 1 else Tuple(tuple(outputs))
    out_names = tuple(g.tensors[i].name for i in sg.outputs)[:n_out]
    return IRModule(Function(tuple(params + g.states.params()), body), sanitize(name or "model"), out_names,
                    states=g.states.states())


def _input(g: Graph, i: int) -> Var:
    """The parameter of subgraph input tensor ``i`` (bound in ``g``)."""
    t = _io_tensor(g.tensors, i, "input")
    if t.dtype not in C_TYPES:       # float32 and int8 run; others are refused by their first operator
        raise TinyfuseError(f"input '{t.name}' {t} has element type {t.dtype}; supported: float32, int8")
    if not t.shape or min(t.shape) <= 0:
        raise TinyfuseError(f"input '{t.name}' has shape {list(t.shape)}; tinyfuse needs static, non-empty shapes")
    v = Var(t.name, TensorType(t.shape, t.dtype))
    check_size(v.ty, f"input '{t.name}'")
    g.env[i] = v
    return v


def _graph(m, data: bytes, sg, states: StateTable) -> Graph:
    """The Graph of subgraph ``sg`` (fresh tensors: folding writes their data), its hooks set."""
    g = Graph([_tensor(m, data, t, i) for i, t in enumerate(sg.tensors or [])], states)
    g.subgraph = lambda index, st: _init_subgraph(m, data, index, st)
    g.call = lambda index, values, op: call_subgraph(m, data, index, values, g.states, op)
    return g


def _convert_all(g: Graph, m, sg, empty_ok: bool = False) -> None:
    operators = fold_weights([_operator(m, g.tensors, op, k) for k, op in enumerate(sg.operators or [])])
    operators = fold_dilated_convs(operators, {int(i) for i in (sg.outputs if sg.outputs is not None else [])})
    if not operators and not empty_ok:
        raise TinyfuseError("the TFLite subgraph has no operators")
    for op in operators:
        convert_op(g, op)


def _init_subgraph(m, data: bytes, index: int, states: StateTable) -> None:
    """Convert CALL_ONCE's init subgraph ``index`` into the initial values of ``states``."""
    if not 0 < index < len(m.subgraphs):
        raise TinyfuseError(f"CALL_ONCE names subgraph {index}; the model has {len(m.subgraphs)}")
    sg = m.subgraphs[index]
    if sg.inputs is not None and len(sg.inputs):
        raise TinyfuseError(f"the CALL_ONCE init subgraph {index} has inputs; TFLM calls it with none")
    g = _graph(m, data, sg, states)
    try:
        _convert_all(g, m, sg)
    except TinyfuseError as e:
        raise TinyfuseError(f"init subgraph {index}: {e}") from None


def call_subgraph(m, data: bytes, index: int, values: list, states: StateTable, op: Op) -> list:
    """The output values of subgraph ``index`` converted with its inputs bound to ``values`` (IR
    values of the caller; a Constant stays a compile-time constant inside, so the subgraph's shape
    and counter arithmetic folds): what TFLM's IF and WHILE do when they copy the operator's inputs
    to the subgraph's inputs, invoke it and copy its outputs back (if.cc, while.cc). Raises
    ``op.error`` when the subgraph does not exist or its inputs do not match ``values``."""
    if not 0 < index < len(m.subgraphs):
        raise op.error(f"names subgraph {index}; the model has {len(m.subgraphs)}")
    if index in states.calls:
        raise op.error(f"subgraph {index} calls itself (through subgraphs {states.calls}); TFLM models do not recurse")
    sg = m.subgraphs[index]
    g = _graph(m, data, sg, states)
    ins = [int(i) for i in (sg.inputs if sg.inputs is not None else [])]
    if len(ins) != len(values):
        raise op.error(f"subgraph {index} has {len(ins)} inputs; the operator gives it {len(values)}")
    for i, v in zip(ins, values):
        t = _io_tensor(g.tensors, i, "input")
        if tuple(v.ty.shape) != t.shape or v.ty.dtype != t.dtype:
            raise op.error(f"subgraph {index} input '{t.name}' is {t}, the operator gives it "
                           f"{list(v.ty.shape)} {v.ty.dtype}")
        if isinstance(v, Constant):
            t.data = np.asarray(v.value).reshape(t.shape)
        g.env[i] = v
    scope, states.scope = states.scope, index
    states.calls.append(index)
    try:
        _convert_all(g, m, sg, empty_ok=True)
        return [g.value(_io_tensor(g.tensors, int(i), "output")) for i in (sg.outputs if sg.outputs is not None else [])]
    except TinyfuseError as e:
        raise op.error(f"subgraph {index}: {e}") from None
    finally:
        states.scope = scope
        states.calls.pop()


MULTI_OUTPUT = ("SPLIT", "SPLIT_V", "UNPACK")    # converters that return one value per output, as a list

# inputs an operator cannot do without (schema.fbs / TFLM kernels; bias and PAD's value are optional)
MIN_INPUTS = {"CONV_2D": 2, "DEPTHWISE_CONV_2D": 2, "FULLY_CONNECTED": 2, "ADD": 2, "MUL": 2, "SUB": 2,
              "TRANSPOSE": 2, "PAD": 2, "PADV2": 2, "MEAN": 2,
              "TRANSPOSE_CONV": 3, "RESIZE_BILINEAR": 2, "RESIZE_NEAREST_NEIGHBOR": 2, "PRELU": 2,
              "STRIDED_SLICE": 4, "SPLIT": 2, "SPLIT_V": 3, "GATHER": 2,
              # reductions, indexing, movement and shape ops (reduce.py, movement.py, fold.py)
              "SUM": 2, "REDUCE_MAX": 2, "REDUCE_MIN": 2, "REDUCE_ALL": 2, "ARG_MAX": 2, "ARG_MIN": 2, "CUMSUM": 2,
              "BATCH_MATMUL": 2, "SLICE": 3, "REVERSE_V2": 2, "SPACE_TO_BATCH_ND": 3, "BATCH_TO_SPACE_ND": 3,
              "MIRROR_PAD": 2, "GATHER_ND": 2, "EMBEDDING_LOOKUP": 2, "DYNAMIC_UPDATE_SLICE": 3, "FILL": 2,
              "BROADCAST_ARGS": 2, "EXPAND_DIMS": 2}


# beyond float32 and int8: fp16 weights, a uint8 / int32 model output, int16 activations (int16.INT16_OPS:
# 16x8 quantization, and the int16 state of TFLM's int8 LSTM / SVDF)
EXTRA_TYPES = {name: ("int16",) for name in INT16_OPS} | {"DEQUANTIZE": ("float16", "int16"),
                                                           "QUANTIZE": ("uint8", "int32", "int16")}
# int32 / bool / int64 where TFLM's kernels take them (indices, shapes, masks, int32 data)
for _name in ("ARG_MAX", "ARG_MIN", "GATHER_ND", "EMBEDDING_LOOKUP", "DYNAMIC_UPDATE_SLICE", "PACK", "UNPACK", "SLICE",
              "REVERSE_V2", "MIRROR_PAD", "EXPAND_DIMS", "BROADCAST_TO", "FILL", "RESHAPE", "STRIDED_SLICE",
              "CONCATENATION", "GATHER", "TRANSPOSE"):
    EXTRA_TYPES[_name] = (*EXTRA_TYPES.get(_name, ()), "int32", "int64", "bool")
EXTRA_TYPES["REDUCE_ALL"] = ("bool",)


def _check_types(op: Op) -> None:
    """The element types of ``op``'s tensors: its converter's ``types`` (an int16 declared there is a
    plain integer: signal ops, raw integer ops) and EXTRA_TYPES (int16 there is 16x8: quantized)."""
    types, raw_int8 = TYPES.get(op.name, (("float32", "int8"), False))
    check_types(op, (*types, *EXTRA_TYPES.get(op.name, ())), raw_int8, raw=tuple(t for t in types if t == "int16"))


def _checked_converter(op: Op):
    """The converter of ``op`` (None if there is none) after checking its version, inputs and outputs."""
    if op.name not in CONVERTERS:
        return None
    max_version, fn = CONVERTERS[op.name]
    if op.version > max_version:
        raise op.error(f"operator version {op.version} is not supported (up to {max_version})")
    multi = op.name in MULTI_OUTPUT or op.name in MULTI_OUTPUTS
    if not op.inputs or op.inputs[0] is None or not op.outputs or len(op.outputs) > 1 and not multi:
        raise op.error(f"expects inputs and one output, got {len(op.inputs)} inputs, {len(op.outputs)} outputs")
    need = len(op.inputs) if op.name == "CONCATENATION" else MIN_INPUTS.get(op.name, 1)
    if len(op.inputs) < need or any(t is None for t in op.inputs[:need]):
        raise op.error(f"expects {need} input tensors, got {sum(t is not None for t in op.inputs)}")
    return fn


def convert_op(g: Graph, op: Op) -> None:
    if op.name in EFFECTS:
        max_version, fn = EFFECTS[op.name]
        if op.version > max_version:
            raise op.error(f"operator version {op.version} is not supported (up to {max_version})")
        fn(g, op)
        return
    fn = _checked_converter(op)
    if fold_op(g, op, fn):           # compile-time constants (fold.py): no type check, no kernel
        return
    if fn is None:
        raise op.error("operator not supported by tinyfuse", f"supported: {', '.join(sorted({*CONVERTERS, *EFFECTS}))}")
    _check_types(op)
    try:
        y = fn(g, op)
    except TinyfuseError as e:
        if str(e).startswith("operator "):
            raise
        raise op.error(str(e)) from None
    for t, e in zip(op.outputs, y if isinstance(y, list) else [y]):
        g.set(t, e, op)
    g.states.advance()

