"""Generated code under qemu: the float reference models on every core, board selection, the CLI."""
import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tinyfuse.cli import main as cli_main
from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tinyfuse.harness.qemu import build_target, run_target
from tinyfuse.targets import NoBoardWarning
from tests.builders import tiny_mlp
from tests.conftest import assert_close_to, ort_run, shared_or_skip
from tests.target.conftest import require_tools

FLOAT_MODELS = ["kws_ref_model_float32", "ad01_fp32"]
TARGETS = ["cortex-m0", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55", "rv32imac"]


def _model_io(model: str):
    path = shared_or_skip("models", "onnx", f"{model}.onnx")
    x = np.load(path.with_suffix(".io.npz"))["input"]
    name = onnx.load(str(path), load_external_data=False).graph.input[0].name
    return path, x, ort_run(path, {name: x})[0]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("model", FLOAT_MODELS)
def test_float_model_on_target_matches_onnxruntime(model, target, tmp_path):
    require_tools(target)
    path, x, ref = _model_io(model)
    result = compile_model(path, target=target)
    build = build_target(result, target, tmp_path, [x])
    (y,) = run_target(build)
    assert_close_to(y, ref)   # |y - ref| <= 1e-4 x max|ref|; soft float on M0 and RV32
    # neither model fits the micro:bit (16 KB RAM / 256 KB flash): the M0 runs on the AN385
    assert build.board.name == {"cortex-m0": "mps2-an385"}.get(target, build.target.board.name)
    assert build.stats["status"] == 0 and 0 < build.stats["stack"] < 4096


def test_small_model_runs_on_the_microbit(tmp_path):
    require_tools("cortex-m0")
    path = tiny_mlp(tmp_path / "tiny.onnx")
    x = np.random.default_rng(0).standard_normal((1, 16)).astype(np.float32)
    result = compile_model(path, target="cortex-m0")
    build = build_target(result, "cortex-m0", tmp_path / "b", [x])
    assert build.board.name == "microbit"
    (y,) = run_target(build)
    assert_close_to(y, ort_run(path, {"x": x})[0])


def test_model_too_large_for_every_board_is_a_clear_error(tmp_path):
    require_tools("cortex-m55")
    n = 160_000  # 640 KB of arena even with relu in place; the AN547 DTCM has 512 KB
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "wide",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    # compile warns (a real board may have more RAM); the qemu build refuses before compiling or
    # linking anything: the planned arena alone exceeds every board's RAM
    with pytest.warns(NoBoardWarning, match="needs 640000 bytes of RAM .* largest cortex-m55 board"):
        result = compile_model(model, target="cortex-m55", name="wide")
    with pytest.raises(TinyfuseError, match="needs 640000 bytes of RAM .* largest cortex-m55 board"):
        build_target(result, "cortex-m55", tmp_path / "build", [np.zeros((1, n), np.float32)])
    assert not (tmp_path / "build").exists()


def test_cli_run_on_target_compares_with_onnxruntime(tmp_path, capsys):
    require_tools("rv32imac")
    path = tiny_mlp(tmp_path / "tiny.onnx")
    assert cli_main(["run", str(path), "--target", "rv32imac", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["outputs_match"] and summary["target"] == "rv32imac" and summary["board"] == "virt"
