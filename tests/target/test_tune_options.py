"""``tinyfuse tune`` takes compile's build options and records them: tune --kernels ref, then compile
--kernels ref --tuning-records F builds the recorded choice, while a compile with the default options
is refused with one `error:` line that says why (its knobs were measured on other kernels)."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import shared_or_skip
from tests.target.conftest import require_tools


def _tinyfuse(*args, cwd):
    return subprocess.run([sys.executable, "-m", "tinyfuse", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=900)


def test_tune_with_kernels_ref_then_compile_with_and_without_it(tmp_path):
    require_tools("cortex-m4")
    path = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    rec = tmp_path / "kws.jsonl"
    t = _tinyfuse("tune", path, "--target", "cortex-m4", "--kernels", "ref", "--trials", 3, "--workers", 1,
                  "--records", rec, "--no-progress", "--json", cwd=tmp_path)
    assert t.returncode == 0, t.stderr
    records = [json.loads(line) for line in rec.read_text().splitlines()]
    built = [r for r in records if r["kind"] in ("model", "choice")]
    assert built and all(r["options"]["kernels"] == "ref" for r in built)
    same = _tinyfuse("compile", path, "--target", "cortex-m4", "--kernels", "ref", "--tuning-records", rec,
                     "-o", tmp_path / "ref", cwd=tmp_path)
    assert same.returncode == 0 and "warning" not in same.stderr, same.stderr
    meta = json.loads((tmp_path / "ref" / "metadata.json").read_text())
    assert {k["variant"] for k in meta["kernels"]} <= {"ref", "inplace_dw_plane", "inplace_pixel_ascending",
                                                      "inplace_pixel_descending"}
    other = _tinyfuse("compile", path, "--target", "cortex-m4", "--tuning-records", rec, "-o", tmp_path / "auto",
                      cwd=tmp_path)
    lines = other.stderr.strip().splitlines()
    assert other.returncode == 2 and len(lines) == 1, other.stderr
    assert "measured under --kernels ref, this compile asks for the default options" in lines[0]
