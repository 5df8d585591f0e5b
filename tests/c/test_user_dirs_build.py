"""The firmware engineer's workflow with gcc: ``run --keep DIR`` lists everything it writes
(tinyfuse.userdir), ``run --json`` has one key set, Ctrl-C is one line and exit 130, and
``tinyfuse ... | head`` closes quietly."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tinyfuse.cli import main
from tests.builders import good_model
from tests.builders.tflm_state import ring_model
from tests.conftest import ROOT, require_programs, shared_or_skip

MANIFEST = ".tinyfuse-files.json"     # tinyfuse.userdir.MANIFEST
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / ".shim"), str(ROOT)])}


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.onnx"
    path.write_bytes(good_model())
    return path

def _default_sigint() -> None:
    """In the child: SIGINT as a terminal delivers it. A shell starts background jobs with SIGINT ignored,
    and an ignored signal stays ignored across exec (Python then installs no handler): a test run started
    with `make test &` would measure nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)



def _tinyfuse(*argv, **kw) -> list[str]:
    return [sys.executable, "-m", "tinyfuse", *map(str, argv)]


@pytest.mark.parametrize("frames", [False, True], ids=["single", "frames"])
def test_keep_dir_lists_every_name_it_writes(tmp_path, good, capsys, frames):
    """What run --keep claims before the build is all it writes (harness/workdir.py stays complete), and a
    second run into the same DIR rewrites its own files."""
    require_programs("gcc")
    d = tmp_path / "k"
    argv = ["run", str(good), "--keep", str(d), *(["--frames", "2"] if frames else [])]
    assert main(argv) == 0
    listed = set(json.loads((d / MANIFEST).read_text())["files"])
    assert {p.name for p in d.iterdir()} - {MANIFEST} == listed
    assert main(argv) == 0


@pytest.mark.parametrize("frames", [False, True], ids=["single", "frames"])
def test_keep_dot_builds_in_the_current_directory(tmp_path, good, capsys, monkeypatch, frames):
    """`run --keep .` failed with "model: No such file or directory" (./model was looked up on PATH)."""
    require_programs("gcc")
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(good), "--keep", ".", *(["--frames", "2"] if frames else [])]) == 0
    assert (tmp_path / ("model_batch" if frames else "model")).is_file()


def test_run_json_keys_are_the_same_for_stateful_and_stateless_models(tmp_path, good, capsys):
    """README: `run --json` has the same keys for every model; a stateful model (frames against TFLM's
    stateful interpreter) had 15 keys, a stateless one 27, only 5 shared."""
    require_programs("gcc")
    stateful = tmp_path / "ring.tflite"
    stateful.write_bytes(ring_model(history=3, width=4))
    keys = []
    for argv in (["run", str(good)], ["run", str(stateful)], ["run", str(good), "--frames", "2"]):
        assert main([*argv, "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        keys.append(sorted(summary))
    assert keys[0] == keys[1] == keys[2]
    assert summary["kernels"] >= 1 and summary["n_frames"] == 2


def test_ctrl_c_is_one_line_and_exit_130(tmp_path):
    """SIGINT to the process group (what Ctrl-C does) while `run` imports, compiles and builds: exit 130
    and one line, never a traceback (it was a traceback during the imports, and no line afterwards)."""
    require_programs("gcc")
    model = shared_or_skip("models", "onnx", "mobilenetv2_035_96.onnx")
    for delay in (1.0, 1.8, 2.6):          # after the interpreter started, before the ~4 s run ends
        p = subprocess.Popen(_tinyfuse("run", model, "--keep", tmp_path / f"k{delay}"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True, env=ENV,
                         preexec_fn=_default_sigint)
        time.sleep(delay)
        assert p.poll() is None, "the run ended before the signal: nothing was tested"
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=120)
        assert p.returncode == 130 and err.splitlines() == ["error: interrupted (Ctrl-C)"], (delay, p.returncode, err)


def test_output_into_a_closed_pipe_is_quiet(tmp_path, good):
    """`tinyfuse report ... | head -1` printed "error: Broken pipe" (exit 2) when head had gone."""
    p = subprocess.Popen(_tinyfuse("report", good), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    p.stdout.close()                        # the reader is gone before tinyfuse prints
    err = p.stderr.read().decode()
    p.wait(timeout=120)
    assert p.returncode in (0, 141) and err == "", (p.returncode, err)
    shell = subprocess.run(["bash", "-c", f"{sys.executable} -m tinyfuse report {good} | head -1; "
                            "echo \"rc=${PIPESTATUS[0]}\" >&2"], capture_output=True, text=True, env=ENV, timeout=120)
    assert shell.stdout.startswith("model good") and len(shell.stdout.splitlines()) == 1
    assert shell.stderr.strip() in ("rc=0", "rc=141"), shell.stderr
