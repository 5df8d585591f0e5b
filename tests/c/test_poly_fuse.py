"""Poly-fused chains and in-place kernels, end to end through gcc: every kernel's output equals the
numpy reference (per-layer trace), and the model output is byte-identical with and without
poly_fuse. Small synthetic int8 QDQ chains (built here, scales probed with onnxruntime), the real
models' arena goals, and the DSP variant of the fused chain under qemu (skipped without it)."""
from __future__ import annotations

import shutil

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tinyfuse.driver import _lower_and_plan, compile_model
from tinyfuse.frontend.onnx import from_onnx
from tinyfuse.harness import build_host, run_host
from tinyfuse.harness.per_layer import compare_layers
from tinyfuse.ir.interpreter import run_module
from tinyfuse.memory.oracle import ArenaOracle
from tinyfuse.options import CompileOptions
from tinyfuse.passes import run_pipeline
from tinyfuse.passes.poly_fuse import poly_fuse
from tests.conftest import shared_or_skip


def qdq_chain(x_shape, layers, seed=0):
    """int8 NHWC input -> chain of QDQ convs (3x3 / 1x1 / depthwise, relu) and residual adds -> int8
    NHWC output. ``layers``: dicts with cout, k, s, dw (bool), relu, src (index of the input layer,
    -1 = model input, default previous) or add=(i, j) for a residual add of two layers' outputs."""
    rng = np.random.default_rng(seed)

    def build(scales):
        nodes, inits, outs = [], [], []

        def const(name, arr):
            inits.append(numpy_helper.from_array(np.asarray(arr), name))
            return name

        def q_dq(x, i, s):
            q = f"q{i}"
            nodes.append(helper.make_node("QuantizeLinear", [x, const(f"s{i}", np.float32(s)),
                                                             const(f"z{i}", np.int8(i % 7 - 3))], [q]))
            nodes.append(helper.make_node("DequantizeLinear", [q, f"s{i}", f"z{i}"], [f"d{i}"]))
            return q, f"d{i}"

        nodes.append(helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 3, 1, 2]))
        nodes.append(helper.make_node("DequantizeLinear", ["xt", const("sx", np.float32(0.05)),
                                                           const("zx", np.int8(-5))], ["xd"]))
        vals, chans = ["xd"], [x_shape[3]]
        for i, L in enumerate(layers):
            if "add" in L:
                a, b = (vals[j + 1] for j in L["add"])
                nodes.append(helper.make_node("Add", [a, b], [f"f{i}"]))
                c = chans[L["add"][0] + 1]
            else:
                src = vals[L.get("src", i - 1) + 1]
                cin = chans[L.get("src", i - 1) + 1]
                k, s, cout = L.get("k", 3), L.get("s", 1), L["cout"]
                group = cin if L.get("dw") else 1
                w = rng.integers(-127, 128, (cout, cin // group, k, k)).astype(np.int8)
                ws = (np.full(cout, 0.5, np.float32) / np.sqrt(k * k * cin // group) / 64).astype(np.float32)
                nodes.append(helper.make_node("DequantizeLinear", [const(f"w{i}", w), const(f"ws{i}", ws),
                                                                   const(f"wz{i}", np.zeros(cout, np.int8))],
                                              [f"wd{i}"], axis=0))
                bias = rng.integers(-500, 500, cout).astype(np.int32)
                bs = (np.float32(0.05) * ws).astype(np.float32)
                nodes.append(helper.make_node("DequantizeLinear", [const(f"b{i}", bias), const(f"bs{i}", bs),
                                                                   const(f"bz{i}", np.zeros(cout, np.int32))],
                                              [f"bd{i}"], axis=0))
                p = L.get("pads", [k // 2] * 4 if k > 1 else [0] * 4)
                conv_out = f"f{i}c" if L.get("relu") else f"f{i}"
                nodes.append(helper.make_node("Conv", [src, f"wd{i}", f"bd{i}"], [conv_out], kernel_shape=[k, k],
                                              strides=[s, s], pads=p, group=group))
                if L.get("relu"):
                    nodes.append(helper.make_node("Relu", [conv_out], [f"f{i}"]))
                c = cout
            if scales is None:
                outs.append(helper.make_tensor_value_info(f"f{i}", TensorProto.FLOAT, None))
                vals.append(f"f{i}")
            else:
                q, d = q_dq(f"f{i}", i, scales[i])
                vals.append(d)
            chans.append(c)
        if scales is not None:
            nodes.append(helper.make_node("Transpose", [f"q{len(layers) - 1}"], ["y"], perm=[0, 2, 3, 1]))
            outs = [helper.make_tensor_value_info("y", TensorProto.INT8, None)]
        g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.INT8, list(x_shape))],
                              outs, inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        return m

    import onnxruntime as ort
    probe = build(None)
    x = rng.integers(-128, 128, x_shape).astype(np.int8)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    res = ort.InferenceSession(probe.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    model = onnx.shape_inference.infer_shapes(build([max(float(np.max(np.abs(r))), 1e-3) / 100 for r in res]))
    return model, x


MBV2_BLOCK = [dict(cout=24, k=1), dict(cout=24, dw=True, s=2, relu=True), dict(cout=8, k=1)]
RESNET_BLOCK = [dict(cout=16, relu=True), dict(cout=16, relu=True), dict(cout=16), dict(add=(0, 2))]
MBV2_RESIDUAL = [dict(cout=8, k=1), dict(cout=24, k=1, relu=True), dict(cout=24, dw=True, relu=True),
                 dict(cout=8, k=1), dict(add=(0, 3))]
DOWN_BLOCK = [dict(cout=16, relu=True), dict(cout=32, s=2, pads=[0, 0, 1, 1], relu=True), dict(cout=32),
              dict(cout=32, k=1, s=2, src=0), dict(add=(2, 3))]


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
    """A scratch budget too small for whole rows forces column tiles (recompute at the seams)."""
    model, x = qdq_chain((1, 8, 16, 8), [dict(cout=16, relu=True), dict(cout=16, dw=True), dict(cout=8, k=1)])
    options = CompileOptions.resolve(scratch_bytes=700, disabled_passes=("poly_fuse",))
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
    # after the first conv (its input is the model input; 3x3 s2 4 -> 16 channels cannot overwrite it)
    # one activation tensor and a little scratch are live at every step
    steps = result.memory.schedule.per_step
    assert max(steps[1:]) <= 400 + 64 < steps[0] == 800


@pytest.mark.parametrize("model, goal", [("kws_ref_model", 8500), ("pretrainedResnet_quant", 24000)])
def test_mlperf_arena_goals(model, goal):
    path = shared_or_skip("models", "onnx", f"{model}.onnx")
    for target in ("host", "cortex-m4"):
        r = compile_model(path, target=target)
        assert r.arena_bytes <= goal, (target, r.arena_bytes)
        assert r.arena_bytes >= r.plan.lower_bound


def test_fused_chain_dsp_on_cortex_m4(tmp_path):
    if not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-gcc")):
        pytest.skip("qemu-system-arm / arm-none-eabi-gcc not installed")
    from tinyfuse.harness.qemu import build_target, run_target
    from tinyfuse.targets import get_target
    for i, layers in enumerate((MBV2_BLOCK, DOWN_BLOCK)):
        model, x = qdq_chain((1, 12, 12, 8), layers, seed=i)
        result = compile_model(model, target="cortex-m4")
        assert any(s.kernel.variant == "fused_chain" and "tinyfuse_simd.h" in s.kernel.headers for s in result.steps)
        (got,) = run_target(build_target(result, get_target("cortex-m4"), tmp_path / str(i), [x]))
        (ref,) = run_module(result.module, [x])
        assert np.array_equal(got, ref)
