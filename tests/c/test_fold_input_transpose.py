"""fold_input_transpose in C (issue 14): the first conv / depthwise reads an NCHW model input through
its layout transpose, so no transpose kernel copies the image. int8 .tflite graphs shaped as the TFLite
converter writes PyTorch models (NCHW input + TRANSPOSE + PAD + VALID conv; tests/builders/tflite_pad.py)
give TFLM's output bit for bit with the pass on and off, through the poly-fused chain and through the
portable conv kernel alone (poly_fuse off); a float ONNX NCHW Pad → Conv equals onnxruntime. On a DSP
target the transpose kernel stays (the SIMD kernels read NHWC pixel runs)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.builders.onnx_pad import CASES, X
from tests.builders.tflite_pad import Graph, pytorch_style_block
from tests.conftest import assert_close_to, compile_and_run, ort_run, require_programs, tflm_run

OFF = ("fold_input_transpose",)


def _transposes(result) -> int:
    return sum("transpose" in k.name for k in result.kernels)


def nchw_first(kind: str, seed: int = 0, h: int = 10, w: int = 14) -> bytes:
    """NCHW (1, 3, h, w) input → TRANSPOSE → PAD → 3x3/2 ``kind`` ('conv' or 'depthwise') → 1x1 conv; a
    non-square image, so that a swapped H/W in the permuted reads shows."""
    g = Graph((1, 3, h, w), (0.02, -3), seed, nchw=True)
    g.pad(((1, 1), (1, 1))).conv(8, 3, stride=2, depthwise=kind == "depthwise")
    return g.conv(8, 1).build()


def nchw_pool(seed: int = 0, h: int = 11, w: int = 15) -> bytes:
    """NCHW (1, 3, h, w) input → TRANSPOSE → 3x3/2 MAX_POOL_2D → 1x1 conv."""
    g = Graph((1, 3, h, w), (0.02, -3), seed, nchw=True)
    return g.max_pool(3, 2).conv(8, 1).build()


def nchw_chain(seed: int = 0, h: int = 40, w: int = 56) -> bytes:
    """pytorch_style_block on a non-square NCHW image (TRANSPOSE → PAD → 3x3/2 conv → 1x1 conv → PAD →
    3x3 depthwise → PAD → 3x3/2 depthwise → 1x1 conv), large enough that poly_fuse makes its first
    four convs one line-buffered chain whose first stage reads the NCHW input."""
    g = Graph((1, 3, h, w), (0.02, -3), seed, nchw=True)
    g.pad(((0, 1), (0, 1))).conv(8, 3, stride=2).conv(16, 1)
    g.pad(((1, 1), (1, 1))).conv(0, 3, depthwise=True)
    return g.pad(((1, 1), (1, 1))).conv(0, 3, stride=2, depthwise=True).conv(8, 1).build()


def _run_both(model: bytes, x: np.ndarray, tmp_path, disabled=()):
    """TFLM's output and {pass on/off: CompileResult}; the C equals TFLM both ways."""
    require_programs("gcc")
    (want,) = tflm_run(model, [x])
    assert len(np.unique(want)) > 4, f"degenerate TFLM output {np.unique(want)}"
    runs = {}
    for label, off in (("on", ()), ("off", OFF)):
        d = tmp_path / label
        d.mkdir()
        (got,), result = compile_and_run(model, [x], d, disabled_passes=disabled + off, kernels="ref")
        np.testing.assert_array_equal(got, want, err_msg=f"fold_input_transpose {label} vs TFLM")
        runs[label] = result
    return runs


@pytest.mark.parametrize("kind", ["conv", "depthwise"])
@pytest.mark.parametrize("disabled", [(), ("poly_fuse",)])
def test_int8_first_conv_reads_the_nchw_input(kind, disabled, tmp_path):
    x = np.random.default_rng(4).integers(-128, 128, (1, 3, 10, 14), dtype=np.int8)
    runs = _run_both(nchw_first(kind, 1), x, tmp_path, disabled)
    assert _transposes(runs["off"]) == 1 and _transposes(runs["on"]) == 0
    assert runs["on"].arena_bytes < runs["off"].arena_bytes, (runs["on"].arena_bytes, runs["off"].arena_bytes)


