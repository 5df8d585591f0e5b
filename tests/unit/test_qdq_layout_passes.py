"""shift_uint8 and qdq_layout (issue 14) on the IR: both leave every value the model computes unchanged
(the numpy interpreter, i.e. the ops' ONNX-spec ``compute``, before and after, bit for bit), and they
change what they claim: uint8 Q/DQ pairs become int8, transposes move onto the int8 side with the
per-axis ``axis`` following the permutation."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse.frontend import from_onnx
from tinyfuse.ir import Constant, Function, IRModule, Var, call, post_order
from tinyfuse.ir.interpreter import run_module
from tinyfuse.ir.types import TensorType
from tinyfuse.passes.qdq_layout import qdq_layout
from tinyfuse.passes.shift_uint8 import shift_uint8
from tests.builders.mobilenet_v1 import mobilenet_v1, quantize_static_qdq


def _calls(mod, op):
    return [n for n in post_order(mod.main.body) if getattr(n, "op", None) == op]


def test_uint8_pairs_become_int8_with_the_same_reals(tmp_path):
    mod = from_onnx(quantize_static_qdq(mobilenet_v1(8, widths=(4, 8)), tmp_path, "QUInt8"))
    assert {n.attrs["out_dtype"] for n in _calls(mod, "qnn.quantize")} == {"uint8"}
    new = shift_uint8(mod)
    assert {n.attrs["out_dtype"] for n in _calls(new, "qnn.quantize")} == {"int8"}
    rng = np.random.default_rng(0)
    for scale in (0.5, 3.0, 100.0):            # 100: every quantize saturates somewhere
        x = (rng.standard_normal((1, 3, 8, 8)) * scale).astype(np.float32)
        np.testing.assert_array_equal(run_module(new, [x])[0], run_module(mod, [x])[0])


def _weight_model(w_u8: np.ndarray, zero_point: int):
    x = Var("x", TensorType((1, 2, 4, 4), "float32"))
    q = call("qnn.quantize", x, scale=0.1, zero_point=128, axis=1, out_dtype="uint8")
    dq = call("qnn.dequantize", q, scale=0.1, zero_point=128, axis=1)
    w = call("qnn.dequantize", Constant(w_u8), scale=0.02, zero_point=zero_point, axis=0)
    y = call("nn.conv2d", dq, w, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1)
    return IRModule(Function((x,), y, {}), "m", ("y",))


@pytest.mark.parametrize("zero_point", [128, 100])
def test_uint8_weights_shift_to_int8_with_the_same_reals(zero_point):
    """W − 128 with zero point z − 128 is exact for any uint8 weights (legalize_qdq later folds a nonzero
    weight zero point into W − z, int16 where it does not fit int8)."""
    w = np.random.default_rng(1).integers(0, 256, (3, 2, 1, 1)).astype(np.uint8)
    w[0, 0, 0, 0], w[1, 0, 0, 0] = 0, 255                   # both ends of the uint8 range
    mod = _weight_model(w, zero_point)
    new = shift_uint8(mod)
    consts = [n.args[0] for n in _calls(new, "qnn.dequantize") if isinstance(n.args[0], Constant)]
    assert [str(c.ty.dtype) for c in consts] == ["int8"]
    assert [n.attrs["zero_point"] for n in _calls(new, "qnn.dequantize") if isinstance(n.args[0], Constant)] \
        == [zero_point - 128]
    x = np.random.default_rng(2).standard_normal((1, 2, 4, 4)).astype(np.float32) * 5
    np.testing.assert_array_equal(run_module(new, [x])[0], run_module(mod, [x])[0])


def test_model_output_quantize_keeps_uint8():
    x = Var("x", TensorType((1, 4), "float32"))
    y = call("qnn.quantize", x, scale=0.1, zero_point=3, axis=1, out_dtype="uint8")
    mod = IRModule(Function((x,), y, {}), "m", ("y",))
    assert shift_uint8(mod).main.body.ty.dtype == "uint8"


def test_transpose_of_a_per_channel_dequantize_moves_to_int8():
    """transpose(dequantize(x_int8, per-channel on NHWC axis 3)) → dequantize(transpose(x), axis 1)."""
    x = Var("x", TensorType((1, 3, 4, 5), "int8"))
    scale, zp = (0.5, 0.25, 0.125, 2.0, 1.0), (1, -2, 3, 0, -128)
    y = call("transpose", call("qnn.dequantize", x, scale=scale, zero_point=zp, axis=3), axes=(0, 3, 1, 2))
    mod = IRModule(Function((x,), y, {}), "m", ("y",))
    new = qdq_layout(mod)
    body = new.main.body
    assert body.op == "qnn.dequantize" and body.attrs["axis"] == 1 and body.args[0].op == "transpose"
    a = np.random.default_rng(3).integers(-128, 128, (1, 3, 4, 5)).astype(np.int8)
    np.testing.assert_array_equal(run_module(new, [a])[0], run_module(mod, [a])[0])


def test_quantize_of_a_transpose_moves_and_cancels():
    """quantize(transpose(f)) then dequantize → transpose back: the two transposes meet and vanish
    (f computed in the graph; the model's own input is the exception, next test)."""
    x = Var("x", TensorType((1, 5, 3, 4), "float32"))
    scale = (0.1, 0.2, 0.3, 0.4, 0.5)
    q = call("qnn.quantize", call("transpose", call("nn.relu", x), axes=(0, 2, 3, 1)), scale=scale, zero_point=0, axis=3,
             out_dtype="int8")
    y = call("transpose", call("qnn.dequantize", q, scale=scale, zero_point=0, axis=3), axes=(0, 3, 1, 2))
    mod = IRModule(Function((x,), y, {}), "m", ("y",))
    new = qdq_layout(mod)
    assert not _calls(new, "transpose")
    assert [n.attrs["axis"] for n in _calls(new, "qnn.quantize")] == [1]
    a = (np.random.default_rng(4).standard_normal((1, 5, 3, 4)) * 20).astype(np.float32)
    np.testing.assert_array_equal(run_module(new, [a])[0], run_module(mod, [a])[0])


def test_shared_dequantize_is_not_duplicated():
    x = Var("x", TensorType((1, 2, 3, 4), "int8"))
    dq = call("qnn.dequantize", x, scale=0.5, zero_point=0, axis=1)
    y = call("add", call("transpose", dq, axes=(0, 3, 1, 2)), call("transpose", dq, axes=(0, 3, 1, 2)))
    mod = IRModule(Function((x,), y, {}), "m", ("y",))
    assert len(_calls(qdq_layout(mod), "qnn.dequantize")) == 1


def test_uint8_through_pool_and_flatten_becomes_int8():
    """QOperator form: quantize_u8 → max pool → reshape → dequantize; every uint8 value shifts to int8."""
    x = Var("x", TensorType((1, 2, 4, 4), "float32"))
    q = call("qnn.quantize", x, scale=0.05, zero_point=200, axis=1, out_dtype="uint8")
    p = call("nn.max_pool2d", q, pool_size=(2, 2), strides=(2, 2), padding=(0, 0, 0, 0))
    y = call("qnn.dequantize", call("reshape", p, newshape=(1, 8)), scale=0.05, zero_point=200, axis=1)
    mod = IRModule(Function((x,), y, {}), "m", ("y",))
    new = shift_uint8(mod)
    assert {str(n.ty.dtype) for n in post_order(new.main.body) if getattr(n, "op", "") != "qnn.dequantize"
            and n is not new.main.params[0]} == {"int8"}
    a = (np.random.default_rng(5).standard_normal((1, 2, 4, 4)) * 8).astype(np.float32)
    np.testing.assert_array_equal(run_module(new, [a])[0], run_module(mod, [a])[0])


@pytest.mark.filterwarnings("ignore:legalize_qdq")
def test_issue_mobilenet_v1_arena_is_the_float_image(tmp_path):
    """The issue's case: a 96x96 MobileNetV1-style net with onnxruntime's uint8 activations ran in float
    (float image + its float NHWC copy, 2 · 110592 B); int8 end to end, the arena is the float image the
    API keeps in it (3 · 96 · 96 · 4 B): the int8 activations fit in its place."""
    from tinyfuse.driver import compile_model
    model = quantize_static_qdq(mobilenet_v1(96, widths=(8, 16, 32, 32, 64), first_stride=2), tmp_path, "QUInt8")
    result = compile_model(model)
    assert [str(s.call.ty.dtype) for s in result.steps].count("float32") == 1
    assert result.arena_bytes == 3 * 96 * 96 * 4
    # with the image and the logits in caller-owned buffers (--io-buffers caller) the int8 activations
    # alone fit the issue's target arena (32,640 B): the image's int8 NHWC copy (3 · 96 · 96 B) and the
    # first fused chain's output at most
    caller = compile_model(model, io_buffers="caller")
    assert caller.arena_bytes <= 32640 and caller.io_bytes == 3 * 96 * 96 * 4 + 4 * 4


def test_model_input_quantize_then_transpose_is_one_group_in_place():
    """transpose(quantize(image)) → quantize(transpose(image)): fuse_ops makes it one kernel, and the
    memory plan's ``transpose`` rule writes its int8 NHWC output over the end of the float NCHW image."""
    from tinyfuse.memory.inplace import options
    from tinyfuse.passes.fuse_ops import fuse_ops
    x = Var("x", TensorType((1, 3, 8, 8), "float32"))
    t = call("transpose", call("qnn.quantize", x, scale=0.1, zero_point=1, axis=1, out_dtype="int8"), axes=(0, 2, 3, 1))
    mod = IRModule(Function((x,), call("nn.relu", t), {}), "m", ("y",))
    new = qdq_layout(mod)
    q = new.main.body.args[0]
    assert q.op == "qnn.quantize" and q.args[0].op == "transpose" and q.attrs["axis"] == 3
    a = (np.random.default_rng(6).standard_normal((1, 3, 8, 8)) * 9).astype(np.float32)
    np.testing.assert_array_equal(run_module(new, [a])[0], run_module(mod, [a])[0])
    kernel = fuse_ops(new).main.body.args[0].op        # relu(group): the group is relu's operand
    (opt,) = options(kernel)
    assert (opt.rule, opt.order, opt.rel) == ("transpose", "descending", (3 * 64 * 4 - 3 * 64) // 64 * 64)
