"""Requantization with multipliers above 1 on the SIMD kernel variants (issue 13): the Arm DSP conv
(cortex-m4), the Helium conv (cortex-m55) and the portable kernel on cortex-m0 saturate like the host
and equal the float64 real-arithmetic model (tests/c/test_requantize_saturation.py) under qemu."""
import warnings

import numpy as np
import pytest

from tests.builders import multiplier_conv_case
from tests.target.conftest import require_tools
from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target


@pytest.mark.parametrize("target,variant", [("cortex-m4", "arm_dsp"), ("cortex-m55", "arm_mve"),
                                            ("cortex-m0", "ref")])
@pytest.mark.parametrize("case", ["per_tensor_256", "per_channel_2^1..2^35"])
def test_conv_multiplier_above_one_on_target(tmp_path, target, variant, case):
    require_tools(target)
    model, x, want = multiplier_conv_case(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # check_overflow rightly warns about these accumulators
        result = compile_model(model, target=target, name="sat")
    variants = {s.kernel.variant for s in result.steps if s.kernel.ops[0] == "qnn.conv2d"}
    assert variants == {variant} if variant != "ref" else not variants & {"arm_dsp", "arm_mve"}, variants
    (y,) = run_target(build_target(result, target, tmp_path, [x]))
    assert np.array_equal(y.reshape(want.shape), want)
