"""The per-kernel real-arithmetic oracle (harness/real_oracle.py, issue 13): every int8 kernel of the
C run is within 1 LSB of the real arithmetic of its ops on the MLPerf Tiny int8 models (ONNX and
TFLite) and the onnxruntime-quantized models; and it fails on a deliberately wrong kernel that
tinyfuse's own fixed-point reference cannot see (the reference wraps the same way)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tinyfuse import quant
from tinyfuse.cli import main
from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host
from tinyfuse.harness.inputs import random_inputs
from tinyfuse.harness.real_oracle import MAX_LSB, check_kernels, model_rounding
from tinyfuse.harness.verdict import compare
from tinyfuse.ir import Call, Constant, post_order
from tests.builders import multiplier_conv_case, tflm_oneop
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


@pytest.mark.filterwarnings("ignore:legalize_qdq")
def test_run_int8_float_output_prints_the_lsb_histogram_vs_onnxruntime(capsys):
    """A float-output int8 model: run prints the histogram of |C − onnxruntime| in output LSBs (both
    quantized with the output's scale, 1024 elements), the per-kernel line, and --json has them."""
    require_programs("gcc")
    path = shared_or_skip("models", "onnx", "tiny_transformer_block_op20_qdq.onnx")
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    (hist,) = [ln for ln in out if ln.startswith("LSB difference vs onnxruntime")]
    counts = {int(k.split()[0]): int(v) for k, v in (p.split(":") for p in hist.split("scale): ")[1].split(", "))}
    assert sum(counts.values()) == 1024 and max(counts) <= 2
    assert any(ln.startswith("real-arithmetic oracle: 9 int8 kernels checked") for ln in out)
    assert out[-2].startswith("int8 verdict: match (every int8 kernel within 1 LSB of real arithmetic")
    assert main(["run", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["max_lsb_diff"] == max(counts) and got["real_oracle_holds"] is True
    assert got["real_kernels_checked"] == 9 and got["real_kernels_over"] == 0 and got["real_lsb1"] > 0


def _oneop_models():
    """TFLite one-op int8 models whose TFLM arithmetic is farthest from real arithmetic: softmax
    (gemmlowp exp, Q12.19 sum), average pool (rounded integer division), MEAN (a conv of ones with
    a reduced multiplier), ADD (20-bit headroom, three multipliers), MUL, LOGISTIC/TANH tables."""
    t = tflm_oneop()
    return {"softmax": t.softmax((4, 100), (0.5, 3)), "softmax_fine": t.softmax((4, 32), (0.02, 0)),
            "avg_pool_same": t.average_pool2d((1, 8, 8, 4), (0.05, 3), filter=(3, 3), stride=(1, 1), padding="SAME"),
            "avg_pool_global": t.average_pool2d((1, 7, 7, 8), (0.05, 3), filter=(7, 7), stride=(1, 1)),
            "mean_hw": t.mean((1, 6, 6, 8), (1, 2), (0.05, 3), (0.01, -2)),
            "mean_c": t.mean((1, 6, 6, 8), (3,), (0.05, 3), (0.04, -2), keep_dims=True),
            "add_broadcast": t.add((1, 4, 4, 8), (1, 1, 1, 8), (0.5, 3), (0.01, -7), (0.3, 1)),
            "mul": t.mul((1, 4, 4, 8), (1, 4, 4, 8), (0.05, 3), (0.11, -7), (0.02, 1)),
            "logistic": t.logistic((1, 64), (0.08, 2)), "tanh": t.tanh((1, 64), (0.03, -4))}


@pytest.mark.parametrize("name", ["softmax", "softmax_fine", "avg_pool_same", "avg_pool_global", "mean_hw", "mean_c",
                                  "add_broadcast", "mul", "logistic", "tanh"])
def test_tflm_arithmetic_needs_no_exception(name, tmp_path):
    """No op needs a tolerance beyond 1 LSB (measured, 4 random inputs each): the kernels equal TFLM
    (tests/c/test_int8_tflm.py) and are within 1 LSB of real arithmetic."""
    require_programs("gcc")
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(_oneop_models()[name])
    result = compile_model(str(path))
    for seed in range(4):
        report = check_kernels(result, random_inputs(result.inputs, seed), tmp_path / f"s{seed}", "half_away")
        assert report.holds and report.summary()["checked"] >= 1, report.kernels


@pytest.mark.filterwarnings("ignore:check_overflow")
@pytest.mark.parametrize("case", ["per_tensor_256", "per_channel"])
def test_saturating_multipliers_above_one_are_real_arithmetic(case, tmp_path):
    """Multipliers 256 and 2^1 … 2^35 (TFLM's int32 shift wraps; tinyfuse saturates, docs/ARCHITECTURE.md):
    saturation is the real arithmetic, so the oracle holds (half to even, ONNX)."""
    require_programs("gcc")
    model, x, _ = multiplier_conv_case(case)
    result = compile_model(model)
    report = check_kernels(result, [x], tmp_path, "half_even")
    assert report.holds and report.summary()["checked"] >= 1


def test_int8_prelu_is_checked_by_real_arithmetic(tmp_path, capsys):
    """qnn.prelu carries its real scales: the oracle checks it (not its fixed-point compute), and an int8
    op without a real rule is never trusted (it would count as 'without real facts')."""
    import json

    from tests.builders import tflm_misc
    from tinyfuse.cli import main
    path = tmp_path / "prelu.tflite"
    path.write_bytes(tflm_misc.prelu((1, 5, 5, 4), np.array([10, 20, -30, 50], np.int8), in_q=(0.05, 3),
                                     alpha_q=(0.01, 0), out_q=(0.04, -2)))
    assert main(["run", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["real_oracle_holds"] is True and got["real_kernels_checked"] == 1
    assert got["real_kernels_unchecked"] == 0 and got["tflm_exact"] is True
