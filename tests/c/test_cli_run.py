"""CLI ``run``: compile, build with gcc, run on the host against onnxruntime; the --json keys."""
import json

import numpy as np

from tinyfuse.cli import main
from tests.builders import residual_block


def test_run_json_keys(tmp_path, capsys):
    model = tmp_path / "res.onnx"
    model.write_bytes(residual_block().SerializeToString())
    x = np.random.default_rng(0).standard_normal((1, 8, 6, 7)).astype(np.float32)
    np.savez(tmp_path / "x.npz", x=x)
    assert main(["run", str(model), "--input", str(tmp_path / "x.npz"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert set(got) == {"model", "target", "kernels", "arena_bytes", "naive_bytes", "max_abs_diff",
                        "max_abs_ref", "outputs_match"}
    assert got["outputs_match"] is True and got["kernels"] == 6
