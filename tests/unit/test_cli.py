"""CLI contract: compile writes the files, --dump-ir writes the IR after each pass, --disable-pass
with an unknown name and a missing file are one-line errors with exit code 2."""
import json

import numpy as np

from tinyfuse.cli import main
from tinyfuse.passes.pipeline import PASSES
from tests.unit.test_passes import residual_block

# run --json: the same keys for every model type (issue 19 #16)
RUN_JSON_KEYS = {"model", "target", "board", "tinyfuse_version", "kernels", "arena_bytes", "naive_bytes",
                 "weights_bytes", "macs", "oracle", "oracle_error", "compared_with", "max_abs_diff", "max_abs_ref",
                 "quantized", "ref_exact", "max_lsb_diff", "tflm_exact", "tflm_error", "outputs_match"}


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
    assert dumps[0] == "00_input.txt" and len(dumps) == len(PASSES) + 1
    assert "Primitive" in (tmp_path / "ir" / dumps[-1]).read_text()
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert meta["version"] == 1 and meta["arena_bytes"] >= meta["lower_bound"] > 0


def test_run_json_keys(tmp_path, capsys):
    model = tmp_path / "res.onnx"
    model.write_bytes(residual_block().SerializeToString())
    x = np.random.default_rng(0).standard_normal((1, 8, 6, 7)).astype(np.float32)
    np.savez(tmp_path / "x.npz", x=x)
    assert main(["run", str(model), "--input", str(tmp_path / "x.npz"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert set(got) == RUN_JSON_KEYS
    assert got["outputs_match"] is True and got["kernels"] == 6 and got["oracle"] == "onnxruntime"


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
