"""Generated C that failed a -Wconversion build (found by tests/c/test_sanitize_families.py), each
checked against its independent oracle after the strict build."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host
from tinyfuse.harness.host import CONVERSION_CFLAGS
from tests.builders.tflm_cases import pool_case
from tests.conftest import require_programs


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_int8_avg_pool_with_fused_relu_builds_with_wconversion(cc, tmp_path):
    """qnn.avg_pool2d + clip (a fused RELU): the epilogue read the int32 average as its int8 operand
    (``const int8_t v0 = (acc < 4 ? 4 : acc)``, an implicit narrowing); now ``(int8_t)acc``. TFLM
    AVERAGE_POOL_2D with RELU is the oracle."""
    require_programs(cc)
    case = pool_case("avg_pool", 6, (1, 7, 5, 5), (3, 3), (2, 2), "SAME", "RELU")
    result = compile_model(case.tflm, name="avgpool_relu")
    assert any(k.ops == ["qnn.avg_pool2d", "clip"] for k in result.kernels), [k.ops for k in result.kernels]
    (got,) = run_host(build_host(result, tmp_path, cc=cc, cflags=CONVERSION_CFLAGS), result, case.inputs)
    np.testing.assert_array_equal(got, case.want)
