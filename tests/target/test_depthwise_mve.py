"""The Helium in-place depthwise (lower/conv/depthwise_mve.py: the dw_plane kernel with four outputs per
vector and the vectorised requantization) under qemu on Cortex-M55, one-op int8 models against TFLM
byte for byte: widths with a tail vector (OW % 4 = 1..3) and without, a fused ReLU and ReLU6 (clip),
dilation 2, a stride along the height only, channel counts 13 and 16; a tall plane and a stride along
the width only (vectors along the columns of the transposed plane); stride 2 both ways (gathered lanes)."""
import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tests.builders import conv_case
from tests.target.conftest import require_tools

CASES = {
    "c13_ow9_relu": lambda: conv_case("depthwise", 311, (1, 7, 9, 13), None, (3, 3), act="RELU"),
    "c16_ow8_relu6": lambda: conv_case("depthwise", 312, (1, 6, 8, 16), None, (3, 3), act="RELU6"),
    "c4_dilation2_ow7": lambda: conv_case("depthwise", 313, (1, 9, 7, 4), None, (3, 3), dilation=(2, 2)),
    "c6_stride_h2_ow6": lambda: conv_case("depthwise", 314, (1, 9, 6, 6), None, (3, 3), stride=(2, 1)),
    # a tall plane (vectors down the columns of the transposed plane), and a stride along the width only
    "c8_tall_25x5_relu": lambda: conv_case("depthwise", 315, (1, 25, 5, 8), None, (3, 3), act="RELU"),
    "c5_stride_w2_dilation2": lambda: conv_case("depthwise", 316, (1, 10, 9, 5), None, (3, 3), stride=(1, 2),
                                                 dilation=(2, 2)),
    # stride 2 both ways (gathered lanes), many channels on a small plane
    "c64_stride2_relu6": lambda: conv_case("depthwise", 317, (1, 5, 5, 64), None, (3, 3), stride=(2, 2),
                                           act="RELU6"),
    "c40_stride2_4x6": lambda: conv_case("depthwise", 318, (1, 4, 6, 40), None, (3, 3), stride=(2, 2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_helium_dw_plane_equals_tflm(name, tmp_path):
    require_tools("cortex-m55")
    case = CASES[name]()
    result = compile_model(case.model, target="cortex-m55", name="k")
    (step,) = [s for s in result.steps if s.kernel.ops[0] == "qnn.conv2d"]
    assert step.kernel.variant == "inplace_dw_plane" and "vmlaq_n_s32" in step.kernel.code, step.kernel.variant
    (y,) = run_target(build_target(result, "cortex-m55", tmp_path, case.inputs))
    assert np.array_equal(y, case.want), f"{int(np.sum(y != case.want))} outputs differ from TFLM ({case.desc})"
