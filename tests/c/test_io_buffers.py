"""``--io-buffers caller``: model inputs and outputs in caller-owned buffers, outside the arena (issue 14).

A two-input, two-output float model whose first kernels would run in place over the inputs (Relu,
and Relu of the second input): compiled with caller-owned I/O, its arena holds only the
intermediates, it equals onnxruntime, and the host test main (harness/_io.c.j2) checks after the
run that no input byte changed (exit 6 otherwise), while the arena form of the same model does
choose an in-place kernel over an input.
"""
from __future__ import annotations

import pytest

from tinyfuse.cli import main as cli_main
from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tests.builders.io_models import two_io_feeds as _feeds, two_io_model
from tests.conftest import assert_close_to, compile_and_run, ort_run, require_programs


def _over_an_input(result) -> list[str]:
    """Names of the kernels the plan runs in place over a model input."""
    params = {id(p) for p in result.module.main.params}
    return [result.steps[i].kernel.name for i, o in result.memory.inplace.items()
            if id(result.steps[i].call.args[o.arg]) in params]


def test_caller_buffers_match_onnxruntime_and_leave_inputs_unwritten(tmp_path):
    require_programs("gcc")
    model, feeds = two_io_model(), _feeds()
    ref = ort_run(model, feeds)
    arena = compile_model(model)
    assert _over_an_input(arena), "the arena form should write over an input in place (the case under test)"
    outs, result = compile_and_run(model, [feeds["x"], feeds["z"]], tmp_path, io_buffers="caller")
    for y, r in zip(outs, ref):
        assert_close_to(y, r)
    assert not _over_an_input(result)
    assert result.arena_bytes < arena.arena_bytes
    assert result.io_bytes == (4 + 3 + 3 + 3) * 36 * 4
    steps = {s.out_base for s in result.steps} | {b for s in result.steps for b in s.in_bases}
    assert {"in0", "in1", "out0", "out1"} <= steps
    header = result.files["two_io.h"]
    assert ("int two_io_run(void *arena, const float *input0, const float *input1, float *output0, "
            "float *output1);") in header
    assert "two_io_input_at" not in header


def test_input_written_in_place_is_detected_by_the_harness(tmp_path):
    """The harness's const check itself: a generated _run patched to write its input fails the run."""
    require_programs("gcc")
    from tinyfuse.harness import build_host, run_host
    result = compile_model(two_io_model(), io_buffers="caller")
    c = result.files["two_io.c"]
    result.files["two_io.c"] = c.replace("  return 0;\n}", "  ((uint8_t *)(void *)input1)[5] ^= 1;\n  return 0;\n}", 1)
    with pytest.raises(TinyfuseError, match="exited with 6: the run wrote into caller-owned input 1"):
        run_host(build_host(result, tmp_path), result, list(_feeds().values()))


def test_stateful_model_refuses_caller_buffers():
    from tests.builders.tflm_state import variable_tensor_model
    with pytest.raises(TinyfuseError, match="--io-buffers caller: a stateful model"):
        compile_model(variable_tensor_model(), io_buffers="caller")


def test_cli_run_with_caller_buffers(tmp_path, capsys):
    require_programs("gcc")
    import onnx
    path = tmp_path / "two_io.onnx"
    onnx.save(two_io_model(), path)
    assert cli_main(["run", str(path), "--io-buffers", "caller"]) == 0
    assert "match" in capsys.readouterr().out
    assert cli_main(["compile", str(path), "--io-buffers", "heap", "-o", str(tmp_path / "o")]) == 2
