"""``tinyfuse compile --archive FILE.tar`` / ``--format archive``: one tar per model (sources, headers,
metadata.json, report.json and the text report under ``<name>/``) whose files are the directory
output's, byte for byte, and build and run with gcc to TFLite Micro's outputs."""
from __future__ import annotations

import subprocess
import tarfile

import numpy as np

from tinyfuse.cli import main
from tinyfuse.codegen.templates import template
from tinyfuse.harness import run_host
from tinyfuse.driver import compile_model
from tests.conftest import require_programs, shared_or_skip, tflm_run


def _extract(tar_path, dest):
    with tarfile.open(tar_path) as tar:
        names = sorted(m.name for m in tar.getmembers())
        assert all(m.isfile() and m.mode == 0o644 for m in tar.getmembers())
        tar.extractall(dest, filter="data")
    return names


def test_archive_equals_the_directory_output_and_builds(tmp_path, capsys):
    require_programs("gcc")
    model = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    assert main(["compile", str(model), "--name", "kws", "--archive", str(tmp_path / "kws.tar")]) == 0
    assert main(["compile", str(model), "--name", "kws", "-o", str(tmp_path / "dir")]) == 0
    capsys.readouterr()
    assert main(["report", str(model), "--name", "kws", "-o", str(tmp_path / "rep"), "--plot-format", "svg"]) == 0
    report_text = capsys.readouterr().out
    names = _extract(tmp_path / "kws.tar", tmp_path / "x")
    dir_files = sorted(p.name for p in (tmp_path / "dir").iterdir())
    assert names == sorted([*(f"kws/{f}" for f in dir_files), "kws/report/report.json", "kws/report/report.txt"])
    for f in dir_files:                               # the sources, headers, fragments and manifest
        assert (tmp_path / "x" / "kws" / f).read_bytes() == (tmp_path / "dir" / f).read_bytes(), f
    assert (tmp_path / "x/kws/report/report.json").read_bytes() == (tmp_path / "rep/report.json").read_bytes()
    assert report_text.startswith((tmp_path / "x/kws/report/report.txt").read_text())   # `tinyfuse report`'s text

    # the archive's files alone build with gcc and run to TFLM's output
    src = tmp_path / "x" / "kws"
    result = compile_model(str(model), name="kws")
    main_c = tmp_path / "main.c"
    main_c.write_text(template("harness/host_main.c.j2").render(
        name="kws", NAME="KWS", inputs=result.inputs, outputs=result.outputs, fill=0, guard=0, guard_pattern=0,
        states=[], r=result))
    exe = tmp_path / "app"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{src}", str(main_c), str(src / "kws.c"),
                    str(src / "kws_weights.c"), "-lm", "-o", str(exe)], check=True)
    x = np.load(str(shared_or_skip("models", "onnx", "kws_ref_model.io.npz")))["input"]
    np.testing.assert_array_equal(run_host(exe, result, [x])[0], tflm_run(model, [x])[0])


def test_format_archive_into_a_directory_and_no_foreign_file_replaced(tmp_path, capsys):
    model = shared_or_skip("models", "tflite", "ad01_int8.tflite")
    assert main(["compile", str(model), "--format", "archive", "-o", str(tmp_path / "out")]) == 0
    assert _extract(tmp_path / "out" / "ad01_int8.tar", tmp_path / "x")[0].startswith("ad01_int8/")
    assert main(["compile", str(model), "--format", "archive", "-o", str(tmp_path / "out")]) == 0   # its own: replaced
    mine = tmp_path / "mine.tar"
    mine.write_text("not an archive")
    capsys.readouterr()
    assert main(["compile", str(model), "--archive", str(mine)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(mine) in err and "not a tinyfuse archive" in err
    assert mine.read_text() == "not an archive"
    assert main(["compile", str(model)]) == 2
    assert main(["compile", str(model), "-o", str(tmp_path / "d"), "--archive", str(tmp_path / "a.tar")]) == 2
