"""Every registry refuses a key registered twice (so import order never decides which rule, converter
or kernel wins), and each holds what its modules registered."""
from __future__ import annotations

import pytest

import tinyfuse.lower  # noqa: F401  (registers the lowerings)
import tinyfuse.passes  # noqa: F401  (registers the rules)
from tinyfuse.frontend.onnx import registry as onnx_registry
from tinyfuse.frontend.tflite import registry as tflite_registry
from tinyfuse.lower import registry as lower_registry
from tinyfuse.passes import rules
from tinyfuse.strategy import core as strategy


def _twice(deco, table, key, *args, **kw):
    """Register ``key`` twice with ``deco``; the second must raise; ``table`` is left as it was."""
    before = dict(table)
    try:
        deco(key, *args, **kw)(lambda *a: None)
        with pytest.raises(AssertionError, match="twice"):
            deco(key, *args, **kw)(lambda *a: None)
    finally:
        table.clear()
        table.update(before)


def test_converters_refuse_a_second_registration():
    _twice(onnx_registry.converter, onnx_registry.CONVERTERS, "TinyfuseTestOp")
    _twice(tflite_registry.converter, tflite_registry.CONVERTERS, "TINYFUSE_TEST_OP", max_version=1)
    _twice(tflite_registry.effect, tflite_registry.EFFECTS, "TINYFUSE_TEST_EFFECT", max_version=1)
    with pytest.raises(AssertionError, match="twice"):     # an op type already registered
        onnx_registry.converter("Conv")(lambda *a: None)


def test_lowerings_and_implementations_refuse_a_second_registration():
    _twice(lower_registry.lowering, lower_registry.LOWERINGS, "tinyfuse_test.op")
    _twice(lower_registry.implements, lower_registry.IMPLEMENTATIONS, "tinyfuse_test.impl")
    with pytest.raises(AssertionError, match="twice"):
        strategy.implementation("qnn.conv2d", "conv2d.arm_dsp")(lambda g: None)
    with pytest.raises(AssertionError, match="twice"):
        lower_registry.implements("conv2d.arm_dsp")(lambda fn, ctx: None)


def test_rules_register_themselves_and_refuse_a_second_general_rule():
    _twice(rules.layout_rule, rules.LAYOUT_RULES, "tinyfuse_test.layout")
    assert "nn.conv2d_transpose" in rules.LAYOUT_RULES and "nn.conv2d" in rules.LAYOUT_RULES
    add = rules.QDQ_RULES["add"]
    assert [r.__name__ for r in add] == ["_bias_add_rule", "_add_rule"]    # the specific pattern first
    with pytest.raises(AssertionError, match="second general"):
        rules.qdq_rule("add")(lambda *a: None)
