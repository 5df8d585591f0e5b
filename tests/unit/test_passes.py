"""Every pass keeps the numbers: numpy interpreter before vs after each pass, on random inputs
(1e-5 relative), over the demo DS-CNN, a residual block and the real float models in ../shared."""
import numpy as np
import pytest

from tinyfuse.frontend import from_onnx
from tinyfuse.ir.interpreter import run_module
from tinyfuse.options import CompileOptions
from tinyfuse.passes.pipeline import PASSES, run_pipeline
from tests.builders import build_dscnn, residual_block
from tests.conftest import shared_or_skip


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
    assert "fuse_ops" in ran and ran == [name for name, _ in PASSES]          # every pass ran, in order
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
