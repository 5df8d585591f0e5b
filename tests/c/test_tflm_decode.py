"""TFLM's TFLM_DECODE op (frontend/tflite/decode.py): models compressed by tflite-micro's tool (LUT per
channel / per tensor, weights and bias), with a prune mask or Huffman codes (16- and 32-bit tables,
subtables), decoded at compile time; the generated C
equals TFLM running the compressed bytes, also where TFLM's decode differs from the uncompressed model
(a per-channel table set on per-tensor-quantized weights: TFLM reads channel 0's table only). A decode
TFLM would run past its tables, and the decode types tinyfuse has no decoder for, are one error line."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tests.builders import tflm_decode as td
from tests.conftest import compile_and_run, require_programs


def _case(kind: str, depthwise: bool, per_channel: bool):
    model, idx, x = td.conv_model(np.random.default_rng(1), depthwise, per_channel)
    axis = 3 if depthwise else 0
    compressed = {"lut3": lambda: td.lut(model, {idx["weights"]: (3, axis)}),
                  "lut_per_tensor": lambda: td.lut(model, {idx["weights"]: (5, None)}),
                  "lut_bias": lambda: td.lut(model, {idx["weights"]: (4, axis), idx["bias"]: (3, 0)}),
                  "prune": lambda: td.prune(model, idx["weights"], axis),
                  "huffman16": lambda: td.huffman(model, idx["weights"], axis, first=2),
                  "huffman32": lambda: td.huffman(model, idx["weights"], axis, first=1, wide=True)}[kind]()
    return model, compressed, x


@pytest.mark.parametrize("kind,per_channel", [("lut3", True), ("lut3", False), ("lut_per_tensor", False),
                                              ("lut_bias", True), ("lut_bias", False), ("prune", True),
                                              ("prune", False), ("huffman16", True), ("huffman32", False)])
@pytest.mark.parametrize("depthwise", [False, True], ids=["conv", "depthwise"])
def test_decoded_model_equals_tflm(tmp_path, kind, per_channel, depthwise):
    require_programs("gcc")
    model, compressed, x = _case(kind, depthwise, per_channel)
    want = td.tflm(compressed, x)
    got, result = compile_and_run(compressed, [x], tmp_path)
    assert np.array_equal(got[0].reshape(want.shape), want)
    if not kind.startswith("lut") or kind == "lut_per_tensor" or per_channel:      # tables match the quantization
        assert np.array_equal(want, td.tflm(model, x))
    assert len(result.kernels) == len(compile_model(model).kernels)     # decoded at compile time: no kernel


def _with_ancillary_byte(compressed: bytes, offset: int, value: int) -> bytes:
    from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
    m = me.read(compressed)
    decode = m.subgraphs[0].operators[0]
    data = bytearray(decode.inputs[1].buffer.data)
    data[offset] = value
    decode.inputs[1].buffer.data = bytes(data)
    return bytes(m.build())


def _with_decoded_shape(compressed: bytes, shape) -> bytes:
    from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
    m = me.read(compressed)
    m.subgraphs[0].operators[0].outputs[0].shape = shape
    return bytes(m.build())


@pytest.mark.parametrize("shape,words", [((4000, 3, 3, 4), ["more elements than the", "encoded bytes have bits"]),
                                         ((5, -1, 3, 4), ["static, non-empty"])])
def test_damaged_decode_shape_is_one_error_line(shape, words):
    """Found by mutating the compressed models: a huge or negative decoded shape (was a MemoryError / ValueError)."""
    _, compressed, _ = _case("huffman16", False, True)
    with pytest.raises(TinyfuseError) as e:
        compile_model(_with_decoded_shape(compressed, shape))
    assert "\n" not in str(e.value) and all(w in str(e.value) for w in words), str(e.value)


@pytest.mark.parametrize("edit,words", [
    (None, ["TFLM_DECODE' v1", "lies past the", "ancillary tensor"]),
    ((0, 3), ["decode type 3 (unknown) is not supported"]),
    ((0, 200), ["decode type 200 (custom)"]),
    ((1, 2), ["decode metadata version 2"]),
])
def test_undecodable_is_one_error_line(edit, words):
    _, compressed, _ = _case("lut_per_tensor" if edit is None else "lut3", False, edit is None)
    if edit is not None:
        compressed = _with_ancillary_byte(compressed, *edit)
    with pytest.raises(TinyfuseError) as e:
        compile_model(compressed)
    assert "\n" not in str(e.value) and all(w in str(e.value) for w in words), str(e.value)
