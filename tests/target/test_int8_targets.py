"""The int8 MLPerf Tiny models (KWS, ResNet-8, AD) on every core under qemu: byte-identical to TFLite
Micro and to the host build, with the target's kernel variants (arm_dsp on M4/M7/M33, arm_mve on M55,
portable C on M0 and RV32)."""
import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host
from tinyfuse.harness.qemu import build_target, run_target
from tinyfuse.lower.kernel import split_group
from tests.conftest import shared_or_skip
from tests.target.conftest import require_tools

INT8_MODELS = ["kws_ref_model", "pretrainedResnet_quant", "ad01_int8"]
TARGETS = ["cortex-m0", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55", "rv32imac"]
# the variant every conv / fully-connected kernel must get: (regular conv and FC, depthwise)
VARIANTS = {"cortex-m0": ("ref", "ref"), "cortex-m4": ("arm_dsp", "arm_dsp"), "cortex-m7": ("arm_dsp", "arm_dsp"),
            "cortex-m33": ("arm_dsp", "arm_dsp"), "cortex-m55": ("arm_mve", "arm_mve"), "rv32imac": ("ref", "ref")}


def _io(model):
    path = shared_or_skip("models", "onnx", f"{model}.onnx")
    return path, np.load(path.with_suffix(".io.npz"))


@pytest.fixture(scope="module")
def host_outputs(tmp_path_factory):
    """Host build (portable kernels) output of each model on its reference input, computed once."""
    cache = {}

    def get(model):
        if model not in cache:
            path, io = _io(model)
            result = compile_model(path)
            exe = build_host(result, tmp_path_factory.mktemp(f"host_{model}"))
            cache[model] = run_host(exe, result, [io["input"]])[0]
        return cache[model]
    return get


def anchors(result):
    """The anchor op (Call) of each kernel, in kernel order; None for a poly-fused chain of groups
    (poly_fuse: a portable line-buffered kernel chosen to lower the arena)."""
    return [None if s.call.op.attrs.get("poly") else split_group(s.call.op)[0] for s in result.steps]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("model", INT8_MODELS)
def test_int8_model_on_target_matches_tflm_and_host(model, target, tmp_path, host_outputs):
    require_tools(target)
    path, io = _io(model)
    result = compile_model(path, target=target)
    regular, depthwise = VARIANTS[target]
    for k, anchor in zip(result.kernels, anchors(result)):
        if anchor is not None and anchor.op in ("qnn.conv2d", "qnn.matmul"):
            want = depthwise if anchor.attrs.get("groups", 1) > 1 else regular
            # the memory plan may run a conv in place (portable inplace_* kernels unless a SIMD one
            # takes it); a stride-1 depthwise in place goes channel by channel (inplace_dw_plane)
            ok = {want, "inplace_dw_plane", "inplace_dw_rows"} if want != "ref" else {"ref", "inplace_dw_plane", "inplace_pixel_ascending",
                                                                   "inplace_pixel_descending"}
            assert k.variant in ok if want == "ref" or anchor.attrs.get("groups", 1) > 1 else k.variant == want, \
                (k.name, k.variant)
    build = build_target(result, target, tmp_path, [io["input"]])
    (y,) = run_target(build)
    assert np.array_equal(y, io["tflm"]), \
        f"{model} on {target}: {int(np.sum(y != io['tflm']))} outputs differ from TFLM"
    assert np.array_equal(y, host_outputs(model))
    assert build.stats["status"] == 0
