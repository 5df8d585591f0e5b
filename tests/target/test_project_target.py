"""`tinyfuse project DIR --target cortex-m4 --model M` builds with CMake + arm-none-eabi-gcc and runs under
qemu as its README says; the outputs main.c prints equal TFLite Micro's on the same input (int8 KWS:
exactly; the float autoencoder: within 1e-4 of the largest output), and it prints its status and a cycle
count. The project holds the board files verbatim from runtime_c, each with its SPDX license header."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tinyfuse.cli import main
from tinyfuse.driver import compile_model
from tinyfuse.project.cmake import project_commands
from tinyfuse.targets import BOARDS_DIR, RUNTIME_DIR, get_target
from tests.builders.project_run import build_and_run, printed_outputs
from tests.conftest import shared_or_skip, tflm_run
from tests.target.conftest import require_tools


@pytest.mark.parametrize("model", ["kws_ref_model", "ad01_fp32"])
def test_cortex_m4_project_builds_and_runs_under_qemu(tmp_path, model):
    require_tools("cortex-m4", "cmake")
    path = shared_or_skip("models", "tflite", f"{model}.tflite")
    x = np.load(str(shared_or_skip("models", "onnx", f"{model}.io.npz")))["input"]
    np.save(tmp_path / "input.npy", x)
    proj = tmp_path / "proj"
    assert main(["project", str(proj), "--target", "cortex-m4", "--model", str(path), "--input", str(tmp_path / "input.npy")]) == 0
    name = model
    assert {p.relative_to(proj).as_posix() for p in proj.rglob("*") if p.is_file()} >= {
        "CMakeLists.txt", "cmake/arm-none-eabi.cmake", "main.c", "example_input.h", "README.md", "tinyfuse_project.json",
        f"model/{name}.h", f"model/{name}.c", f"model/{name}_weights.c", f"model/{name}.cmake",
        "board/startup_cm.c", "board/board.ld", "board/sections.ld", "board/tinyfuse/semihost.h"}
    for copied, source in (("board/startup_cm.c", BOARDS_DIR / "cortex_m/startup_cm.c"),
                           ("board/board.ld", BOARDS_DIR / "mps2/board.ld"),
                           ("board/sections.ld", BOARDS_DIR / "cortex_m/sections.ld"),
                           ("board/tinyfuse/semihost.h", RUNTIME_DIR / "include/tinyfuse/semihost.h")):
        assert (proj / copied).read_bytes() == source.read_bytes()
        assert (proj / copied).read_text().startswith("/* SPDX-License-Identifier: Apache-2.0\n")
    commands = project_commands(get_target("cortex-m4"), str(proj))
    assert all(c in (proj / "README.md").read_text() for c in project_commands(get_target("cortex-m4")))
    text = build_and_run(proj, commands)
    assert "FAULT" not in text
    assert re.search(rf"^status 0 \({name.upper()}_OK\)$", text, re.M), text
    assert re.search(r"^cycles \d+ \((DWT CYCCNT|SysTick)", text, re.M), text
    result = compile_model(str(path))
    got = printed_outputs(text, result.outputs)[0]
    want = tflm_run(path, [x])[0].reshape(got.shape)
    if got.dtype == np.int8:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * float(np.abs(want).max()))
