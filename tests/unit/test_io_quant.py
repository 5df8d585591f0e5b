"""passes/io_quant.py: the scale and zero point of a model's int8 inputs and outputs, read from the
frontend's IR (hand-built here; the expected values are the attributes written into it); the
header rendering (gcc) is in tests/c/test_io_quant.py."""
from __future__ import annotations

import numpy as np

from tinyfuse.ir import Function, TensorType, Tuple, Var, call
from tinyfuse.passes.io_quant import QParams, io_quantization


def _x(shape=(1, 4, 4, 3)):
    return Var("x", TensorType(shape, "int8"))


def test_per_tensor_through_views_and_output_quantize():
    x = _x()
    d = call("qnn.dequantize", call("reshape", x, newshape=(1, 48)), scale=0.25, zero_point=-3)
    y = call("qnn.quantize", call("nn.relu", d), scale=0.125, zero_point=7)
    ins, outs = io_quantization(Function((x,), y))
    assert ins == (QParams((0.25,), (-3,)),) and outs == (QParams((0.125,), (7,)),)
    assert ins[0].as_json() == {"scale": 0.25, "zero_point": -3}


def test_per_axis_through_a_transpose_maps_the_axis():
    x = _x()
    t = call("transpose", x, axes=(0, 3, 1, 2))                 # NHWC -> NCHW: NCHW axis 1 is NHWC axis 3
    d = call("qnn.dequantize", t, scale=np.array([0.5, 0.25, 0.125], np.float32), zero_point=0, axis=1)
    y = call("qnn.quantize", d, scale=np.array([1.0, 2.0, 4.0], np.float32), zero_point=np.array([1, 2, 3]),
             axis=-3)
    out = call("transpose", y, axes=(0, 2, 3, 1))             # back to NHWC: NCHW axis 1 is NHWC axis 3
    ins, outs = io_quantization(Function((x,), out))
    assert ins == (QParams((0.5, 0.25, 0.125), (0, 0, 0), 3),)
    assert outs == (QParams((1.0, 2.0, 4.0), (1, 2, 3), 3),)
    assert outs[0].as_json() == {"scale": [1.0, 2.0, 4.0], "zero_point": [1, 2, 3], "quant_axis": 3}


def test_unknown_when_users_disagree_or_per_axis_behind_a_reshape_and_none_for_float():
    x, f = _x(), Var("f", TensorType((1, 48), "float32"))
    a = call("qnn.dequantize", x, scale=0.5, zero_point=0)
    b = call("qnn.dequantize", x, scale=0.25, zero_point=0)
    r = call("reshape", call("add", a, b), newshape=(1, 48))
    q = call("qnn.quantize", call("add", r, f), scale=np.array([0.5] * 48, np.float32), zero_point=0, axis=1)
    ins, outs = io_quantization(Function((x, f), Tuple((call("reshape", q, newshape=(4, 12)), f))))
    assert ins == (None, None) and outs == (None, None)
