"""CLI contract: compile writes the files, --dump-ir writes the IR after each pass, --disable-pass
with an unknown name and a missing file are one-line errors with exit code 2. (``run``, which needs
gcc: tests/c/test_cli_run.py.)"""
import json


from tinyfuse.cli import main
from tinyfuse.passes.pipeline import PASSES
from tests.builders import residual_block



def test_compile_dump_ir_and_report(tmp_path, capsys):
    model = tmp_path / "res.onnx"
    model.write_bytes(residual_block().SerializeToString())
    assert main(["compile", str(model), "-o", str(tmp_path / "out"), "--dump-ir", str(tmp_path / "ir"),
                 "--report"]) == 0
    out = capsys.readouterr().out
    assert "fused_conv2d_add_add_relu" in out and "lower bound" in out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "metadata.json", "res.c", "res.cmake", "res.h", "res.mk", "res_weights.c"]
    dumps = sorted(p.name for p in (tmp_path / "ir").iterdir())
    assert dumps[0] == ".tinyfuse-files.json"     # the manifest of what tinyfuse wrote there (tinyfuse.userdir)
    dumps = dumps[1:]
    assert dumps[0] == "00_input.txt" and len(dumps) == len(PASSES) + 1
    assert "Primitive" in (tmp_path / "ir" / dumps[-1]).read_text()
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert meta["version"] == 1 and meta["arena_bytes"] >= meta["lower_bound"] > 0


def test_unknown_pass_is_a_usage_error(tmp_path, capsys):
    """--disable-pass takes its choices from PASS_NAMES: a typo is an argparse usage error (exit 2)
    whose error line lists the valid names."""
    model = tmp_path / "res.onnx"
    model.write_bytes(residual_block().SerializeToString())
    assert main(["compile", str(model), "-o", str(tmp_path / "o"), "--disable-pass", "fuse_everything"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("tinyfuse compile: error: argument --disable-pass") and "fuse_ops" in err[-1]
    assert not (tmp_path / "o").exists()


def test_missing_file_is_a_one_line_error(tmp_path, capsys):
    assert main(["compile", str(tmp_path / "nope.onnx"), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such file" in err[0]
