"""CLI edges of streaming models (found by a new user trying to break them): --frames must be a positive
integer, --stateful may be given several times (the pairs add up), and pairs that leave no per-frame input
or output are one `error:` line with exit 2 (they crashed the header template before)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tinyfuse.cli import main


def _two_state_model(path):
    """y = x + a_in + b_in; a_out = a_in + x; b_out = b_in * x (all float [1, 4])."""
    v = {n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in
         ("x", "a_in", "b_in", "y", "a_out", "b_out")}
    nodes = [helper.make_node("Add", ["a_in", "x"], ["a_out"]), helper.make_node("Mul", ["b_in", "x"], ["b_out"]),
             helper.make_node("Add", ["a_out", "b_in"], ["y"])]
    graph = helper.make_graph(nodes, "g", [v["x"], v["a_in"], v["b_in"]], [v["y"], v["a_out"], v["b_out"]])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return str(path)


def _usage_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("tinyfuse run: error: argument --frames:"), err
    return err[-1]


@pytest.mark.parametrize("value,message", [("0", "at least 1"), ("-1", "non-negative"), ("abc", "'abc'")])
def test_frames_must_be_a_positive_integer(tmp_path, capsys, value, message):
    line = _usage_error(capsys, ["run", _two_state_model(tmp_path / "m.onnx"), "--frames", value])
    assert message in line and "_non_negative" not in line


def test_repeated_stateful_flags_add_up(tmp_path):
    model = _two_state_model(tmp_path / "m.onnx")
    assert main(["compile", model, "-o", str(tmp_path / "out"), "--stateful", "a_in=a_out",
                 "--stateful", "b_in=b_out"]) == 0
    header = (tmp_path / "out" / "m.h").read_text()
    assert "#define M_NUM_STATES 2" in header


@pytest.mark.parametrize("pairs,left", [("a_in=a_out,b_in=b_out,x=y", "input"), ("a_in=y,b_in=b_out,x=a_out", "input")])
def test_pairs_leaving_no_per_frame_input_or_output_are_refused(tmp_path, capsys, pairs, left):
    model = _two_state_model(tmp_path / "m.onnx")
    assert main(["compile", model, "-o", str(tmp_path / "out"), "--stateful", pairs]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and f"no graph {left} is left" in err[0], err
    assert not (tmp_path / "out").exists()


def test_stateful_model_runs_frames(tmp_path, capsys):
    """The two-state model over 5 frames against onnxruntime with the state fed back (exit 0)."""
    model = _two_state_model(tmp_path / "m.onnx")
    np.save(tmp_path / "x.npy", np.random.default_rng(0).standard_normal((5, 1, 4)).astype(np.float32))
    assert main(["run", model, "--stateful", "a_in=a_out", "--stateful", "b_in=b_out", "--frames", "5",
                 "--input", str(tmp_path / "x.npy")]) == 0
    assert "5/5" in capsys.readouterr().out
