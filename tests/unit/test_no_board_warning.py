"""A model larger than every qemu board of its target: ``compile`` writes it with one ``warning:`` line
(real Cortex-M7 boards carry external SDRAM), ``run`` and ``bench`` refuse it (they need a board).
hand_landmark_lite: arena 4.8 MB, weights 4.2 MB; cortex-m7's only qemu board (MPS2 AN500) has 4 MiB
of RAM and 4 MiB of flash."""
from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tinyfuse.harness.qemu import build_target
from tinyfuse.targets import NoBoardWarning, check_fits, get_target
from tests.conftest import ROOT, shared_or_skip

SIZES = ("needs 4816896 bytes of RAM for its arena", "4166904 bytes of flash", "cortex-m7", "mps2-an500",
         "4194304 bytes of RAM and 4194304 bytes of flash")


def test_cli_compile_writes_it_with_one_warning_line_and_bench_refuses_it(tmp_path):
    path = shared_or_skip("models", "real", "hand_landmark_lite.tflite")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "tinyfuse", "compile", str(path), "--target", "cortex-m7",
                           "-o", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: model 'hand_landmark_lite' "), proc.stderr
    for f in (*SIZES, "fits no qemu board tinyfuse knows"):
        assert f in lines[0], f"{f!r} not in {lines[0]!r}"
    assert (out / "hand_landmark_lite.c").exists() and (out / "hand_landmark_lite_weights.c").exists()
    assert "wrote hand_landmark_lite.c" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "tinyfuse", "bench", str(path), "--target", "cortex-m7",
                           "--keep", str(tmp_path / "build")], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: model 'hand_landmark_lite' "), proc.stderr
    assert all(f in lines[0] for f in SIZES), lines[0]
    assert not (tmp_path / "build").exists()


def test_api_compile_warns_and_a_qemu_build_refuses(tmp_path):
    path = shared_or_skip("models", "real", "hand_landmark_lite.tflite")
    with pytest.warns(NoBoardWarning) as record:
        result = compile_model(path, target="cortex-m7")
    assert len(record) == 1 and all(f in str(record[0].message) for f in SIZES)
    assert result.arena_bytes == 4816896 and "hand_landmark_lite.c" in result.files
    with pytest.raises(TinyfuseError, match="needs 4816896 bytes of RAM .* choose a larger target"):
        check_fits(result, get_target("cortex-m7"))
    with pytest.raises(TinyfuseError, match="mps2-an500"):
        build_target(result, "cortex-m7", tmp_path / "build", [])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile_model(path, target="rv32imac")       # qemu virt: 16 MiB of RAM and flash, no warning
