"""THE install test (issue 19 item 1): a non-editable install compiles and runs models from anywhere.

Marked ``install`` (``pytest -m install``); needs gcc and pip's access to the dependencies (an index
or a wheel cache). It builds the wheel (``pip wheel --no-deps``), installs it with its dependencies
into a fresh venv (about 30 s with pip's cache), and from a temporary directory outside the
repository runs, with the venv's own ``tinyfuse`` script:

- ``python -c "import tinyfuse"``: the package comes from the venv, not from the source tree;
- ``tinyfuse compile`` of a float and an int8 ONNX model and of an int8 .tflite (without tflite-micro,
  which is not a runtime dependency): exit 0, the header and metadata.json written;
- ``tinyfuse run --json`` of the same two ONNX models (templates and C runtime found as package data,
  gcc builds, the outputs equal onnxruntime / the int8 reference): exit 0, ``outputs_match``.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, shared_or_skip

pytestmark = pytest.mark.install

FLOAT, INT8 = "onnx/kws_ref_model_float32.onnx", "onnx/kws_ref_model.onnx"


def _run(cmd, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def _ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, f"{proc.args}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh venv with the wheel of this source tree installed (not editable)."""
    base = tmp_path_factory.mktemp("install")
    # a copy of the working tree without build products: an in-tree build would reuse a stale build/lib
    src = base / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns("build", ".venv", ".git", "*.egg-info", "__pycache__",
                                                             ".imp", ".pytest_cache"))
    _ok(_run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", base / "wheel", src], base))
    (wheel,) = (base / "wheel").glob("tinyfuse-*.whl")
    _ok(_run([sys.executable, "-m", "venv", base / "venv"], base))
    bindir = base / "venv" / "bin"
    _ok(_run([bindir / "python", "-m", "pip", "install", "-q", wheel], base))
    return bindir


def test_import_comes_from_the_venv(venv, tmp_path):
    proc = _ok(_run([venv / "python", "-c", "import tinyfuse, sys; print(tinyfuse.__file__); "
                     "print('tflite_micro' in sys.modules)"], tmp_path))
    where, tflm = proc.stdout.split()
    assert Path(where).is_relative_to(venv.parent), where
    assert not Path(where).is_relative_to(ROOT), where
    assert tflm == "False"
    proc = _run([venv / "python", "-c", "import tflite_micro"], tmp_path)
    assert proc.returncode != 0        # not installed: tflite-micro is only the [tflm] / [test] extra


@pytest.mark.parametrize("model,int8", [(FLOAT, False), (INT8, True), ("tflite/ad01_int8.tflite", True)])
def test_compile_outside_the_repo(venv, model, int8, tmp_path):
    path = shared_or_skip("models", *model.split("/"))
    _ok(_run([venv / "tinyfuse", "compile", path, "-o", tmp_path / "out", "--name", "m"], tmp_path))
    (header,) = (tmp_path / "out").rglob("m.h")
    meta = json.loads((header.parent / "metadata.json").read_text())
    assert meta["model"] == "m" and meta["arena_bytes"] > 0 and len(meta["kernels"]) > 0
    assert ("#define M_INPUT0_SCALE" in header.read_text()) == int8


@pytest.mark.parametrize("model", [FLOAT, INT8])
def test_run_outside_the_repo(venv, model, tmp_path):
    path = shared_or_skip("models", *model.split("/"))
    proc = _ok(_run([venv / "tinyfuse", "run", path, "--json"], tmp_path))
    summary = json.loads(proc.stdout)
    assert summary["outputs_match"] is True, summary
    if model == INT8:
        assert summary["ref_exact"] is True, summary
