"""The CLI contract of issue 19 (pure Python, no C compiler): the output directory never loses a user's
file, exit codes 0/1/2/3 with one ``error:`` line and no traceback, C names that cannot shadow a
header, the model type told by content, and choices that come from the registries."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tinyfuse.cli import build_parser, main
from tinyfuse.codegen.names import C_STANDARD_HEADERS, model_name
from tinyfuse.frontend.detect import model_format
from tinyfuse.harness.verdict import top_classes
from tinyfuse.lower import KERNEL_CHOICES
from tinyfuse.memory import PLANNERS
from tinyfuse.passes.pipeline import PASS_NAMES
from tinyfuse.targets import TARGETS
from tests.conftest import ROOT, shared_or_skip
from onnx import helper

from tests.builders import good_model, model_bytes

N = helper.make_node
X4 = {"X": [1, 2, 6, 6]}

GENERATED = ["good.c", "good.cmake", "good.h", "good.mk", "good_weights.c", "metadata.json"]


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.onnx"
    path.write_bytes(good_model())
    return path


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in err[0], err
    return err[0]


# --- defect 2, 8, 15: the output directory ---------------------------------------------------------

def test_compile_into_existing_dir_keeps_user_files(tmp_path, good):
    """`mkdir p && echo x > p/main.c && tinyfuse compile ... -o p` used to delete p/main.c."""
    out = tmp_path / "p"
    out.mkdir()
    (out / "main.c").write_text("x\n")
    assert main(["compile", str(good), "-o", str(out)]) == 0
    assert (out / "main.c").read_text() == "x\n"
    assert sorted(p.name for p in out.iterdir()) == sorted(GENERATED + ["main.c"])
    assert json.loads((out / "metadata.json").read_text())["files"] == GENERATED


def test_output_dot_is_safe(tmp_path, good, monkeypatch):
    """`-o .` used to delete the current directory, then crash."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("mine")
    monkeypatch.chdir(work)
    assert main(["compile", str(good), "-o", "."]) == 0
    assert sorted(p.name for p in work.iterdir()) == sorted(GENERATED + ["notes.txt"])
    assert (work / "notes.txt").read_text() == "mine"


def test_a_second_name_keeps_the_first_models_files(tmp_path, good):
    """A second compile under another --name keeps the first one's files (two models side by side in
    one DIR, metadata.json's files_by_model; tests/unit/test_output_dir_models.py), and recompiling
    the first is no refusal; no temp file is left behind."""
    out = tmp_path / "o"
    assert main(["compile", str(good), "-o", str(out), "--name", "first"]) == 0
    (out / "first_notes.txt").write_text("mine")
    first = [f.replace("good", "first") for f in GENERATED if f != "metadata.json"]
    for _ in range(2):
        assert main(["compile", str(good), "-o", str(out)]) == 0
        assert sorted(p.name for p in out.iterdir()) == sorted(GENERATED + first + ["first_notes.txt"])
        assert main(["compile", str(good), "-o", str(out), "--name", "first"]) == 0


def test_dump_ir_inside_output_dir_survives(tmp_path, good):
    """`--dump-ir d/ir -o d` used to lose the dump (the output directory was replaced)."""
    d = tmp_path / "d"
    assert main(["compile", str(good), "-o", str(d), "--dump-ir", str(d / "ir")]) == 0
    dumps = sorted(p.name for p in (d / "ir").iterdir())
    assert dumps[:2] == [".tinyfuse-files.json", "00_input.txt"] and len(dumps) > 2
    assert sorted(p.name for p in d.iterdir()) == sorted(GENERATED + ["ir"])


def test_output_dir_and_files_honour_the_umask(tmp_path, good):
    """The directory was created 0700 (mkdtemp); now mkdir's 0777 & ~umask, files 0666 & ~umask."""
    old = os.umask(0o022)
    try:
        assert main(["compile", str(good), "-o", str(tmp_path / "a" / "b")]) == 0
    finally:
        os.umask(old)
    assert (tmp_path / "a" / "b").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o755
    assert {(tmp_path / "a" / "b" / f).stat().st_mode & 0o777 for f in GENERATED} == {0o644}


