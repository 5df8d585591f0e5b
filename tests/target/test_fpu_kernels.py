"""The arm_fpu float kernels (compiler/lower/conv/fpu.py) on Cortex-M4F under qemu against onnxruntime,
on shapes chosen to break a micro-kernel: output channels not a multiple of 4 (the channel tail, the
zero-padded weight groups), output rows not a multiple of 4 (the row tail of the column blocks), padded
rows and columns with stride 2, dilation 2 and TF-SAME-like asymmetric pads, a channel count below 8
(fully unrolled reduction) and above with a rest (the unrolled loop plus its tail), depthwise with a
channel tail, pointwise over an odd pixel count, fully connected with an odd batch and K % 4 = 1.
Each model starts with a Relu so that its convs read an NHWC tensor (a conv reading the NCHW model
input runs the portable kernel)."""
import numpy as np
import pytest
from onnx import helper

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tests.builders.float_models import model_of, rand
from tests.conftest import ort_run
from tests.target.conftest import require_tools

N = helper.make_node


def _convs():
    nodes = [N("Relu", ["X"], ["r"]),
             N("Conv", ["r", "W1", "B1"], ["c1"], strides=[2, 2], pads=[0, 1, 1, 0]),       # C 6, O 7
             N("Conv", ["c1", "W2"], ["c2"], dilations=[2, 2], pads=[2, 2, 2, 2]),           # C 7 → O 9
             N("Conv", ["c2", "W3", "B3"], ["c3"], group=9, pads=[1, 1, 1, 1]),             # depthwise, 9 ch
             N("Conv", ["c3", "W4", "B4"], ["Y"])]                                           # 1x1, C 9, O 5
    inits = {"W1": rand(7, 6, 3, 3, seed=1), "B1": rand(7, seed=2), "W2": rand(9, 7, 3, 3, seed=3),
             "W3": rand(9, 1, 3, 3, seed=4), "B3": rand(9, seed=5), "W4": rand(5, 9, 1, 1, seed=6),
             "B4": rand(5, seed=7)}
    return model_of(nodes, {"X": rand(1, 6, 11, 9)}, ["Y"], inits=inits), 4


def _wide_conv():
    nodes = [N("Relu", ["X"], ["r"]), N("Conv", ["r", "W", "B"], ["c"], pads=[1, 1, 1, 1]), N("Relu", ["c"], ["Y"])]
    inits = {"W": rand(6, 13, 3, 3, seed=8), "B": rand(6, seed=9)}                            # C 13: loop + rest 1
    return model_of(nodes, {"X": rand(1, 13, 5, 3)}, ["Y"], inits=inits), 1


def _fc():
    nodes = [N("Gemm", ["X", "W", "B"], ["Y"], transB=1)]
    return model_of(nodes, {"X": rand(3, 37)}, ["Y"], inits={"W": rand(6, 37, seed=10), "B": rand(6, seed=11)}), 1


CASES = {"convs_tails_stride_dilation_dw_pw": _convs, "conv3x3_c13_loop_rest": _wide_conv, "fc_batch3_k37_n6": _fc}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fpu_kernels_match_onnxruntime_on_cortex_m4(name, tmp_path):
    require_tools("cortex-m4")
    model, n_fpu = CASES[name]()
    x = np.asarray(rand(*[d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim], seed=12))
    want = ort_run(model, {"X": x})[0]
    result = compile_model(model, target="cortex-m4", name="f")
    assert sum(k.variant == "arm_fpu" for k in result.kernels) == n_fpu, [(k.name, k.variant) for k in result.kernels]
    (y,) = run_target(build_target(result, "cortex-m4", tmp_path, [x]))
    scale = float(np.max(np.abs(want)))
    assert y.shape == want.shape and float(np.max(np.abs(y - want))) <= 1e-5 * scale, \
        f"max |diff| {float(np.max(np.abs(y - want))):.3g} (max |onnxruntime| {scale:.3g})"
