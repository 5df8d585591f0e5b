"""`tinyfuse project DIR --target host --model M`: a plain CMake project (main.c + the model) that builds
with the host compiler and runs as its README says; the printed outputs equal the oracles: TFLite Micro
for the int8 KWS model and for okay_nabu's first frame (from its reset state), onnxruntime for a two-input,
two-output float model compiled with caller-owned I/O buffers."""
from __future__ import annotations

import re

import numpy as np
import onnx
import pytest

from tinyfuse.cli import main
from tinyfuse.driver import compile_model
from tinyfuse.project.cmake import project_commands
from tinyfuse.targets import get_target
from tests.builders.io_models import two_io_feeds, two_io_model
from tests.builders.project_run import build_and_run, printed_outputs
from tests.conftest import assert_close_to, ort_run, require_programs, shared_or_skip, tflm_run


def _project(tmp_path, model, inputs: dict, *options) -> tuple[str, list]:
    np.savez(tmp_path / "input.npz", **inputs)
    proj = tmp_path / "proj"
    assert main(["project", str(proj), "--model", str(model), "--input", str(tmp_path / "input.npz"), *options]) == 0
    assert not (proj / "board").exists() and not (proj / "cmake").exists()
    text = build_and_run(proj, project_commands(get_target("host"), str(proj)))
    assert re.search(r"^status 0 \(\w+_OK\)$", text, re.M) and re.search(r"^time_us \d+", text, re.M), text
    result = compile_model(str(model), **({"io_buffers": "caller"} if "caller" in options else {}))
    return text, printed_outputs(text, result.outputs)


@pytest.mark.parametrize("model", [("tflite", "kws_ref_model.tflite"), ("real", "okay_nabu.tflite")])
def test_host_project_equals_tflm(tmp_path, model):
    require_programs("cmake", "gcc")
    path = shared_or_skip("models", *model)
    import tflite_micro
    it = tflite_micro.runtime.Interpreter.from_file(str(path), arena_size=512 * 1024)
    shape = it.get_input_details(0)["shape"]
    x = np.random.default_rng(3).integers(-128, 128, size=shape).astype(np.int8)
    _, outs = _project(tmp_path, path, {"input": x})
    np.testing.assert_array_equal(outs[0], tflm_run(path, [x])[0].reshape(outs[0].shape))


def test_host_project_with_caller_buffers_equals_onnxruntime(tmp_path):
    require_programs("cmake", "gcc")
    onnx.save(two_io_model(), tmp_path / "two_io.onnx")
    feeds = two_io_feeds()
    _, outs = _project(tmp_path, tmp_path / "two_io.onnx", feeds, "--io-buffers", "caller")
    for got, want in zip(outs, ort_run(two_io_model(), feeds)):
        assert_close_to(got, want)
