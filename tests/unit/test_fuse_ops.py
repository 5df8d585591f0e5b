"""Structural tests of the passes (TVM style: build a graph, run the pass, look at the result)."""
import numpy as np

from tinyfuse.frontend import from_onnx
from tinyfuse.ir import Call, Constant, Function, TensorType, Var, call, iter_calls
from tinyfuse.ir.expr import IRModule
from tinyfuse.ir.printer import astext
from tinyfuse.passes.convert_layout import convert_layout
from tinyfuse.passes.fold_batchnorm import fold_batchnorm
from tinyfuse.options import CompileOptions
from tinyfuse.passes.pipeline import run_pipeline
from tests.builders import residual_block


def groups(mod):
    return [c.op.attrs["name"] for c in iter_calls(mod.main) if isinstance(c.op, Function)]


def test_conv_bias_relu_is_one_kernel_and_residual_add_joins_later_anchor():
    mod = run_pipeline(from_onnx(residual_block(), "residual"), CompileOptions.resolve())
    assert groups(mod) == ["fused_transpose", "fused_conv2d_add_relu", "fused_conv2d_add_add_relu", "fused_avg_pool2d",
                           "fused_matmul_add", "fused_softmax"]


def test_disabled_fusion_gives_one_kernel_per_op():
    mod = run_pipeline(from_onnx(residual_block(), "residual"), CompileOptions.resolve(disabled_passes={"fuse_ops"}))
    assert groups(mod) == ["fused_transpose", "fused_conv2d", "fused_add", "fused_relu", "fused_conv2d", "fused_add",
                           "fused_add", "fused_relu", "fused_avg_pool2d", "fused_matmul", "fused_add", "fused_softmax"]


def test_batchnorm_folds_into_conv_weights():
    x = Var("x", TensorType((1, 2, 3, 3), "float32"))
    w = np.arange(2 * 2 * 1 * 1, dtype=np.float32).reshape(2, 2, 1, 1) + 1
    conv = call("nn.conv2d", x, Constant(w))
    p = lambda v: Constant(np.array(v, np.float32).reshape(1, 2, 1, 1))  # noqa: E731
    bn = call("nn.batch_norm", conv, p([2, 3]), p([1, 1]), p([0.5, 0]), p([3, 8]), epsilon=1.0)
    mod = fold_batchnorm(IRModule(Function((x,), bn), "m", ("y",)))
    ops = [c.op for c in iter_calls(mod.main)]
    assert ops == ["nn.conv2d", "add"], astext(mod)
    new_w = mod.main.body.args[0].args[1].value
    # s = gamma / sqrt(var + eps) = [2/2, 3/3] = [1, 1]; b' = beta - mean*s = [0.5, 1]
    np.testing.assert_allclose(new_w, w * 1.0)
    np.testing.assert_allclose(mod.main.body.args[1].value.reshape(-1), [0.5, 1.0])


def test_convert_layout_leaves_no_transposes_between_kernels():
    mod = convert_layout(from_onnx(residual_block(), "residual"))
    transposes = [c for c in iter_calls(mod.main) if c.op == "transpose"]
    assert len(transposes) == 1 and transposes[0].args[0] is mod.main.params[0]  # only the model input
    convs = [c for c in iter_calls(mod.main) if c.op == "nn.conv2d"]
    assert all(c.attrs["data_layout"] == "NHWC" and c.attrs["kernel_layout"] == "OHWI" for c in convs)


def test_printer_is_relay_like():
    text = astext(run_pipeline(from_onnx(residual_block(), "residual"), CompileOptions.resolve()))
    assert "fn /* Primitive, fused_conv2d_add_relu */" in text
    assert "nn.conv2d(%p0, meta[c0], strides=[1, 1], padding=[1, 1, 1, 1]" in text
    assert "/* ty=Tensor[(1, 6, 7, 8), float32] */" in text


def test_fusion_never_puts_two_anchors_in_one_group():
    mod = run_pipeline(from_onnx(residual_block(), "residual"), CompileOptions.resolve())
    for c in iter_calls(mod.main):
        if isinstance(c.op, Function):
            anchors = [n for n in iter_calls(c.op) if n.op in ("nn.conv2d", "nn.matmul", "nn.avg_pool2d",
                                                                 "nn.max_pool2d")]
            assert len(anchors) <= 1
    assert isinstance(mod.main.body, Call)


def test_eliminate_dead_code_drops_noop_ops():
    from tinyfuse.passes.eliminate_dead_code import eliminate_dead_code
    x = Var("x", TensorType((1, 4), "float32"))
    y = call("clip", call("reshape", call("nn.relu", x), newshape=(1, 4)))
    mod = eliminate_dead_code(IRModule(Function((x,), y), "m", ("y",)))
    assert [c.op for c in iter_calls(mod.main)] == ["nn.relu"]
