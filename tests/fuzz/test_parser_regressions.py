"""Every crash the parser fuzzer (tests/fuzz/parsers.py) found, minimised: each mutant is rebuilt here
from a small generated model and one or two field edits, and must now give one clear TinyfuseError line
(before the fix: the exception named in each test's docstring, i.e. exit 3 from the CLI)."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.builders.float_models import model_bytes
from tests.builders.tflm_cases import tflm_oneop
from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError


def refused(tmp_path, data: bytes, suffix: str, match: str) -> str:
    path = tmp_path / f"mutant.{suffix}"
    path.write_bytes(data)
    with pytest.raises(TinyfuseError, match=match) as e:
        compile_model(path)
    assert "\n" not in str(e.value)
    return str(e.value)


# ----------------------------------------------------------------------------------------- TFLite

def put(data: bytes, tab, slot: int, fmt: str, value, element: int | None = None) -> bytes:
    """``data`` with field ``slot`` (schema.fbs vtable offset) of table ``tab`` set to ``value``; with
    ``element``: that element of the vector field (-1: the vector's length)."""
    o = tab.Offset(slot)
    assert o, f"field at slot {slot} absent"
    pos = tab.Pos + o if element is None else tab.Vector(o) + (element * struct.calcsize(fmt) if element >= 0 else -4)
    buf = bytearray(data)
    struct.pack_into(fmt, buf, pos, value)
    return bytes(buf)


def conv_tflite() -> bytes:
    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (4, 3, 3, 2), dtype=np.int8)
    return tflm_oneop().conv2d((1, 5, 5, 2), w, np.zeros(4, np.int32), (0.05, -3), [0.01] * 4, (0.2, 1))


def tensor(data: bytes, name: str):
    import tflite

    sg = tflite.Model.GetRootAs(data, 0).Subgraphs(0)
    return next(sg.Tensors(k) for k in range(sg.TensorsLength()) if sg.Tensors(k).Name() == name.encode())


def test_tflite_fewer_scales_than_zero_points(tmp_path):
    """Per-channel filter with its scale vector cut to 1 entry (4 zero points): ValueError from
    np.broadcast_to in tflite._tensor."""
    data = conv_tflite()
    q = tensor(data, "w").Quantization()
    refused(tmp_path, put(data, q._tab, 8, "<I", 1, element=-1), "tflite", "has 1 scales but 4 zero points")


@pytest.mark.parametrize("value", [-1.0, 0.0, float("nan")])
def test_tflite_scale_not_positive(tmp_path, value):
    """A filter scale of -1 or NaN: ValueError 'requantization multiplier must be positive' from quant.py
    (an activation's NaN scale: 'cannot convert float NaN to integer' in tflite_int8.quantize_f32); a
    0 scale compiled into C that divides by it."""
    data = conv_tflite()
    q = tensor(data, "w").Quantization()
    refused(tmp_path, put(data, q._tab, 8, "<f", value, element=2), "tflite", "not positive and finite")


def test_tflite_subgraph_input_index_out_of_range(tmp_path):
    """SubGraph.inputs[0] = 99 in a 4-tensor subgraph: IndexError in from_tflite."""
    import tflite

    data = conv_tflite()
    sg = tflite.Model.GetRootAs(data, 0).Subgraphs(0)
    refused(tmp_path, put(data, sg._tab, 6, "<i", 99, element=0), "tflite", "subgraph input tensor index 99 out of range")


def test_tflite_operator_with_too_few_inputs(tmp_path):
    """A one-input SOFTMAX whose operator code says CONV_2D: IndexError in convert_conv2d (op.inputs[1])."""
    import tflite

    data = tflm_oneop().softmax((1, 10), (0.05, -3))
    code = tflite.Model.GetRootAs(data, 0).OperatorCodes(0)
    data = put(data, code._tab, 10, "<i", tflite.BuiltinOperator.CONV_2D)
    if code._tab.Offset(4):
        data = put(data, code._tab, 4, "<b", tflite.BuiltinOperator.CONV_2D)
    refused(tmp_path, data, "tflite", r"CONV_2D v1.*expects 2 input tensors, got 1")


# ----------------------------------------------------------------------------------------- ONNX

def test_onnx_qlinearadd_with_seven_inputs(tmp_path):
    """com.microsoft QLinearAdd without C_zero_point: ValueError 'not enough values to unpack' in
    onnx_quant._binary (the onnx package has no schema to count the inputs)."""
    names = ["A", "sa", "za", "B", "sb", "zb", "sc"]
    inits = {"sa": np.float32(0.1), "za": np.int8(0), "B": np.ones((1, 4), np.int8), "sb": np.float32(0.1),
             "zb": np.int8(0), "sc": np.float32(0.2)}
    data = model_bytes([helper.make_node("QLinearAdd", names, ["Y"], domain="com.microsoft")],
                       {"A": (TensorProto.INT8, [1, 4])}, inits=inits, domain_opsets=[("com.microsoft", 1)])
    refused(tmp_path, data, "onnx", "QLinearAdd.*has 7 inputs, expected 8")


