"""The ONNX backend node tests (mcu preset, node + pytorch-converted) through tinyfuse end to end:
no case outside expected_failures.txt fails, no expected failure passes, and every expected failure
is a clear TinyfuseError (never a crash or wrong numbers). ``make conformance`` prints the per-op table."""
from __future__ import annotations

import pytest

from tests.conftest import shared_or_skip
from tests.conformance import runner


@pytest.fixture(scope="module")
def results():
    shared_or_skip("tools", "node_tests.py")
    return runner.run_cases(kinds=("node", "pytorch-converted"), verbose=False)


def test_suite_is_the_mcu_preset(results):
    names = {r["name"] for r in results}
    assert len(results) >= 330, len(results)
    assert {"test_Conv2d_depthwise_with_multiplier", "test_Conv2d_dilated", "test_Conv2d_groups",
            "test_conv_with_strides_and_asymmetric_padding"} <= names


def test_no_unexpected_failure_and_no_unexpected_pass(results):
    problems = runner.check(results, runner.load_expected())
    assert not problems, "\n".join(problems)


def test_expected_failures_name_real_cases(results):
    names = {r["name"] for r in results}
    stale = sorted(set(runner.load_expected()) - names)
    assert not stale, f"{runner.EXPECTED_FAILURES.name} lists cases the suite no longer has: {stale}"


def test_freeze_params_binds_only_parameter_slots():
    import numpy as np
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("Conv", ["X", "W"], ["c"]), helper.make_node("Add", ["c", "W2"], ["Y"])],
                          "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in
                                (("X", [1, 1, 3, 3]), ("W", [1, 1, 1, 1]), ("W2", [1, 1, 3, 3]))],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    xs = [np.zeros((1, 1, 3, 3), np.float32), np.ones((1, 1, 1, 1), np.float32), np.zeros((1, 1, 3, 3), np.float32)]
    m, rest = runner.freeze_params(helper.make_model(g), xs)
    assert [i.name for i in m.graph.input] == ["X", "W2"] and [i.name for i in m.graph.initializer] == ["W"]
    assert len(rest) == 2
