"""Shared test helpers: where ../shared lives, and compile → gcc → run of a model vs onnxruntime."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
MODELS = SHARED / "models"


def shared_or_skip(*parts: str) -> Path:
    """A path under ../shared; skips with a message when ../shared is absent, fails when CI=true."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{p} is missing in CI")
        pytest.skip(f"{p} not found (../shared absent outside CI)")
    return p


def ort_run(model: onnx.ModelProto | str | Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The independent oracle: onnxruntime with its graph optimizations off."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    src = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    return ort.InferenceSession(src, so, providers=["CPUExecutionProvider"]).run(None, feeds)


def compile_and_run(model, inputs: list[np.ndarray], tmp_path: Path, **options):
    """Compile with tinyfuse, build with strict gcc flags, run once. Returns (outputs, CompileResult)."""
    from tinyfuse.driver import compile_model
    from tinyfuse.harness import build_host, run_host
    result = compile_model(model, **options)
    exe = build_host(result, tmp_path)
    return run_host(exe, result, inputs), result


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
