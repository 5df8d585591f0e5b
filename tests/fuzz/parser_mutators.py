"""Structure-aware mutants of .onnx and .tflite models for the parser fuzzer (tests/fuzz/parsers.py).

A mutant is a *plan*, plain data drawn by hypothesis strategies (:func:`onnx_plans`,
:func:`tflite_plans`): a seed model and a list of edits whose selectors (node, attribute,
initializer, patch site, byte position) are integers taken modulo what the seed holds, so any plan
applies to any seed and the same plan always gives the same bytes (:func:`mutate`).

ONNX edits work on the ``ModelProto`` (onnx's protobuf classes): node op_type / attributes (values,
wrong attribute types, removed or added attributes) / inputs and outputs (rewired to any name, which
makes cycles, forward references and duplicate definitions; emptied, dropped, added), nodes dropped,
duplicated or swapped, initializer dims (huge, negative, zero) / data_type / raw_data length /
removal, value_info and graph input/output shapes and element types, opset and IR versions; then
byte edits of the serialized model (truncation, bit flips, overwritten, inserted and deleted bytes).

TFLite edits patch the flatbuffer in place at *sites* found by walking it with the ``tflite``
package's accessors (schema.fbs field slots): tensor type / buffer index / shape, operator opcode
index / inputs / outputs / options type, operator-code builtin code / version, buffer offset and
size, subgraph inputs/outputs, quantization dimension, model version, vector lengths and the
uoffsets of tables and vectors; plus the same byte edits.
"""
from __future__ import annotations

import functools
import struct
import sys

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import TensorProto, helper

from tests.builders.float_models import good_model, model_bytes, rand
from tests.conftest import SHARED

MODELS = SHARED / "models"
INTERESTING = [0, 1, -1, 2, 3, 7, 8, 13, 127, 128, 255, 256, 1000, 65535, 2**31 - 1, -2**31, 2**32 - 1, 2**32,
               2**40, 2**62, 2**63 - 1, -2**63]
VALUES = st.one_of(st.sampled_from(INTERESTING), st.integers(-2**63, 2**63 - 1))
SELECT = st.integers(0, 2**16)
BYTE_KINDS = ["truncate", "flip", "overwrite", "insert", "delete"]
ONNX_KINDS = ["op_type", "attr_value", "attr_type", "attr_drop", "attr_add", "input_rewire", "input_empty",
              "input_missing", "input_drop", "input_add", "output_rewire", "cycle", "node_drop", "node_dup",
              "node_swap", "init_dims", "init_dtype", "init_raw", "init_drop", "vi_dim", "vi_elem", "vi_drop_shape",
              "opset", "ir_version", "graph_output_drop", "graph_input_drop", "graph_output_name"]
OP_TYPES = ["Conv", "Relu", "Add", "Mul", "MatMul", "Gemm", "Reshape", "Transpose", "Softmax", "Concat", "MaxPool",
            "AveragePool", "GlobalAveragePool", "Clip", "Flatten", "QuantizeLinear", "DequantizeLinear", "Constant",
            "ConstantOfShape", "Shape", "Gather", "Loop", "If", "Scan", "Identity", "Squeeze", "Unsqueeze", "Pad",
            "ReduceMean", "Cast", "", "NoSuchOp", "conv", "Conv\x7f"]
ATTR_NAMES = ["axis", "pads", "strides", "kernel_shape", "group", "dilations", "perm", "to", "alpha", "beta",
              "transA", "transB", "auto_pad", "value", "axes", "keepdims", "ceil_mode", "allowzero", "zz"]
OPSETS = [-1, 0, 1, 6, 7, 9, 10, 11, 12, 13, 17, 19, 20, 21, 22, 23, 24, 25, 30, 1000, 2**31 - 1, 2**62]


# --------------------------------------------------------------------------------------------- seeds

