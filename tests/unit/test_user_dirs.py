"""Every command that writes into a directory the user names (``run --keep``, ``bench --keep``, ``report -o``,
``tune --out``, ``--dump-ir``, ``compile -o``) writes only files tinyfuse wrote there before or new ones
(tinyfuse.userdir); a user's file of the same name stops it with one ``error:`` line, exit 2, before anything
is written. Also: two models in one ``-o DIR``, foreign manifests, and model paths that are not model files.
Pure Python: every refusal here comes before a C compiler or qemu would run."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from tinyfuse.cli import main
from tinyfuse.errors import TinyfuseError
from tests.builders import good_model
from tests.conftest import ROOT, shared_or_skip


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.onnx"
    path.write_bytes(good_model())
    return path


MANIFEST = ".tinyfuse-files.json"     # tinyfuse.userdir.MANIFEST


def snapshot(d) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``d`` (folders as "dir")."""
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(d.rglob("*"))}


def user_project(d):
    """A firmware project of the user's: the names tinyfuse's commands write, with the user's own content."""
    d.mkdir()
    for name, text in {"main.c": "int main(void) { return 0; }\n", "model.elf": "my own firmware image\n",
                       "report.json": '{"mine": true}\n', "batch_main.c": "/* mine */\n",
                       "front.md": "# my notes\n", "00_input.txt": "my notes\n",
                       "Makefile": "all:\n\t@echo mine\n", "CMakeLists.txt": "project(mine C)\n"}.items():
        (d / name).write_text(text)
    (d / "plots").mkdir()
    (d / "plots" / "a.svg").write_text("<svg/>\n")
    return d


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in err[0], err
    return err[0]


REFUSALS = {   # command -> (arguments after the model, the user's file that stops it)
    "run --keep": (["run", "--keep", "{d}"], "main.c"),
    "run --keep --target": (["run", "--keep", "{d}", "--target", "cortex-m4"], "model.elf"),
    "run --frames --keep": (["run", "--frames", "2", "--keep", "{d}"], "batch_main.c"),
    "bench --keep": (["bench", "--keep", "{d}", "--target", "cortex-m4"], "model.elf"),
    "report -o": (["report", "-o", "{d}"], "report.json"),
    "compile --dump-ir": (["compile", "-o", "{out}", "--dump-ir", "{d}"], "00_input.txt"),
    "tune --out": (["tune", "--target", "cortex-m4", "--out", "{d}", "--records", "{out}/r.jsonl"], "front.md"),
}


@pytest.mark.parametrize("case", REFUSALS, ids=list(REFUSALS))
def test_a_users_file_stops_the_command_before_anything_is_written(tmp_path, good, capsys, case):
    """The data-loss defect: run/bench --keep, report -o, tune --out and --dump-ir overwrote the user's main.c,
    model.elf, report.json, ... Now: exit 2, one line naming the file, the directory byte for byte as it was."""
    d = user_project(tmp_path / "proj")
    before = snapshot(d)
    command, name = REFUSALS[case]
    argv = [a.format(d=d, out=tmp_path / "out") for a in command]
    assert main([argv[0], str(good), *argv[1:]]) == 2
    line = one_error_line(capsys)
    assert f"{d / name} exists and tinyfuse did not write it" in line, line
    assert snapshot(d) == before


def test_claim_writes_its_own_files_again_and_lists_them(tmp_path):
    from tinyfuse.userdir import claim
    d = tmp_path / "k"
    claim(d, ["main.c", "src"], "--keep DIR")
    (d / "main.c").write_text("tinyfuse's\n")
    (d / "src").mkdir()
    claim(d, ["main.c", "src", "model"], "--keep DIR")         # its own files: fine, and a new name
    assert json.loads((d / MANIFEST).read_text())["files"] == ["main.c", "model", "src"]
    (d / "notes.txt").write_text("mine\n")
    with pytest.raises(TinyfuseError, match="notes.txt exists and tinyfuse did not write it"):
        claim(d, ["notes.txt"], "--keep DIR")
    assert (d / "notes.txt").read_text() == "mine\n"


def test_compile_and_the_other_commands_share_what_tinyfuse_wrote(tmp_path, good, capsys):
    """A file one tinyfuse command wrote into DIR is tinyfuse's for the others: compile --name main, then
    claiming main.c (run --keep) is fine; a forged manifest naming ../x cannot reach outside DIR."""
    d = tmp_path / "d"
    assert main(["compile", str(good), "-o", str(d), "--name", "main"]) == 0
    from tinyfuse.userdir import claim
    claim(d, ["main.c"], "--keep DIR")
    (tmp_path / "x").write_text("mine\n")
    (d / MANIFEST).write_text(json.dumps({"tinyfuse": "0", "files": ["../x", "/etc/passwd", "."]}))
    with pytest.raises(ValueError):
        claim(d, ["../x"], "--keep DIR")
    assert (tmp_path / "x").read_text() == "mine\n"


