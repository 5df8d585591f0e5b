"""shift_uint8 (passes/shift_uint8.py): a uint8 activation as its int8 twin q − 128 with zero point
z − 128 is exact. Oracle: the ONNX QuantizeLinear/DequantizeLinear formulas in float64 (uint8 range),
never tinyfuse's own output."""
import numpy as np
import pytest

from tinyfuse.errors import TinyfuseError
from tinyfuse.ir import Constant, Function, IRModule, TensorType, Var, call, post_order
from tinyfuse.ir.interpreter import evaluate
from tinyfuse.passes.shift_uint8 import shift_uint8


def _module(params, body) -> IRModule:
    return IRModule(Function(tuple(params), body), "m", ("y",))


def _dtypes(func) -> set[str]:
    return {n.ty.dtype for n in post_order(func.body) if not isinstance(n, (Var, Constant))}


@pytest.mark.parametrize("scale,zp", [(0.05, 128), (0.1, 0), (0.02, 255), (0.3, 17)])
def test_quantize_uint8_then_dequantize_is_unchanged(scale, zp):
    """float → QuantizeLinear(uint8) → MaxPool → DequantizeLinear: equal to the ONNX formulas
    (round half to even, saturate to [0, 255]) after the shift, and nothing uint8 is left inside."""
    x = Var("x", TensorType((1, 2, 4, 8), "float32"))
    q = call("qnn.quantize", x, scale=scale, zero_point=zp, out_dtype="uint8")
    p = call("nn.max_pool2d", q, pool_size=(2, 2), strides=(2, 2), padding=(0, 0, 0, 0))
    mod = shift_uint8(_module([x], call("qnn.dequantize", p, scale=scale, zero_point=zp)))
    assert "uint8" not in _dtypes(mod.main)
    xv = np.linspace(-60, 60, 64, dtype=np.float32).reshape(1, 2, 4, 8)
    qv = np.clip(np.rint(xv.astype(np.float64) / np.float32(scale)) + zp, 0, 255)
    pooled = qv.reshape(1, 2, 2, 2, 4, 2).max(axis=(3, 5))
    want = ((pooled - zp) * np.float32(scale)).astype(np.float32)
    assert np.array_equal(evaluate(mod.main, [xv])[0], want)


def test_uint8_io_stays_uint8_and_every_value_round_trips():
    """A uint8 model input and output keep their dtype; all 256 values pass the boundary shifts
    exactly, and a uint8 pad value (onnxruntime pads with the zero point) keeps its value."""
    x = Var("x", TensorType((1, 256), "uint8"))
    padded = call("nn.pad", call("reshape", x, newshape=(1, 1, 256)), pad_width=((0, 0), (0, 0), (1, 2)), pad_value=7)
    mod = shift_uint8(_module([x], call("reshape", padded, newshape=(1, 259))))
    assert mod.main.params[0].ty.dtype == "uint8" and mod.main.body.ty.dtype == "uint8"
    assert "int8" in _dtypes(mod.main)
    xv = np.arange(256, dtype=np.uint8).reshape(1, 256)
    want = np.concatenate([[7], np.arange(256), [7, 7]]).astype(np.uint8).reshape(1, 259)
    assert np.array_equal(evaluate(mod.main, [xv])[0], want)


def test_uint8_weights_shift_with_their_zero_point():
    """dequantize(W_u8, s, z) = s·(W − z) = s·((W − 128) − (z − 128)) per channel."""
    w = np.arange(24, dtype=np.uint8).reshape(4, 6) * 10
    z = np.array([0, 128, 200, 255], np.int64)
    x = Var("x", TensorType((1, 4), "float32"))
    dq = call("qnn.dequantize", Constant(w), scale=np.float32([0.5, 0.25, 1.0, 2.0]), zero_point=z, axis=0)
    x8 = call("qnn.quantize", x, scale=0.1, zero_point=128, out_dtype="uint8")
    y = call("nn.matmul", call("qnn.dequantize", x8, scale=0.1, zero_point=128), dq)
    mod = shift_uint8(_module([x], y))
    (w8,) = [n for n in post_order(mod.main.body) if isinstance(n, Constant) and n.ty.ndim == 2]
    assert w8.ty.dtype == "int8"
    xv = np.float32([[1.0, -2.0, 0.5, 3.0]])
    want = np.clip(np.rint(xv.astype(np.float64) / np.float32(0.1)) + 128, 0, 255) - 128
    wreal = (w.astype(np.float64) - z[:, None]) * np.float32([0.5, 0.25, 1.0, 2.0])[:, None]
    assert np.allclose(evaluate(mod.main, [xv])[0], (want * np.float32(0.1)) @ wreal, rtol=1e-5)


def test_arithmetic_on_uint8_values_is_refused():
    x = Var("x", TensorType((1, 8), "float32"))
    q = call("qnn.quantize", x, scale=0.1, zero_point=3, out_dtype="uint8")
    y = call("add", q, Constant(np.ones((1, 8), np.uint8)), span="plus")
    with pytest.raises(TinyfuseError, match="'plus' .add. on a uint8 activation is not supported"):
        shift_uint8(_module([x], y))


def test_a_uint8_model_input_is_read_as_is_by_ops_that_take_uint8():
    """Cast(uint8 → float32) of an image input, and a dequantize beside it: the cast reads the
    unshifted input (values 0..255), the dequantize its shifted twin."""
    x = Var("x", TensorType((1, 4), "uint8"))
    y = call("add", call("cast", x, dtype="float32"), call("qnn.dequantize", x, scale=0.5, zero_point=100))
    mod = shift_uint8(_module([x], y))
    xv = np.uint8([[0, 100, 200, 255]])
    want = xv.astype(np.float32) + (xv.astype(np.float32) - 100) * 0.5
    assert np.array_equal(evaluate(mod.main, [xv])[0], want)


def test_module_without_uint8_is_returned_as_is():
    x = Var("x", TensorType((1, 8), "int8"))
    mod = _module([x], call("reshape", x, newshape=(8,)))
    assert shift_uint8(mod) is mod
