"""The per-kernel real-arithmetic oracle (harness/real_oracle.py, issue 13): every int8 kernel of the
C run is within 1 LSB of the real arithmetic of its ops on the MLPerf Tiny int8 models (ONNX and
TFLite) and the onnxruntime-quantized models; and it fails on a deliberately wrong kernel that
tinyfuse's own fixed-point reference cannot see (the reference wraps the same way)."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse import quant
from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host
from tinyfuse.harness.inputs import random_inputs
from tinyfuse.harness.real_oracle import MAX_LSB, check_kernels, model_rounding
from tinyfuse.harness.verdict import compare
from tinyfuse.ir import Call, Constant, post_order
from tests.conftest import require_programs, shared_or_skip

MODELS = [("onnx", "kws_ref_model.onnx"), ("onnx", "pretrainedResnet_quant.onnx"), ("onnx", "ad01_int8.onnx"),
          ("tflite", "kws_ref_model.tflite"), ("tflite", "pretrainedResnet_quant.tflite"),
          ("tflite", "ad01_int8.tflite"),
          ("onnx", "mobilenetv2_035_96_qdq.onnx"), ("onnx", "mobilenetv2_035_96_qop.onnx"),
          ("onnx", "resnet10_w16_64_qdq.onnx"), ("onnx", "resnet10_w16_64_qop.onnx"),
          ("onnx", "tiny_transformer_block_op20_qdq.onnx")]


@pytest.mark.filterwarnings("ignore:legalize_qdq")
@pytest.mark.parametrize("folder,name", MODELS, ids=[n for _, n in MODELS])
def test_every_int8_kernel_is_within_one_lsb_of_real_arithmetic(folder, name, tmp_path):
    require_programs("gcc")
    path = shared_or_skip("models", folder, name)
    result = compile_model(str(path))
    report = check_kernels(result, random_inputs(result.inputs, 0), tmp_path, model_rounding(path))
    s = report.summary()
    assert s["checked"] >= 5 and s["unchecked"] == 0, s
    assert s["over"] == 0 and s["max_lsb"] <= MAX_LSB, [k for k in report.kernels if not k.holds]
    assert s["lsb0"] > 100 * s["lsb1"] and report.holds
    assert sum(k.elements for k in report.kernels) == s["lsb0"] + s["lsb1"]


def _skewed_multipliers(monkeypatch, factor: float):
    """quant.quantize_multipliers returning the Q31 pair of ``factor`` times the real multiplier:
    the C and the fixed-point reference both use the wrong pair, the IR's real_multiplier is right."""
    true = quant.quantize_multipliers
    monkeypatch.setattr(quant, "quantize_multipliers", lambda real: true(np.asarray(real) * factor))


def test_the_oracle_fails_on_a_wrong_requantize_multiplier(monkeypatch, tmp_path):
    """Multipliers 3 % too large: the C equals tinyfuse's fixed-point reference exactly (the verdict of
    old), but several kernels are over 1 LSB from real arithmetic, and run's verdict is MISMATCH."""
    require_programs("gcc")
    path = shared_or_skip("models", "onnx", "ad01_int8.onnx")
    _skewed_multipliers(monkeypatch, 1.03)
    result = compile_model(str(path))
    inputs = random_inputs(result.inputs, 0)
    report = check_kernels(result, inputs, tmp_path / "trace", model_rounding(path))
    assert not report.holds and report.summary()["over"] >= 3 and report.summary()["max_lsb"] >= 2
    outs = run_host(build_host(result, tmp_path / "run"), result, inputs)
    s, lines = compare(str(path), result, inputs, outs)
    assert s["ref_exact"] is True and s["real_oracle_holds"] is False and s["outputs_match"] is False
    assert any("first failing kernel" in ln for ln in lines)


def test_the_oracle_fails_on_a_flipped_bias(tmp_path):
    """The C of one conv kernel computes with the negated bias of the model: the model's int32 bias
    is negated in the IR after the C was emitted (the C keeps the old one). That kernel is far from
    real arithmetic; the kernels after it read the C's own outputs and still hold."""
    require_programs("gcc")
    path = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    result = compile_model(str(path))
    index, bias = next((i, a) for i, st in enumerate(result.steps) for n in post_order(st.call.op.body)
                       if isinstance(n, Call) and n.op == "add"
                       for a in n.args if isinstance(a, Constant) and a.value.dtype == np.int32 and np.any(a.value))
    object.__setattr__(bias, "value", -bias.value)
    report = check_kernels(result, random_inputs(result.inputs, 0), tmp_path, model_rounding(path))
    assert [k.index for k in report.kernels if not k.holds] == [index]
    assert next(k for k in report.kernels if k.index == index).max_lsb >= 2
