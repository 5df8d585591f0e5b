"""Shared test helpers: where ../shared lives, CI-aware skips (skip outside CI, fail in CI), the oracles
(onnxruntime, TFLite Micro), and compile → gcc → run of a model vs onnxruntime."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
MODELS = SHARED / "models"
# the int8 MLPerf Tiny models and TFLM's planned arena head for each (print_allocations())
TFLM_HEAD = {"kws_ref_model": 16000, "pretrainedResnet_quant": 49152, "ad01_int8": 768}


def skip_or_fail(reason: str) -> None:
    """Something a test needs is missing: skip outside CI, fail when CI=true (CI installs everything)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (missing in CI)")
    pytest.skip(reason)


def shared_or_skip(*parts: str) -> Path:
    """A path under ../shared; skips with a message when ../shared is absent, fails when CI=true."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        skip_or_fail(f"{p} not found (../shared absent)")
    return p


def require_programs(*names: str) -> None:
    """Skip (outside CI) or fail (CI=true) when a program the test runs (gcc, clang, make) is not on PATH."""
    missing = [n for n in names if shutil.which(n) is None]
    if missing:
        skip_or_fail(f"{', '.join(missing)} not installed")


def ort_run(model: onnx.ModelProto | str | Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The independent oracle: onnxruntime with its graph optimizations off."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    src = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    return ort.InferenceSession(src, so, providers=["CPUExecutionProvider"]).run(None, feeds)


def tflm_run(model, inputs: list[np.ndarray], arena_size: int = 512 * 1024) -> list[np.ndarray]:
    """The independent int8 oracle: TensorFlow Lite Micro (the tflite_micro package) on a .tflite path or
    bytes. Returns output 0 only (the models here have one output)."""
    import tflite_micro
    rt = tflite_micro.runtime.Interpreter
    it = rt.from_bytes(bytes(model), arena_size=arena_size) if isinstance(model, (bytes, bytearray)) \
        else rt.from_file(str(model), arena_size=arena_size)
    for i, x in enumerate(inputs):
        it.set_input(np.ascontiguousarray(x), i)
    it.invoke()
    return [np.array(it.get_output(0), copy=True)]


def compile_and_run(model, inputs: list[np.ndarray], tmp_path: Path, **options):
    """Compile with tinyfuse, build with strict gcc flags, run once. Returns (outputs, CompileResult)."""
    from tinyfuse.driver import compile_model
    from tinyfuse.harness import build_host, run_host
    result = compile_model(model, **options)
    exe = build_host(result, tmp_path)
    return run_host(exe, result, inputs), result


def check(tmp_path, nodes, inputs, outputs, opset=13, inits=None, oracle_nodes=None):
    """Compile, run and compare every output with onnxruntime (on ``oracle_nodes`` instead when
    onnxruntime cannot run ``nodes`` but an equivalent graph); the numpy interpreter on the
    frontend's IR (the ops' ``compute``) must agree too. Returns the CompileResult."""
    from tinyfuse.frontend import from_onnx
    from tinyfuse.ir.interpreter import run_module
    from tests.builders import model_of
    model = model_of(nodes, inputs, outputs, opset, inits)
    outs, result = compile_and_run(model, list(inputs.values()), tmp_path)
    refs = ort_run(model_of(oracle_nodes, inputs, outputs, opset, inits) if oracle_nodes else model, inputs)
    interp = run_module(from_onnx(model), list(inputs.values()))
    for name, o, i, r in zip(outputs, outs, interp, refs):
        for what, got in (("C", o), ("interpreter", i)):
            try:
                assert_close_to(np.asarray(got), r)
            except AssertionError as e:
                raise AssertionError(f"output {name} ({what}): {e}") from None
    return result


def random_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def assert_close_to(out: np.ndarray, ref: np.ndarray, rel: float = 1e-4):
    """|out - ref| <= rel * max|ref| (the issue's float criterion)."""
    assert out.shape == ref.shape, (out.shape, ref.shape)
    scale = max(float(np.max(np.abs(ref))), 1e-30)
    err = float(np.max(np.abs(out.astype(np.float64) - ref.astype(np.float64))))
    assert err <= rel * scale, f"max abs diff {err:.3g} > {rel} x max|ref| {scale:.3g}"


@pytest.fixture
def fuse_all_siblings(monkeypatch):
    """fuse_horizontal with views_only off: sibling groups fuse even when a consumer needs a copy."""
    from tinyfuse.passes import fuse_horizontal
    monkeypatch.setattr(fuse_horizontal, "VIEWS_ONLY", False)


QUANT_HEADER_SHIM = """
#include "tinyfuse/quant.h"
void mbqm(const int32_t *x, int32_t *y, int n, int32_t m, int32_t s, int single) {
  for (int i = 0; i < n; ++i) y[i] = single ? tf_mbqm_single(x[i], m, s) : tf_mbqm(x[i], m, s);
}
void qadd(const int8_t *a, const int8_t *b, int8_t *y, int n, const int32_t *p) {
  for (int i = 0; i < n; ++i)
    y[i] = tf_sat_i8(tf_qadd(a[i], p[0], p[1], p[2], b[i], p[3], p[4], p[5], p[6], p[7], p[8]));
}
"""


def quant_header_lib(workdir: Path, *cflags: str):
    """runtime_c/include/tinyfuse/quant.h built with gcc as a shared library (ctypes.CDLL) exposing
    ``mbqm(x, y, n, m, shift, single)`` and ``qadd(a, b, y, n, params[9])`` over arrays."""
    import ctypes
    import subprocess
    src, so = workdir / "quant_shim.c", workdir / "quant_shim.so"
    src.write_text(QUANT_HEADER_SHIM)
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", *cflags,
                    f"-I{ROOT / 'runtime_c' / 'include'}", str(src), "-o", str(so)], check=True)
    return ctypes.CDLL(str(so))


# ----------------------------------------------------------------------------- test tiers (markers)
# needs_cc: builds C with the host compiler (tests/c, tests/fuzz, tests/conformance); needs_qemu: runs
# under qemu with the cross toolchains (tests/target); slow: the files that take most of a tier's time
# (golden sources over every shared model, the strategy check, sanitizer builds, the installed wheel,
# real models, the node tests, fuzz smokes). `make check` runs `-m "not needs_qemu and not slow"`:
# gcc only, a few minutes; `make test` runs everything.
NEEDS_CC_DIRS = ("c", "fuzz", "conformance")
SLOW_FILES = {"test_golden_sources.py", "test_strategy.py", "test_determinism.py", "test_sanitize_families.py",
              "test_sanitizers.py", "test_install.py", "test_real_models.py", "test_real_int8_simd_host.py",
              "test_conformance.py", "test_tflm_twin_variants.py", "test_fuzz_smoke.py", "test_parser_fuzz_smoke.py",
              "test_tflm_twin_smoke.py", "test_int8_tflm.py", "test_validate_oracles.py", "test_quantize.py",
              "test_project_host.py", "test_c_api.py", "test_wconversion_regressions.py", "test_struct_ops_tflm.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        parts = Path(str(item.fspath)).relative_to(ROOT / "tests").parts
        if parts[0] in NEEDS_CC_DIRS:
            item.add_marker(pytest.mark.needs_cc)
        if parts[0] == "target":
            item.add_marker(pytest.mark.needs_qemu)
            item.add_marker(pytest.mark.needs_cc)
        if parts[-1] in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
