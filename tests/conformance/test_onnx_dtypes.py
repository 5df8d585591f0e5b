"""The ONNX node tests of the issue's operators on element types the mcu preset leaves out (its exclude
list drops uint16/uint32/uint64 cases): comparisons, Max/Min, Mod, Pow's exponent and TopK on unsigned
integers, the pytorch-operator cases with float64 inputs, and the ``_expanded`` function bodies that
cast with CastLike (the mcu preset leaves those out too). Every case passes (onnx's expected
outputs are the oracle); the float64 node cases are in the mcu preset (test_conformance.py)."""
from __future__ import annotations

import pytest

from tests.conftest import shared_or_skip
from tests.conformance import runner

UNSIGNED = (r"^test_(equal|greater|less|greater_equal|less_equal|max|min|mod)_uint(16|32|64)(_expanded)?$",
            r"^test_pow_types_float32_uint(32|64)$", r"^test_top_k_uint64$")
FLOAT64_OPERATOR = (r"^test_operator_add(constant|_broadcast|_size1_broadcast|_size1_right_broadcast|"
                    r"_size1_singleton_broadcast)$",)

# CastLike (the ONNX function bodies of these operators cast their attributes with it) and float <-> double
CAST_LIKE = (r"^test_castlike_(FLOAT_to_DOUBLE|DOUBLE_to_FLOAT)(_expanded)?$", r"^test_celu_expanded$",
             r"^test_(softplus|softsign|selu|elu|thresholdedrelu|hardsigmoid|shrink)(_.*)?_expanded(_ver18)?$",
             r"^test_reduce_(l2|log_sum_exp)_.*_expanded$")


@pytest.mark.parametrize("kinds,include,count", [(("node",), UNSIGNED, 33),
                                                  (("pytorch-operator",), FLOAT64_OPERATOR, 5),
                                                  (("node",), CAST_LIKE, 41)],
                         ids=["unsigned", "float64_pytorch_operator", "castlike_function_bodies"])
def test_cases_of_these_element_types_pass(kinds, include, count):
    shared_or_skip("tools", "node_tests.py")
    results = runner.run_cases(kinds=kinds, include=include, verbose=False, preset="all")
    assert len(results) == count, sorted(r["name"] for r in results)
    failing = {r["name"]: r["msg"] for r in results if runner.outcome(r) != "pass"}
    assert not failing, failing