def test_forged_manifest_cannot_reach_outside(tmp_path, good):
    """Only plain file names of a tinyfuse metadata.json are ever removed."""
    out, outside = tmp_path / "o", tmp_path / "outside.txt"
    out.mkdir()
    outside.write_text("keep")
    (out / "metadata.json").write_text(json.dumps({"tinyfuse": "0", "files": ["../outside.txt", "/etc/x", ".."]}))
    assert main(["compile", str(good), "-o", str(out)]) == 0
    assert outside.read_text() == "keep"


def test_a_directory_in_the_way_is_a_user_error(tmp_path, good, capsys):
    (tmp_path / "o" / "good.h").mkdir(parents=True)
    assert main(["compile", str(good), "-o", str(tmp_path / "o")]) == 2
    assert "'good.h' is a directory" in one_error_line(capsys)
    assert (tmp_path / "o" / "good.h").is_dir()


# --- defect 6 and the exit codes ---------------------------------------------------------------------

@pytest.mark.parametrize("where", ["a_file", "/proc/tinyfuse_x", "a_file/sub"])
def test_bad_output_path_is_a_user_error(tmp_path, good, capsys, where):
    (tmp_path / "a_file").write_text("keep")
    out = where if where.startswith("/") else str(tmp_path / where)
    assert main(["compile", str(good), "-o", out]) == 2
    assert out in one_error_line(capsys)
    assert (tmp_path / "a_file").read_text() == "keep"


@pytest.mark.parametrize("option, value, valid", [
    ("--planner", "bestt", list(PLANNERS)), ("--target", "cortex-m5", list(TARGETS)),
    ("--kernels", "neon", list(KERNEL_CHOICES)), ("--disable-pass", "fuse_everything", PASS_NAMES)])