def test_onnx_string_attribute_not_utf8(tmp_path):
    """Conv auto_pad = b'\\xffSAME': UnicodeDecodeError in Node.attr."""
    w = np.ones((2, 1, 3, 3), np.float32)
    node = helper.make_node("Conv", ["X", "W"], ["Y"], name="conv", auto_pad=b"\xffSAME")
    refused(tmp_path, model_bytes([node], {"X": [1, 1, 5, 5]}, inits={"W": w}), "onnx",
            "attribute 'auto_pad' is not valid UTF-8")


def test_onnx_clip_bound_not_scalar(tmp_path):
    """Clip min a [6, 5] initializer: ValueError 'cannot reshape array of size 30 into shape ()'."""
    data = model_bytes([helper.make_node("Clip", ["X", "lo"], ["Y"])], {"X": [1, 4]},
                       inits={"lo": np.zeros((6, 5), np.float32)})
    refused(tmp_path, data, "onnx", r"min must be a scalar, got shape \[6, 5\]")


def test_onnx_uint4_weight(tmp_path):
    """A MatMul weight initializer retyped to UINT4: KeyError 'uint4' in codegen/emit.py."""
    w = helper.make_tensor("W", TensorProto.UINT4, [4, 2], [1] * 8)
    graph = helper.make_graph([helper.make_node("MatMul", ["X", "W"], ["Y"])], "g",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [w])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()
    refused(tmp_path, data, "onnx", "constant input 'W' has element type uint4")


@pytest.mark.parametrize("scale", [-128.0, 0.0, float("inf")])
def test_onnx_quantization_scale_not_positive(tmp_path, scale):
    """QuantizeLinear with scale -128 (a dropped input shifted a zero point into the scale slot), 0 or
    inf: in ad01_int8.onnx a ValueError 'requantization multiplier must be positive and finite' from
    quant.py; this minimal model compiled, with a scale that is meaningless."""
    nodes = [helper.make_node("QuantizeLinear", ["X", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]), helper.make_node("Relu", ["d"], ["Y"])]
    data = model_bytes(nodes, {"X": [1, 8]}, inits={"s": np.float32(scale), "z": np.int8(0)})
    refused(tmp_path, data, "onnx", "quantization scale .* is not positive and finite")


def test_onnx_constant_value_dims_do_not_match_data(tmp_path):
    """A Constant node whose value tensor has dims [2] but 3 elements: ValueError 'cannot reshape array
    of size 3 into shape (2,)' from numpy_helper.to_array in convert_constant."""
    value = helper.make_tensor("v", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    value.dims[0] = 2
    nodes = [helper.make_node("Constant", [], ["c"], value=value), helper.make_node("Add", ["X", "c"], ["Y"])]
    refused(tmp_path, model_bytes(nodes, {"X": [1, 3]}), "onnx", "attribute 'value' cannot be read: cannot reshape")


@pytest.mark.parametrize("field", ["buffers", "operatorCodes"])
def test_tflite_model_without_buffers_or_operator_codes(tmp_path, field):
    """A Model table without its buffers / operator_codes vector: TypeError len(None) in tflite._tensor
    and tflite._operator. Now the weights are read as an activation (refused: per-axis) and the opcode index is out of range."""
    import flatbuffers
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as S

    m = S.ModelT.InitFromPackedBuf(conv_tflite(), 0)
    setattr(m, field, None)
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    refused(tmp_path, bytes(b.Output()), "tflite", "opcode index 0 out of range|'w' .* quantized per axis")


def test_tflite_zero_point_out_of_range(tmp_path):
    """The int8 input's zero point patched to -2**63: OverflowError 'Python int too large to convert to
    C long' in passes/check_overflow.py (the frontend passed it on)."""
    data = tflm_oneop().fully_connected((1, 8), np.ones((3, 8), np.int8), np.zeros(3, np.int32), (0.05, -3), 0.02,
                                        (0.3, 0))
    q = tensor(data, "x").Quantization()
    refused(tmp_path, put(data, q._tab, 10, "<q", -2**63, element=0), "tflite", r"zero point \[-9223372036854775808\], "
            "outside the range of int8")


def test_onnx_per_axis_scale_of_the_wrong_length(tmp_path):
    """A weight DequantizeLinear whose per-axis scale does not match the axis (found with seed 7 after the
    new ops merged: a broadcasting ValueError in qnn.dequantize's numpy reference)."""
    w = np.ones((4, 3), np.int8)
    nodes = [helper.make_node("DequantizeLinear", ["W", "s", "z"], ["Wf"], axis=0),
             helper.make_node("MatMul", ["X", "Wf"], ["Y"])]
    inits = {"W": w, "s": np.full(8, 0.1, np.float32), "z": np.zeros(8, np.int8)}
    refused(tmp_path, model_bytes(nodes, {"X": [1, 4]}, inits=inits), "onnx", "per-axis scale of 8 values")
