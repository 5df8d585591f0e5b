"""Every pass keeps the numbers: numpy interpreter before vs after each pass, on random inputs
(1e-5 relative), over the demo DS-CNN, a residual block and the real float models in ../shared."""
import importlib.util

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tinyfuse.frontend import from_onnx
from tinyfuse.ir.interpreter import run_module
from tinyfuse.options import CompileOptions
from tinyfuse.passes.pipeline import run_pipeline
from tests.conftest import ROOT, shared_or_skip


def build_dscnn(tmp_path):
    spec = importlib.util.spec_from_file_location("build_models", ROOT / "examples" / "build_models.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build_dscnn(str(tmp_path / "dscnn.onnx"))


def residual_block() -> onnx.ModelProto:
    """x → conv → BN → relu → conv → BN → (+ x) → relu → GAP → flatten → gemm → softmax (NCHW)."""
    rng = np.random.default_rng(3)
    inits, nodes = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(arr.astype(np.float32), name))
        return name

    def conv_bn(x, name, relu):
        const(f"{name}_w", rng.standard_normal((8, 8, 3, 3)) * 0.2)
        nodes.append(helper.make_node("Conv", [x, f"{name}_w"], [f"{name}_c"], pads=[1, 1, 1, 1], name=name))
        for p, v in (("g", rng.uniform(0.5, 1.5, 8)), ("b", rng.normal(0, 0.1, 8)), ("m", rng.normal(0, 0.1, 8)),
                     ("v", rng.uniform(0.5, 1.5, 8))):
            const(f"{name}_{p}", v)
        nodes.append(helper.make_node("BatchNormalization", [f"{name}_c"] + [f"{name}_{p}" for p in "gbmv"],
                                      [f"{name}_bn"], name=f"{name}_bn"))
        if relu:
            nodes.append(helper.make_node("Relu", [f"{name}_bn"], [f"{name}_r"], name=f"{name}_relu"))
            return f"{name}_r"
        return f"{name}_bn"

    y = conv_bn(conv_bn("x", "c1", True), "c2", False)
    nodes += [helper.make_node("Add", [y, "x"], ["s"], name="residual"),
              helper.make_node("Relu", ["s"], ["sr"], name="relu_out"),
              helper.make_node("GlobalAveragePool", ["sr"], ["g"], name="gap"),
              helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
              helper.make_node("Gemm", ["f", const("fc_w", rng.standard_normal((5, 8))), const("fc_b", rng.standard_normal(5))],
                               ["logits"], transB=1, name="fc"),
              helper.make_node("Softmax", ["logits"], ["y"], axis=1, name="softmax")]
    graph = helper.make_graph(nodes, "residual", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 6, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def model_cases(tmp_path):
    yield "dscnn", from_onnx(build_dscnn(tmp_path))
    yield "residual", from_onnx(residual_block(), "residual")


def check_pipeline(mod, seed=0):
    """Run the pipeline the CLI runs (host options), comparing the outputs after each pass with the
    outputs before it."""
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(p.ty.shape).astype(np.float32) for p in mod.main.params]
    outputs = [run_module(mod, inputs)]
    ran = []

    def after(name, new):
        ran.append(name)
        got = run_module(new, inputs)
        for b, a in zip(outputs[-1], got):
            assert a.shape == b.shape, name
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * float(np.max(np.abs(b))), err_msg=name)
        outputs.append(got)
    mod = run_pipeline(mod, CompileOptions.resolve(), after=after)
    assert "fuse_ops" in ran and ran[-1] == "poly_fuse"
    return mod


@pytest.mark.parametrize("seed", [0, 1])
def test_each_pass_keeps_outputs(tmp_path, seed):
    for _, mod in model_cases(tmp_path):
        check_pipeline(mod, seed)


@pytest.mark.parametrize("model", ["kws_ref_model_float32", "pretrainedResnet", "ad01_fp32",
                                   "mobilenetv2_035_96", "resnet10_w16_64"])
def test_each_pass_keeps_outputs_real_models(model):
    path = shared_or_skip("models", "onnx", f"{model}.onnx")
    check_pipeline(from_onnx(path))
