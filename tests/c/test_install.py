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


# a firmware engineer's folder: files named like the ones the commands write, which are theirs
USER_FILES = {"main.c": "int main(void) { return 0; }\n", "model.elf": "\x7fELF mine\n", "Makefile": "all:\n\tcc main.c\n",
              "CMakeLists.txt": "project(mine C)\n", "kws.c": "/* my kws */\n", "kws.h": "/* my header */\n",
              "kws.tar": "my archive\n", "report.json": "{\"mine\": true}\n", "network_report.txt": "mine\n",
              "kws_q.onnx": "my model\n", "metadata.json": "{\"mine\": 1}\n"}


def _checksums(d: Path) -> dict:
    import hashlib
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir()) if p.is_file()}


def test_every_command_from_a_users_folder_changes_none_of_its_files(venv, tmp_path):
    """The fresh-venv trial: from a folder holding a user's files named like tinyfuse's outputs, each
    command aimed at that folder stops with one error line (exit 2) and aimed at a new subfolder succeeds
    (exit 0); the user's files are byte for byte what they were (sha256 before and after)."""
    import numpy as np
    import onnx
    int8, flt = shared_or_skip("models", "onnx", "kws_ref_model.onnx"), shared_or_skip("models", "onnx", "kws_ref_model_float32.onnx")
    d = tmp_path / "firmware"
    d.mkdir()
    for name, text in USER_FILES.items():
        (d / name).write_text(text)
    before = _checksums(d)
    inp = onnx.load(str(flt)).graph.input[0]
    shape = [x.dim_value or 1 for x in inp.type.tensor_type.shape.dim]
    rng = np.random.default_rng(0)
    np.savez(d / "cal.npz", **{inp.name: rng.standard_normal((4, *shape[1:])).astype(np.float32)})
    q_in = onnx.load(str(int8)).graph.input[0].name
    np.savez(d / "samples.npz", **{q_in: rng.integers(-128, 128, (3, *shape[1:])).astype(np.int8)})
    before |= _checksums(d)
    tf = venv / "tinyfuse"
    refused = [[tf, "compile", int8, "-o", d, "--name", "kws"], [tf, "compile", int8, "--archive", d / "kws.tar"],
               [tf, "run", int8, "--keep", d], [tf, "report", int8, "-o", d],
               [tf, "quantize", flt, "--calibration", d / "cal.npz", "-o", d / "kws_q.onnx"],
               [tf, "project", d, "--model", int8, "--target", "cortex-m4"]]
    for cmd in refused:
        proc = _run(cmd, d)
        lines = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
        assert proc.returncode == 2 and len(lines) == 1, (cmd, proc.returncode, proc.stderr[-1500:])
    fine = [[tf, "compile", int8, "-o", d / "out", "--name", "kws"], [tf, "compile", int8, "--archive", d / "a" / "kws.tar"],
            [tf, "run", int8, "--keep", d / "run"], [tf, "report", int8, "--json"],
            [tf, "validate", int8, "--inputs", d / "samples.npz", "--json"],
            [tf, "quantize", flt, "--calibration", d / "cal.npz", "-o", d / "q" / "kws_q.onnx"],
            [tf, "project", d / "proj", "--model", int8, "--target", "cortex-m4"]]
    for cmd in fine:
        _ok(_run(cmd, d))
    assert _checksums(d) == before