def _small_onnx_seeds() -> dict[str, bytes]:
    """Generated graphs: a conv block, an MLP with Softmax, an opset-10 model (version converter),
    a Constant/Reshape chain (folding) and a QDQ conv."""
    w1, w2 = rand(16, 24, seed=1), rand(24, 8, seed=2)
    mlp = model_bytes([helper.make_node("MatMul", ["X", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
                       helper.make_node("MatMul", ["r", "w2"], ["o"]), helper.make_node("Softmax", ["o"], ["Y"])],
                      {"X": [1, 16]}, inits={"w1": w1, "w2": w2})
    old = model_bytes([helper.make_node("Clip", ["X"], ["c"], min=0.0, max=6.0),
                       helper.make_node("Softmax", ["c"], ["Y"], axis=1)], {"X": [1, 3, 4, 4]}, opset=10)
    shape = helper.make_tensor("s", TensorProto.INT64, [2], [1, -1])
    fold = model_bytes([helper.make_node("Constant", [], ["shape"], value=shape),
                        helper.make_node("Reshape", ["X", "shape"], ["f"]),
                        helper.make_node("Gemm", ["f", "w", "b"], ["Y"], transB=1)],
                       {"X": [1, 2, 3, 3]}, inits={"w": rand(5, 18, seed=3), "b": rand(5, seed=4)})
    i8 = np.random.default_rng(5).integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    qdq = model_bytes([helper.make_node("QuantizeLinear", ["X", "sx", "zx"], ["xq"]),
                       helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
                       helper.make_node("DequantizeLinear", ["wq", "sw"], ["wd"]),
                       helper.make_node("Conv", ["xd", "wd"], ["c"], pads=[1, 1, 1, 1]),
                       helper.make_node("QuantizeLinear", ["c", "sy", "zy"], ["yq"]),
                       helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["Y"])], {"X": [1, 3, 6, 6]},
                      inits={"sx": np.float32(0.05), "zx": np.int8(0), "wq": i8, "sw": np.float32(0.01),
                             "sy": np.float32(0.1), "zy": np.int8(3)})
    return {"gen_conv_relu": good_model(), "gen_mlp": mlp, "gen_opset10": old, "gen_fold": fold, "gen_qdq": qdq}


def _small_tflite_seeds() -> dict[str, bytes]:
    """One-op int8 models from ../shared/tools/tflm_oneop.py (built in memory)."""
    tools = str(SHARED / "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)
    import tflm_oneop as one

    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (4, 3, 3, 2), dtype=np.int8)
    b = rng.integers(-500, 500, 4, dtype=np.int32)
    q = (0.05, -3)
    return {"gen_conv": one.conv2d((1, 5, 5, 2), w, b, q, [0.01] * 4, (0.2, 1)),
            "gen_fc": one.fully_connected((1, 8), rng.integers(-127, 128, (3, 8), dtype=np.int8),
                                          np.zeros(3, np.int32), q, 0.02, (0.3, 0)),
            "gen_add": one.add((1, 4, 4, 2), (1, 1, 1, 2), q, (0.04, 2), (0.1, 0), activation="RELU"),
            "gen_pool": one.max_pool2d((1, 4, 4, 3), q),
            "gen_reshape": one.reshape((1, 2, 3, 4), (1, -1), q),
            "gen_softmax": one.softmax((1, 10), q)}


ONNX_FILES = ["cases/*.onnx", "onnx/kws_ref_model.onnx", "onnx/kws_ref_model_float32.onnx", "onnx/ad01_int8.onnx",
              "onnx/tiny_transformer_block_op20_qop.onnx", "onnx/tiny_transformer_block_op20_qdq.onnx"]
TFLITE_FILES = ["tflite/kws_ref_model.tflite", "tflite/kws_ref_model_float32.tflite", "tflite/ad01_int8.tflite",
                "real/trained_lstm_int8.tflite"]


@functools.lru_cache(maxsize=None)
def seeds(fmt: str) -> tuple[tuple[str, bytes], ...]:
    """(name, bytes) of every seed model of ``fmt`` ('onnx' or 'tflite'): the small shared models and
    the generated ones. Missing shared files are left out (the generated seeds remain)."""
    found = {}
    for pattern in ONNX_FILES if fmt == "onnx" else TFLITE_FILES:
        for p in sorted(MODELS.glob(pattern)):
            found[p.name] = p.read_bytes()
    found.update(_small_onnx_seeds() if fmt == "onnx" else _small_tflite_seeds())
    return tuple(sorted(found.items()))


# --------------------------------------------------------------------------------------------- plans

def _edit(kinds):
    return st.tuples(st.sampled_from(kinds), SELECT, SELECT, VALUES)


def _plan(kinds):
    return st.tuples(SELECT, st.lists(_edit(kinds), max_size=3), st.lists(_edit(BYTE_KINDS), max_size=2)).filter(
        lambda p: p[1] or p[2])


def onnx_plans():
    """Hypothesis strategy of ONNX mutation plans: (seed selector, [protobuf edits], [byte edits])."""
    return _plan(ONNX_KINDS)


def tflite_plans():
    """Hypothesis strategy of TFLite mutation plans: (seed selector, [site patches], [byte edits])."""
    return _plan(["patch", "patch", "patch", "flip_near"])


def mutate(fmt: str, plan) -> tuple[str, bytes]:
    """(seed name, mutant bytes) of ``plan``; deterministic."""
    pick, edits, byte_edits = plan
    name, data = seeds(fmt)[pick % len(seeds(fmt))]
    data = _onnx_edits(data, edits) if fmt == "onnx" else _tflite_edits(name, data, edits)
    for edit in byte_edits:
        data = byte_edit(data, *edit)
    return name, data


def byte_edit(data: bytes, kind: str, a: int, b: int, v: int) -> bytes:
    """One byte-level edit at position ``a`` modulo the length."""
    if not data:
        return data
    pos, buf = a % len(data), bytearray(data)
    if kind == "truncate":
        return bytes(buf[:pos])
    if kind == "flip":
        buf[pos] ^= 1 << (b % 8)
    elif kind == "overwrite":
        raw = (v % 2**64).to_bytes(8, "little")[: 1 + b % 8]
        buf[pos:pos + len(raw)] = raw
    elif kind == "insert":
        buf[pos:pos] = (v % 2**64).to_bytes(8, "little")[: 1 + b % 8]
    else:
        del buf[pos:pos + 1 + b % 64]
    return bytes(buf)


# --------------------------------------------------------------------------------------------- ONNX

def _i32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def _names(g) -> list[str]:
    names = [v.name for v in (*g.input, *g.initializer)]
    for n in g.node:
        names += list(n.output)
    return names or ["x"]


def _onnx_edits(data: bytes, edits) -> bytes:
    if not edits:
        return data
    m = onnx.ModelProto()
    m.ParseFromString(data)
    for kind, a, b, v in edits:
        _ONNX_EDIT[kind.split("_")[0]](m, kind, a, b, v)
    return m.SerializeToString()


def _node_edit(m, kind, a, b, v):
    g = m.graph
    if not g.node:
        return
    n = g.node[a % len(g.node)]
    names = _names(g)
    if kind == "op_type":
        n.op_type = OP_TYPES[b % len(OP_TYPES)]
    elif kind == "node_drop":
        del g.node[a % len(g.node)]
    elif kind == "node_dup":
        g.node.insert(b % (len(g.node) + 1), n)
    elif kind == "node_swap":
        i, j = a % len(g.node), b % len(g.node)
        ni, nj = onnx.NodeProto(), onnx.NodeProto()
        ni.CopyFrom(g.node[i])
        nj.CopyFrom(g.node[j])
        g.node[i].CopyFrom(nj)
        g.node[j].CopyFrom(ni)
    elif kind == "cycle":          # an input of node a becomes the output of a node at or after it
        later = [o for k in range(a % len(g.node), len(g.node)) for o in g.node[k].output] or ["y"]
        if n.input:
            n.input[b % len(n.input)] = later[v % len(later)]
        else:
            n.input.append(later[v % len(later)])
    elif kind == "output_rewire" and n.output:
        n.output[b % len(n.output)] = names[v % len(names)]


def _input_edit(m, kind, a, b, v):
    g = m.graph
    if not g.node:
        return
    n = g.node[a % len(g.node)]
    names = _names(g)
    if kind == "input_add":
        n.input.append(names[v % len(names)])
    elif not n.input:
        return
    elif kind == "input_rewire":
        n.input[b % len(n.input)] = names[v % len(names)]
    elif kind == "input_empty":
        n.input[b % len(n.input)] = ""
    elif kind == "input_missing":
        n.input[b % len(n.input)] = "no_such_value"
    elif kind == "input_drop":
        del n.input[b % len(n.input)]


def _attr_edit(m, kind, a, b, v):
    g = m.graph
    if not g.node:
        return
    n = g.node[a % len(g.node)]
    if kind == "attr_add":
        n.attribute.append(helper.make_attribute(ATTR_NAMES[b % len(ATTR_NAMES)], [v] * (1 + v % 4) if v % 2 else v))
        return
    if not n.attribute:
        return
    at = n.attribute[b % len(n.attribute)]
    if kind == "attr_drop":
        del n.attribute[b % len(n.attribute)]
    elif kind == "attr_type":
        at.type = v % 15
    elif at.type == onnx.AttributeProto.INT:
        at.i = v
    elif at.type == onnx.AttributeProto.INTS:
        if at.ints:
            at.ints[v % len(at.ints)] = v
        else:
            at.ints.append(v)
    elif at.type == onnx.AttributeProto.FLOAT:
        at.f = float(np.float32(v)) if v % 3 else float("nan")
    elif at.type == onnx.AttributeProto.TENSOR:
        _tensor_edit(at.t, b, v)
    else:
        at.s = b"\xff" + str(v).encode()


def _tensor_edit(t, b, v):
    choice = b % 4
    if choice == 0 and t.dims:
        t.dims[v % len(t.dims)] = v
    elif choice == 1:
        t.dims.append(v % 5)
    elif choice == 2:
        t.data_type = _i32(v) if v % 2 else v % 27
    elif t.raw_data:
        t.raw_data = t.raw_data[: v % (len(t.raw_data) + 1)] if v % 2 else t.raw_data + b"\x00" * (v % 9)


def _init_edit(m, kind, a, b, v):
    g = m.graph
    if not g.initializer:
        return
    t = g.initializer[a % len(g.initializer)]
    if kind == "init_drop":
        del g.initializer[a % len(g.initializer)]
    elif kind == "init_dims":
        if t.dims and b % 3:
            t.dims[b % len(t.dims)] = v
        elif b % 2 and t.dims:
            t.dims.pop()
        else:
            t.dims.append(v)
    elif kind == "init_dtype":
        t.data_type = _i32(v) if v % 5 == 0 else v % 27
    else:
        _tensor_edit(t, 3, v)


def _vi_edit(m, kind, a, b, v):
    g = m.graph
    vis = [*g.input, *g.output, *g.value_info]
    if not vis:
        return
    vi = vis[a % len(vis)]
    tt = vi.type.tensor_type
    if kind == "vi_elem":
        tt.elem_type = v % 27 if v % 4 else _i32(v)
    elif kind == "vi_drop_shape":
        vi.type.tensor_type.ClearField("shape") if b % 2 else vi.ClearField("type")
    elif tt.shape.dim:
        d = tt.shape.dim[b % len(tt.shape.dim)]
        if v % 7 == 3:
            d.dim_param = "N"
        else:
            d.dim_value = v
    else:
        tt.shape.dim.add().dim_value = v


def _model_edit(m, kind, a, b, v):
    g = m.graph
    if kind == "opset":
        if m.opset_import and b % 4:
            m.opset_import[a % len(m.opset_import)].version = OPSETS[v % len(OPSETS)]
        elif b % 2:
            m.opset_import.append(helper.make_opsetid(["", "com.microsoft", "ai.onnx.ml", "x"][a % 4], v))
        elif m.opset_import:
            m.opset_import[a % len(m.opset_import)].domain = ["ai.onnx", "com.microsoft", "bogus"][a % 3]
    elif kind == "ir_version":
        m.ir_version = v
    elif kind == "graph_output_drop" and g.output:
        del g.output[a % len(g.output)]
    elif kind == "graph_input_drop" and g.input:
        del g.input[a % len(g.input)]
    elif kind == "graph_output_name" and g.output:
        names = _names(g)
        g.output[a % len(g.output)].name = names[v % len(names)]


_ONNX_EDIT = {"op": _node_edit, "node": _node_edit, "cycle": _node_edit, "output": _node_edit,
              "input": _input_edit, "attr": _attr_edit, "init": _init_edit, "vi": _vi_edit,
              "opset": _model_edit, "ir": _model_edit, "graph": _model_edit}


# --------------------------------------------------------------------------------------------- TFLite

def _fields(tab, sites, spec):
    """spec: [(vtable slot, struct format, kind)]; kind 'scalar', 'vector' (its elements and its
    length) or 'offset' (the uoffset of a sub-table, string or vector)."""
    for slot, fmt, kind in spec:
        o = tab.Offset(slot)
        if not o:
            continue
        if kind == "scalar":
            sites.append((tab.Pos + o, fmt))
            continue
        sites.append((tab.Pos + o, "<I"))                 # the uoffset itself
        if kind == "vector":
            start = tab.Vector(o)
            sites.append((start - 4, "<I"))                 # the vector length
            size = struct.calcsize(fmt)
            sites += [(start + j * size, fmt) for j in range(min(tab.VectorLen(o), 6))]


@functools.lru_cache(maxsize=64)
def tflite_sites(name: str, data: bytes) -> tuple[tuple[int, str], ...]:
    """(byte position, struct format) of the fields of the flatbuffer ``data`` worth patching."""
    import tflite as S

    m = S.Model.GetRootAs(data, 0)
    sites: list[tuple[int, str]] = []
    _fields(m._tab, sites, [(4, "<I", "scalar"), (6, "<I", "offset"), (8, "<I", "offset"), (12, "<I", "offset")])
    for k in range(min(m.OperatorCodesLength(), 12)):
        _fields(m.OperatorCodes(k)._tab, sites, [(4, "<b", "scalar"), (8, "<i", "scalar"), (10, "<i", "scalar")])
    for k in range(min(m.BuffersLength(), 12)):
        _fields(m.Buffers(k)._tab, sites, [(4, "<B", "vector"), (6, "<Q", "scalar"), (8, "<Q", "scalar")])
    for s in range(min(m.SubgraphsLength(), 2)):
        sg = m.Subgraphs(s)
        _fields(sg._tab, sites, [(4, "<I", "offset"), (6, "<i", "vector"), (8, "<i", "vector"), (10, "<I", "offset")])
        for k in range(min(sg.TensorsLength(), 40)):
            t = sg.Tensors(k)
            _fields(t._tab, sites, [(4, "<i", "vector"), (6, "<b", "scalar"), (8, "<I", "scalar"), (12, "<I", "offset"),
                                    (14, "<B", "scalar")])
            if t.Quantization() is not None:
                _fields(t.Quantization()._tab, sites, [(8, "<f", "vector"), (10, "<q", "vector"), (16, "<i", "scalar")])
        for k in range(min(sg.OperatorsLength(), 40)):
            _fields(sg.Operators(k)._tab, sites, [(4, "<I", "scalar"), (6, "<i", "vector"), (8, "<i", "vector"),
                                                  (10, "<B", "scalar"), (12, "<I", "offset")])
    return tuple(sites)


def _tflite_edits(name: str, data: bytes, edits) -> bytes:
    if not edits:
        return data
    sites = tflite_sites(name, data)
    buf = bytearray(data)
    for kind, a, b, v in edits:
        pos, fmt = sites[a % len(sites)]
        if kind == "flip_near":
            p = min(max(pos + b % 16 - 8, 0), len(buf) - 1)
            buf[p] ^= 1 << (v % 8)
            continue
        size = struct.calcsize(fmt)
        if fmt == "<f":
            raw = struct.pack(fmt, [0.0, -1.0, float("nan"), float("inf"), 1e-45, 3e38][v % 6])
        else:
            raw = (v % 2 ** (8 * size)).to_bytes(size, "little")
        buf[pos:pos + size] = raw
    return bytes(buf)
