"""Poly-fused chains and in-place kernels, end to end through gcc: every kernel's output equals the
numpy reference (per-layer trace), and the model output is byte-identical with and without
poly_fuse. Small synthetic int8 QDQ chains (built here, scales probed with onnxruntime), the real
models' arena goals (the DSP variant under qemu: tests/target/test_poly_fuse_dsp.py)."""
from __future__ import annotations


import numpy as np
import pytest

from tinyfuse.driver import _lower_and_plan, compile_model
from tinyfuse.frontend.onnx.reader import from_onnx
from tinyfuse.harness import build_host, run_host
from tinyfuse.harness.per_layer import compare_layers
from tinyfuse.ir.interpreter import run_module
from tinyfuse.memory.oracle import ArenaOracle
from tinyfuse.options import CompileOptions
from tinyfuse.passes import run_pipeline
from tinyfuse.passes.poly_fuse import poly_fuse
from tests.builders import DOWN_BLOCK, MBV2_BLOCK, MBV2_RESIDUAL, RESNET_BLOCK, qdq_chain
from tests.conftest import shared_or_skip


def run_checked(model, x, tmp_path, **options):
    """Compile, run, and compare every kernel with the numpy reference; returns (output, result)."""
    result = compile_model(model, **options)
    (got,) = run_host(build_host(result, tmp_path / "exe"), result, [x])
    diffs = compare_layers(result, [x], tmp_path / "trace")
    assert all(d.matches for d in diffs), [d for d in diffs if not d.matches]
    (ref,) = run_module(result.module, [x])
    assert np.array_equal(got, ref)
    return got, result


@pytest.mark.parametrize("layers, shape, stages", [
    (MBV2_BLOCK, (1, 12, 10, 8), 2),       # expand -> depthwise s2 (-> project)
    (RESNET_BLOCK, (1, 12, 12, 8), 2),     # conv -> conv (+ skip), written over the skip
    (DOWN_BLOCK, (1, 12, 12, 8), 3),       # 3x3 s2 -> 3x3 (+ 1x1 s2 shortcut as a stage)
    (MBV2_RESIDUAL, (1, 12, 12, 8), 3),    # expand -> depthwise -> project (+ the block input)
])
def test_fused_chain_bit_exact_and_smaller(layers, shape, stages, tmp_path):
    model, x = qdq_chain(shape, layers)
    fused, r1 = run_checked(model, x, tmp_path / "fused")
    plain, r0 = run_checked(model, x, tmp_path / "plain", disabled_passes=("poly_fuse",))
    assert np.array_equal(fused, plain)
    poly = [s for s in r1.steps if s.call.op.attrs.get("poly")]
    assert poly and max(s.call.op.attrs["poly"]["stages"] for s in poly) >= stages
    assert r1.arena_bytes < r0.arena_bytes


def test_overlapped_tiles_recompute_bit_exact(tmp_path):
    """A scratch budget too small for whole rows forces column tiles (recompute at the seams). The input
    is the caller's (no conv_offset over it: unfused, the first conv would write over the model input
    and beat the tiled chain's peak)."""
    model, x = qdq_chain((1, 8, 16, 8), [dict(cout=16, relu=True), dict(cout=16, dw=True), dict(cout=8, k=1)])
    options = CompileOptions.resolve(scratch_bytes=700, disabled_passes=("poly_fuse",), io_buffers="caller")
    mod = run_pipeline(from_onnx(model, "tiles"), options)
    mod = poly_fuse(mod, options, ArenaOracle(options), max_recompute=2.0)
    result = _lower_and_plan(mod, "0" * 16, options)
    info = [s.call.op.attrs["poly"] for s in result.steps if s.call.op.attrs.get("poly")]
    assert info and info[0]["strategy"] == "overlapped_tiles" and info[0]["recompute"] > 1
    (got,) = run_host(build_host(result, tmp_path), result, [x])
    (ref,) = run_module(result.module, [x])
    assert np.array_equal(got, ref)


def test_inplace_kernels_bit_exact(tmp_path):
    """depthwise (channel plane), 1x1 (pixel buffer), stride-2 depthwise (pixel buffer), 1x1 expansion
    (descending pixel buffer): each written over its dying input."""
    layers = [dict(cout=16, s=2, pads=[1, 1, 1, 1]), dict(cout=16, dw=True), dict(cout=16, k=1),
              dict(cout=16, dw=True, s=2), dict(cout=32, k=1)]
    model, x = qdq_chain((1, 10, 10, 4), layers)
    _, result = run_checked(model, x, tmp_path, disabled_passes=("poly_fuse",))
    rules = {o.rule for o in result.memory.inplace.values()}
    assert {"dw_plane", "pixel_buffer"} <= rules, rules
    # the first conv (3x3 s2, 4 -> 16 channels) writes over the model input placed at its output's end
    # (conv_offset: 400 + 96 bytes, not both 400-byte tensors); after it one activation tensor and a little
    # scratch are live at every step
    steps = result.memory.schedule.per_step
    assert "conv_offset" in rules and max(steps[1:]) <= 400 + 64 and steps[0] == 496


@pytest.mark.parametrize("model, goal", [("kws_ref_model", 8500), ("pretrainedResnet_quant", 24000)])
def test_mlperf_arena_goals(model, goal):
    path = shared_or_skip("models", "onnx", f"{model}.onnx")
    for target in ("host", "cortex-m4"):
        r = compile_model(path, target=target)
        assert r.arena_bytes <= goal, (target, r.arena_bytes)
        assert r.arena_bytes >= r.plan.lower_bound