def test_int8_max_pool_reads_the_nchw_input(tmp_path):
    x = np.random.default_rng(7).integers(-128, 128, (1, 3, 11, 15), dtype=np.int8)
    runs = _run_both(nchw_pool(3), x, tmp_path)
    assert _transposes(runs["off"]) == 1 and _transposes(runs["on"]) == 0


def test_int8_poly_fused_chain_reads_the_nchw_input(tmp_path):
    x = np.random.default_rng(6).integers(-128, 128, (1, 3, 40, 56), dtype=np.int8)
    runs = _run_both(nchw_chain(2), x, tmp_path)
    assert "polyfused" in runs["on"].kernels[0].name, [k.name for k in runs["on"].kernels]
    assert _transposes(runs["off"]) == 1 and _transposes(runs["on"]) == 0
    assert runs["on"].arena_bytes < runs["off"].arena_bytes, (runs["on"].arena_bytes, runs["off"].arena_bytes)


def test_pytorch_style_block_arena_equals_the_nhwc_model(tmp_path, monkeypatch):
    """The NCHW model with the transpose read through plans no more arena than its NHWC twin under the
    same in-place rules: the twin without ``conv_offset`` (its first conv written over the model input
    at an offset, proven for NHWC pixel order only; a conv reading the NCHW input has no offset form)."""
    x = np.random.default_rng(5).integers(-128, 128, (1, 3, 12, 12), dtype=np.int8)
    runs = _run_both(pytorch_style_block(0, nchw=True), x, tmp_path)
    from tinyfuse.driver import compile_model
    monkeypatch.setattr("tinyfuse.memory.arena.prove_conv_offset", lambda *a, **k: None)
    nhwc = compile_model(pytorch_style_block(0, nchw=False), kernels="ref")
    assert _transposes(runs["on"]) == 0
    assert runs["on"].arena_bytes <= nhwc.arena_bytes, (runs["on"].arena_bytes, nhwc.arena_bytes)


@pytest.mark.parametrize("case, first", [("conv-asym-zero", "k0_fused_conv2d"),
                                         ("maxpool-minus-inf", "k0_fused_max_pool2d"),
                                         ("avgpool-zero", "k0_fused_avg_pool2d")])
def test_float_onnx_nchw_conv_and_pools_equal_onnxruntime(case, first, tmp_path):
    require_programs("gcc")
    model, _ = CASES[case]
    (want,) = ort_run(model, {"x": X})
    outs, kernels = {}, {}
    for label, off in (("on", ()), ("off", OFF)):
        d = tmp_path / label
        d.mkdir()
        (outs[label],), result = compile_and_run(model, [X], d, disabled_passes=off)
        assert_close_to(np.asarray(outs[label]), want)
        kernels[label] = [k.name for k in result.kernels]
    # the output's NHWC → NCHW transpose stays; the input's is read through by the conv
    assert kernels["on"] == [first, "k1_fused_transpose"], kernels
    assert len(kernels["off"]) == 3 and "transpose" in kernels["off"][0], kernels
    np.testing.assert_allclose(outs["on"], outs["off"], rtol=0, atol=1e-5)


def test_dsp_target_keeps_the_transpose_kernel():
    """cortex-m4 lowers qnn.conv2d with arm_dsp (im2col of NHWC pixels): the pass leaves it alone."""
    from tinyfuse.driver import compile_model
    result = compile_model(nchw_first("conv"), target="cortex-m4")
    assert _transposes(result) == 1, [k.name for k in result.kernels]
    assert any(k.variant == "arm_dsp" for k in result.kernels)
