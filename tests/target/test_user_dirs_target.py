"""A stranger's firmware folder under every command (tinyfuse.userdir): run/bench --keep on a target list all
they write, no command changes a byte of the user's files, and Ctrl-C during `tune` (Dask workers) is one line."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.builders import good_model
from tests.conftest import ROOT
from tests.target.conftest import require_tools

MANIFEST = ".tinyfuse-files.json"     # tinyfuse.userdir.MANIFEST
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / ".shim"), str(ROOT)])}
USER_FILES = {"main.c": "int main(void) { return 0; }\n", "model.elf": "my own firmware image\n",
              "report.json": '{"mine": true}\n', "Makefile": "all:\n\t@echo mine\n",
              "CMakeLists.txt": "project(mine C)\n", "plots/roofline.svg": "<svg/>\n"}

def _default_sigint() -> None:
    """In the child: SIGINT as a terminal delivers it. A shell starts background jobs with SIGINT ignored,
    and an ignored signal stays ignored across exec (Python then installs no handler): a test run started
    with `make test &` would measure nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)



def tinyfuse(*argv, cwd=None, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tinyfuse", *map(str, argv)], capture_output=True, text=True,
                          cwd=cwd, env=ENV, timeout=timeout)


def checksums(d) -> dict[str, str]:
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("argv", [["run", "--target", "cortex-m4"], ["bench", "--target", "cortex-m4", "--wcet"]],
                         ids=["run", "bench"])
def test_keep_dir_on_a_target_lists_every_name_it_writes(tmp_path, argv):
    require_tools("cortex-m4")
    model = tmp_path / "good.onnx"
    model.write_bytes(good_model())
    d = tmp_path / "k"
    for _ in range(2):                   # the second run rewrites its own files
        proc = tinyfuse(argv[0], model, "--keep", d, *argv[1:])
        assert proc.returncode == 0, proc.stderr
    listed = set(json.loads((d / MANIFEST).read_text())["files"])
    assert {p.name for p in d.iterdir()} - {MANIFEST} <= listed and "model.elf" in listed


def test_a_strangers_folder_is_never_changed(tmp_path):
    """Every command pointed at a folder holding the user's main.c, model.elf, report.json, Makefile,
    CMakeLists.txt and plots/: the ones that would write a name of theirs refuse with one line (exit 2), the
    others only add new files; the sha256 of every file of the user's is what it was."""
    require_tools("cortex-m4")
    model = tmp_path / "good.onnx"
    model.write_bytes(good_model())
    np.savez(tmp_path / "samples.npz", X=np.random.default_rng(0).standard_normal((3, 1, 3, 8, 8)).astype(np.float32))
    d = tmp_path / "firmware"
    for name, text in USER_FILES.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(text)
    before = checksums(d)
    refused = {("compile", "-o", d, "--name", "main"): "main.c", ("run", "--keep", d): "main.c",
               ("bench", "--keep", d, "--target", "cortex-m4"): "model.elf", ("report", "-o", d): "report.json"}
    for argv, name in refused.items():
        proc = tinyfuse(argv[0], model, *argv[1:], cwd=d)
        assert proc.returncode == 2 and proc.stderr.splitlines() == [
            f"error: {d / name} exists and tinyfuse did not write it (not listed in {d / 'metadata.json'} or "
            f"{MANIFEST}); choose another {'--name or -o DIR' if argv[0] == 'compile' else argv[1] + ' DIR'}, "
            "or move that file"], (argv, proc.stderr)
    for argv in (("validate", "--inputs", tmp_path / "samples.npz", "--no-progress"),
                 ("tune", "--target", "cortex-m4", "--trials", "2", "--workers", "1", "--no-progress", "--out", d)):
        proc = tinyfuse(argv[0], model, *argv[1:], cwd=d)
        assert proc.returncode == 0, (argv, proc.stderr)
    after = checksums(d)
    assert {k: after[k] for k in before} == before
    assert set(after) - set(before) <= {"front.md", "front.svg", MANIFEST, "good.cortex-m4.tune.jsonl",
                                        "good.cortex-m4.tune.jsonl.model.json"}


def test_ctrl_c_during_tune_is_one_line(tmp_path):
    """SIGINT to the process group while Dask workers measure: every worker printed its traceback."""
    require_tools("cortex-m4")
    pytest.importorskip("distributed")
    model = tmp_path / "good.onnx"
    model.write_bytes(good_model())
    p = subprocess.Popen([sys.executable, "-m", "tinyfuse", "tune", str(model), "--target", "cortex-m4", "--trials",
                          "40", "--workers", "2", "--no-progress", "--records", str(tmp_path / "r.jsonl")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, env=ENV,
                         preexec_fn=_default_sigint)
    deadline = time.monotonic() + 120
    while not (tmp_path / "r.jsonl").exists() and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.2)                   # the workers are measuring once a record is written
    time.sleep(1.0)
    assert p.poll() is None, "tune ended before the signal: nothing was tested"
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130 and err.splitlines() == ["error: interrupted (Ctrl-C)"], (p.returncode, err)
