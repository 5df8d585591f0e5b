"""`tinyfuse project DIR` never replaces or deletes a file that is not tinyfuse's unchanged output: a file
it did not write, or one edited since (tinyfuse_project.json keeps each file's SHA-256), stops it with one
error line naming the file, before anything is written; its own files are replaced, its stale ones removed."""
from __future__ import annotations

import json

import onnx
import pytest

from tinyfuse.cli import main
from tests.builders.io_models import two_io_model


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "two_io.onnx"
    onnx.save(two_io_model(), path)
    return path


def _tree(d):
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


def test_a_users_file_stops_the_project_before_anything_is_written(tmp_path, model, capsys):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "main.c").write_text("int main(void) { return 42; }\n")
    (proj / "notes.txt").write_text("mine\n")
    before = _tree(proj)
    assert main(["project", str(proj), "--model", str(model)]) == 2
    assert str(proj / "main.c") in _error(capsys)
    assert _tree(proj) == before


def test_rerun_replaces_its_own_files_and_refuses_an_edited_one(tmp_path, model, capsys):
    proj = tmp_path / "proj"
    (proj).mkdir()
    (proj / "notes.txt").write_text("mine\n")
    assert main(["project", str(proj), "--model", str(model)]) == 0
    written = _tree(proj)
    assert main(["project", str(proj), "--model", str(model), "--seed", "7"]) == 0       # another input: replaced
    assert _tree(proj)["example_input.h"] != written["example_input.h"] and _tree(proj)["notes.txt"] == b"mine\n"
    with open(proj / "main.c", "a") as f:
        f.write("/* my change */\n")
    before = _tree(proj)
    capsys.readouterr()
    assert main(["project", str(proj), "--model", str(model)]) == 2
    assert str(proj / "main.c") in _error(capsys) and _tree(proj) == before


def test_stale_files_are_removed_only_when_unchanged(tmp_path, model):
    proj = tmp_path / "proj"
    assert main(["project", str(proj), "--model", str(model)]) == 0
    (proj / "model" / "two_io.mk").write_text("# my edit\n")
    assert main(["project", str(proj), "--model", str(model), "--name", "other"]) == 0
    files = _tree(proj)
    assert "model/other.c" in files and "model/two_io.c" not in files and "model/two_io.h" not in files
    assert files["model/two_io.mk"] == b"# my edit\n"        # edited: kept
    assert set(json.loads(files["tinyfuse_project.json"])["files"]) == {f for f in files if f not in (
        "tinyfuse_project.json", "model/two_io.mk")}


def test_a_later_compile_into_the_model_folder_is_still_tinyfuses(tmp_path, model):
    proj = tmp_path / "proj"
    assert main(["project", str(proj), "--model", str(model)]) == 0
    assert main(["compile", str(model), "-o", str(proj / "model"), "--kernels", "ref", "--disable-pass", "fuse_ops"]) == 0
    assert main(["project", str(proj), "--model", str(model)]) == 0


def test_forged_manifest_cannot_reach_outside(tmp_path, model):
    proj, outside = tmp_path / "proj", tmp_path / "outside.c"
    outside.write_text("keep\n")
    assert main(["project", str(proj), "--model", str(model)]) == 0
    meta = json.loads((proj / "tinyfuse_project.json").read_text())
    import hashlib
    meta["files"]["../outside.c"] = hashlib.sha256(b"keep\n").hexdigest()
    (proj / "tinyfuse_project.json").write_text(json.dumps(meta))
    assert main(["project", str(proj), "--model", str(model)]) == 0
    assert outside.read_text() == "keep\n"


def test_unsupported_target_writes_nothing(tmp_path, model, capsys):
    proj = tmp_path / "proj"
    assert main(["project", str(proj), "--model", str(model), "--target", "rv32imac"]) == 2
    assert "rv32imac" in _error(capsys) and not proj.exists()
    assert main(["project", str(proj)]) == 2          # --model is required