@pytest.mark.parametrize("content", [b"not json", b'{"files": ["main.c"]}', b"\xff\xfe"])
def test_a_foreign_files_manifest_stops_the_command(tmp_path, good, capsys, content):
    d = tmp_path / "d"
    d.mkdir()
    (d / MANIFEST).write_bytes(content)
    assert main(["report", str(good), "-o", str(d)]) == 2
    assert f"{d / MANIFEST} is not a tinyfuse manifest" in one_error_line(capsys)
    assert (d / MANIFEST).read_bytes() == content and sorted(p.name for p in d.iterdir()) == [MANIFEST]


@pytest.mark.parametrize("content", [b'{"foo": 1}', b'{"tinyfuse": "0.1", "files_by_m', b"[1, 2]", b"\xff\xfe\x00"])
def test_a_foreign_or_corrupt_metadata_json_is_one_clear_line(tmp_path, good, capsys, content):
    """Before: "metadata.json exists and tinyfuse did not write it (it is not in metadata.json)"."""
    d = tmp_path / "d"
    d.mkdir()
    (d / "metadata.json").write_bytes(content)
    assert main(["compile", str(good), "-o", str(d)]) == 2
    assert f"{d / 'metadata.json'} is not a tinyfuse manifest (" in one_error_line(capsys)
    assert (d / "metadata.json").read_bytes() == content and len(list(d.iterdir())) == 1


@pytest.mark.parametrize("first,second", [("kws", "kws_weights"), ("kws_weights", "kws")])
def test_two_models_never_overwrite_each_others_files(tmp_path, good, capsys, first, second):
    """``--name kws`` then ``--name kws_weights`` into one DIR replaced kws's kws_weights.c (exit 0)."""
    d = tmp_path / "d"
    assert main(["compile", str(good), "-o", str(d), "--name", first]) == 0
    capsys.readouterr()
    before = snapshot(d)
    assert main(["compile", str(good), "-o", str(d), "--name", second]) == 2
    line = one_error_line(capsys)
    assert f"{d / 'kws_weights.c'} belongs to model '{first}'" in line and f"model '{second}'" in line, line
    assert snapshot(d) == before
    assert main(["compile", str(good), "-o", str(d), "--name", first]) == 0      # its own files: fine


def test_tune_refuses_a_foreign_records_file_and_model_json(tmp_path, good, capsys):
    """tune appended its records to any JSON-lines file and replaced <records>.model.json."""
    records = tmp_path / "r.jsonl"
    records.write_text('{"my": "data"}\n')
    assert main(["tune", str(good), "--target", "cortex-m4", "--records", str(records)]) == 2
    assert "not a tuning-records file" in one_error_line(capsys)
    assert records.read_text() == '{"my": "data"}\n'
    records.unlink()
    model_json = tmp_path / "r.jsonl.model.json"
    model_json.write_text('{"my": "model"}\n')
    assert main(["tune", str(good), "--target", "cortex-m4", "--records", str(records)]) == 2
    assert f"{model_json} exists and tinyfuse did not write it" in one_error_line(capsys)
    assert model_json.read_text() == '{"my": "model"}\n' and not records.exists()


def _cli(*argv, timeout=60):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / ".shim"), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "tinyfuse", *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.mark.parametrize("kind", ["directory", "dev_zero", "fifo", "truncated_tflite"])
def test_a_model_path_that_is_no_model_file_is_one_line(tmp_path, kind):
    """A directory ("no such file"), /dev/zero ("no such file"), a FIFO (hung: its first bytes were read),
    a truncated .tflite (an error not naming the file): now one line naming it, exit 2, never a hang."""
    path = {"directory": tmp_path, "dev_zero": "/dev/zero", "fifo": tmp_path / "m.onnx",
            "truncated_tflite": tmp_path / "t.tflite"}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "truncated_tflite":
        path.write_bytes(shared_or_skip("models", "real", "okay_nabu.tflite").read_bytes()[:300])
    proc = _cli("compile", path, "-o", tmp_path / "out", timeout=60)
    err = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(err) == 1 and err[0].startswith(f"error: {path}: "), proc.stderr
    assert {"directory": "is a directory", "dev_zero": "not a regular file", "fifo": "not a regular file",
            "truncated_tflite": "truncated"}[kind] in err[0]


def test_input_files_are_bounded_too(tmp_path, good, capsys):
    assert main(["run", str(good), "--input", "/dev/zero"]) == 2
    assert "--input /dev/zero: not a regular file" in one_error_line(capsys)
    assert main(["run", str(good), "--tflite-ref", str(tmp_path)]) == 2
    assert f"--tflite-ref {tmp_path}: is a directory" in one_error_line(capsys)
