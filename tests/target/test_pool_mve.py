"""The Helium average pool (lower/pool_mve.py) under qemu on Cortex-M55, one-op int8 models against
TFLM byte for byte: SAME padding with stride 2 (window counts differ at the border: the count table), a
fused ReLU (the epilogue per lane), C % 4 = 1 (the predicated tail quad); a global pool over 64 channels."""
import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tests.builders import pool_case
from tests.target.conftest import require_tools

CASES = {
    "same_s2_relu_c5": lambda: pool_case("avg_pool", 401, (1, 7, 5, 5), (3, 3), (2, 2), "SAME", "RELU"),
    "global_25x5_c64": lambda: pool_case("avg_pool", 402, (1, 25, 5, 64), (25, 5), (1, 1), "VALID"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_helium_avg_pool_equals_tflm(name, tmp_path):
    require_tools("cortex-m55")
    case = CASES[name]()
    result = compile_model(case.model, target="cortex-m55", name="k")
    assert [k.variant for k in result.kernels if "qnn.avg_pool2d" in k.ops] == ["arm_mve"]
    (y,) = run_target(build_target(result, "cortex-m55", tmp_path, case.inputs))
    assert np.array_equal(y, case.want), f"{int(np.sum(y != case.want))} outputs differ from TFLM ({case.desc})"
