"""fold_pad in C (issue 14): int8 .tflite graphs shaped as the TFLite converter writes PyTorch models
(NCHW input + TRANSPOSE, explicit PAD / PADV2 before VALID convs; tests/builders/tflite_pad.py) give
TFLM's output bit for bit with the pass on and off; with it on, no pad kernel is left where the
consumer's padding stands for the pad value and the arena shrinks. Float ONNX Pad → Conv / MaxPool /
AveragePool equals onnxruntime with the pass on."""
from __future__ import annotations

import numpy as np
import pytest

from tests.builders.onnx_pad import CASES, X, qdq_pad_conv
from tests.builders.tflite_pad import padded_max_pool, pytorch_style_block
from tests.conftest import assert_close_to, compile_and_run, ort_run, require_programs, tflm_run

OFF = ("fold_pad",)


def _pad_kernels(result) -> int:
    return sum(k.name.endswith("_pad") for k in result.kernels)


def _run_both(model: bytes, x: np.ndarray, tmp_path):
    """TFLM's output and {disabled passes: (C output, CompileResult)} for the pass on and off."""
    require_programs("gcc")
    (want,) = tflm_run(model, [x])
    assert len(np.unique(want)) > 4, f"degenerate TFLM output {np.unique(want)}"
    runs = {}
    for disabled in ((), OFF):
        d = tmp_path / ("off" if disabled else "on")
        d.mkdir()
        (got,), result = compile_and_run(model, [x], d, disabled_passes=disabled)
        np.testing.assert_array_equal(got, want, err_msg=f"fold_pad {'off' if disabled else 'on'} vs TFLM")
        runs[disabled] = result
    return runs


@pytest.mark.parametrize("nchw", [True, False])
def test_pytorch_style_pads_fold_and_equal_tflm(nchw, tmp_path):
    shape = (1, 3, 12, 12) if nchw else (1, 12, 12, 3)
    x = np.random.default_rng(1).integers(-128, 128, shape, dtype=np.int8)
    runs = _run_both(pytorch_style_block(0, nchw=nchw), x, tmp_path)
    on, off = runs[()], runs[OFF]
    assert _pad_kernels(off) == 3 and _pad_kernels(on) == 0, (_pad_kernels(off), _pad_kernels(on))
    assert on.arena_bytes < off.arena_bytes, (on.arena_bytes, off.arena_bytes)


@pytest.mark.parametrize("value, folds", [("zp", True), (5, False)])
def test_padv2_folds_only_with_the_zero_point(value, folds, tmp_path):
    x = np.random.default_rng(2).integers(-128, 128, (1, 12, 12, 3), dtype=np.int8)
    runs = _run_both(pytorch_style_block(3, nchw=False, padv2_value=value), x, tmp_path)
    assert _pad_kernels(runs[()]) == (0 if folds else 1)


@pytest.mark.parametrize("value, folds", [(-128, True), (-100, False)])
def test_int8_max_pool_folds_the_lowest_value(value, folds, tmp_path):
    x = np.random.default_rng(3).integers(-128, 128, (1, 13, 13, 4), dtype=np.int8)
    runs = _run_both(padded_max_pool(0, value), x, tmp_path)
    assert _pad_kernels(runs[()]) == (0 if folds else 1)
    assert _pad_kernels(runs[OFF]) == 1


@pytest.mark.parametrize("name", ["conv-asym-zero", "depthwise-plus-own-pads", "maxpool-minus-inf",
                                  "avgpool-zero", "conv-value-not-zero"])
def test_float_pad_folds_equal_onnxruntime(name, tmp_path):
    require_programs("gcc")
    model, folds = CASES[name]
    (want,) = ort_run(model, {"x": X})
    (got,), result = compile_and_run(model, [X], tmp_path)
    assert_close_to(np.asarray(got), want)
    assert _pad_kernels(result) == (0 if folds else 1)


@pytest.mark.parametrize("value, folds", [(0.0, True), (0.2, False)])
def test_qdq_pad_folds_and_equals_onnxruntime(value, folds, tmp_path):
    """ONNX QDQ (DQ → Pad → Q → DQ → Conv): C with the pass on equals C with it off bit for bit and
    onnxruntime (float conv, round half to even) within 1 LSB; the pad folds only for real 0.0."""
    require_programs("gcc")
    model, x = qdq_pad_conv(value=value)
    (want,) = ort_run(model, {"x": x})
    outs = {}
    for disabled in ((), OFF):
        d = tmp_path / ("off" if disabled else "on")
        d.mkdir()
        (outs[disabled],), result = compile_and_run(model, [x], d, disabled_passes=disabled)
        if not disabled:
            assert _pad_kernels(result) == (0 if folds else 1)
    np.testing.assert_array_equal(outs[()], outs[OFF])
    assert len(np.unique(want)) > 4
    assert np.abs(outs[()].astype(np.int32) - want.astype(np.int32)).max() <= 1