def test_option_typo_is_a_usage_error_listing_the_choices(good, tmp_path, capsys, option, value, valid):
    assert main(["compile", str(good), "-o", str(tmp_path / "o"), option, value]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"argument {option}" in err and all(v in err for v in valid)
    assert not (tmp_path / "o").exists()


def test_internal_error_is_exit_3_without_traceback(good, tmp_path, capsys, monkeypatch):
    import tinyfuse.cli as cli

    def broken(args):
        raise KeyError("a tinyfuse bug")
    monkeypatch.setitem(cli.COMMANDS, "compile", broken)
    assert main(["compile", str(good), "-o", str(tmp_path / "o")]) == 3
    line = one_error_line(capsys)
    assert line.startswith("error: internal error in tinyfuse ") and "please report" in line and "KeyError" in line
    assert main(["compile", str(good), "-o", str(tmp_path / "o"), "--debug"]) == 3
    assert "Traceback" in capsys.readouterr().err


def test_exit_codes_are_documented():
    text = build_parser().format_help()
    assert all(f"  {c}  " in text for c in "0123") and "internal error" in text
    readme = (ROOT / "README.md").read_text()
    assert "Exit codes" in readme and "internal error" in readme


def test_process_exit_code_of_a_bad_option(tmp_path, good):
    """Through the real process: a usage error exits 2 without a traceback."""
    proc = subprocess.run([sys.executable, "-m", "tinyfuse", "compile", str(good), "-o", str(tmp_path / "o"),
                           "--planner", "bestt"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "invalid choice: 'bestt'" in proc.stderr


# --- defect 7: C names -------------------------------------------------------------------------------

@pytest.mark.parametrize("name, want", [("string", "string_model"), ("tinyfuse_quant", "tinyfuse_quant_model"),
                                        ("Math", "Math_model"), ("modèle", "modele"), ("9lives", "m_9lives"),
                                        ("a-b c", "a_b_c")])
def test_name_is_sanitised_with_a_warning(tmp_path, capsys, name, want):
    path = tmp_path / "q.onnx"     # a QDQ model: its sources include tinyfuse_quant.h
    path.write_bytes(qdq_model())
    out = tmp_path / "o"
    assert main(["compile", str(path), "-o", str(out), "--name", name]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("warning: model name") and f"'{want}'" in err[0]
    files = sorted(p.name for p in out.iterdir())
    assert f"{want}.h" in files and "tinyfuse_quant.h" in files and "string.h" not in files
    assert all(p.read_bytes().isascii() for p in out.iterdir())
    assert f"int {want}_run(" in (out / f"{want}.h").read_text()


def test_name_never_a_standard_or_runtime_header():
    for h in sorted(C_STANDARD_HEADERS) + ["tinyfuse_quant", "tinyfuse_simd"]:
        with pytest.warns(UserWarning):
            got = model_name(h, "x")
        assert got.lower() not in C_STANDARD_HEADERS and got.isascii() and got.isidentifier()
    assert model_name(None, "ad01_int8") == "ad01_int8"     # a plain stem: unchanged, no warning


def qdq_model() -> bytes:
    """Quantize → Dequantize → Relu → Quantize → Dequantize: an int8 model that needs tinyfuse_quant.h."""
    s, z = np.float32(0.05), np.int8(0)
    nodes = [N("QuantizeLinear", ["X", "s", "z"], ["q"]), N("DequantizeLinear", ["q", "s", "z"], ["d"]),
             N("Relu", ["d"], ["r"]), N("QuantizeLinear", ["r", "s", "z"], ["q2"]),
             N("DequantizeLinear", ["q2", "s", "z"], ["Y"])]
    return model_bytes(nodes, X4, inits={"s": s, "z": z})


# --- defect 5: the model type from the content -----------------------------------------------------

def test_tflite_told_by_content(tmp_path, capsys):
    """`K.TFLITE` (and a flatbuffer under any name) is read as TFLite: 'TFL3' at bytes 4..8."""
    data = shared_or_skip("models", "tflite", "ad01_int8.tflite").read_bytes()
    for fname in ("K.TFLITE", "model.bin"):
        (tmp_path / fname).write_bytes(data)
        assert model_format(tmp_path / fname) == "tflite"
        assert main(["compile", str(tmp_path / fname), "-o", str(tmp_path / fname.replace(".", "_"))]) == 0
    stem = tmp_path / "K_TFLITE"
    assert (stem / "K.h").is_file() and capsys.readouterr().err == ""
    assert model_format(good_model()) == "onnx" and model_format(data) == "tflite"
    assert model_format(tmp_path / "missing.tflite") == "tflite"    # the TFLite importer names the problem
    (tmp_path / "zeros.TFLITE").write_bytes(bytes(64))
    assert model_format(tmp_path / "zeros.TFLITE") == "tflite"
    (tmp_path / "flat.onnx").write_bytes(data)
    assert model_format(tmp_path / "flat.onnx") == "tflite"


# --- defect 4: top-5 of an int8 output ----------------------------------------------------------------

def test_top5_of_int8_does_not_overflow():
    """np.argsort(-x) on int8 maps -128 to -128: the smallest value ranked first."""
    o = np.array([[-128, 5, 127, -3, 0, -128, 90]], np.int8)
    assert top_classes(o) == [2, 6, 1, 4, 3]


# --- defect 18: the model's own opset and a node's first present output -------------------------------

def test_error_names_the_declared_opset(tmp_path, capsys):
    path = tmp_path / "old.onnx"
    path.write_bytes(model_bytes([N("LRN", ["X"], ["Y"], name="lrn1", size=3)], X4, opset=11))
    assert main(["compile", str(path), "-o", str(tmp_path / "o")]) == 2
    assert "node 'lrn1' (LRN, opset 11)" in one_error_line(capsys)


def test_unnamed_node_is_named_by_its_first_present_output(tmp_path, capsys):
    """An LSTM with only Y_h (Y omitted as '') used to be named ''."""
    w, r = np.ones((1, 8, 3), np.float32), np.ones((1, 8, 2), np.float32)
    lstm = N("LSTM", ["X", "W", "R"], ["", "Y"], hidden_size=2, direction="reverse", layout=0,
             activations=["Relu", "Tanh", "Tanh"])
    path = tmp_path / "lstm.onnx"
    path.write_bytes(model_bytes([lstm], {"X": [2, 1, 3]}, inits={"W": w, "R": r}, opset=9))
    assert main(["compile", str(path), "-o", str(tmp_path / "o")]) == 2
    line = one_error_line(capsys)
    assert "node 'Y' (LSTM, opset 9)" in line, line


# --- issue 12: the cli <-> tune import cycle -------------------------------------------------------------

def test_tune_does_not_import_cli():
    code = "import sys, tinyfuse.tune, tinyfuse.harness.inputs; assert 'tinyfuse.cli' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    for path in (ROOT / "compiler" / "tune").glob("*.py"):
        src = path.read_text()
        assert "from ..cli" not in src and "import cli" not in src, path


def test_a_users_file_of_an_output_name_is_never_overwritten(tmp_path, capsys):
    """--name main beside the user's own main.c: exit 2 naming the file, before anything is written;
    an identical file, or one tinyfuse wrote there before, is fine."""
    model = tmp_path / "good.onnx"
    model.write_bytes(good_model())
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "main.c").write_text("int main(void) { return 0; }\n")
    assert main(["compile", str(model), "-o", str(proj), "--name", "main"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "main.c exists and tinyfuse did not write it" in err[0]
    assert sorted(p.name for p in proj.iterdir()) == ["main.c"]
    assert (proj / "main.c").read_text() == "int main(void) { return 0; }\n"
    assert main(["compile", str(model), "-o", str(proj), "--name", "good"]) == 0
    assert main(["compile", str(model), "-o", str(proj), "--name", "good"]) == 0      # its own files: fine


@pytest.mark.parametrize("argv", [["--seed", "-1"], ["--scratch-bytes", "-5"]])
def test_negative_seed_or_scratch_is_a_usage_error(tmp_path, capsys, argv):
    model = tmp_path / "good.onnx"
    model.write_bytes(good_model())
    command = ["run", str(model)] if argv[0] == "--seed" else ["compile", str(model), "-o", str(tmp_path / "o")]
    assert main([*command, *argv]) == 2
    assert "non-negative integer" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["garbage", "float_for_int8", "out_of_range"])
def test_run_input_mistakes_are_user_errors(tmp_path, capsys, content):
    """A bad --input file, float samples for an int8 input, or integers outside int8: exit 2, one line
    (before: BadZipFile as an internal error; silent truncation 3.7 -> 3, wrap 300 -> 44)."""
    from tinyfuse.driver import TensorInfo
    from tinyfuse.errors import TinyfuseError
    from tinyfuse.harness.inputs import load_inputs
    info = [TensorInfo("x", (1, 4), "int8", 4)]
    f = tmp_path / "x.npz"
    if content == "garbage":
        f.write_bytes(b"not a zip")
    else:
        np.savez(f, x=np.array([[3.7, 1, 2, 3]]) if content == "float_for_int8" else np.array([[300, 1, 2, 3]]))
    with pytest.raises(TinyfuseError):
        load_inputs(str(f), info, 0)


def test_empty_output_name_is_a_user_error(tmp_path, capsys, monkeypatch):
    """``-o ""`` (a script's empty $OUT) must not scatter files into the current directory."""
    model = tmp_path / "good.onnx"
    model.write_bytes(good_model())
    monkeypatch.chdir(tmp_path)
    assert main(["compile", str(model), "-o", ""]) == 2
    assert "empty output directory" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.onnx"]
