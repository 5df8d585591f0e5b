"""Issue 19 item 13: the generated C builds with ``-Wcast-align -Werror`` for Cortex-M (strict-alignment
rules for float and int32 pointers into the uint8_t arena and the scratch buffer).

Oracle: arm-none-eabi-gcc's own diagnostics. Float models (``(const float *)(a + 65536)`` in
``<name>_run``) and the int8 model whose poly-fused kernel addresses an int32 column in scratch.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.conftest import shared_or_skip

CPU = {"cortex-m4": ["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
       "cortex-m55": ["-mcpu=cortex-m55", "-mfloat-abi=hard"]}
MODELS = ["onnx/kws_ref_model_float32.onnx", "tflite/ad01_fp32.tflite", "onnx/pretrainedResnet_quant.onnx"]


@pytest.mark.parametrize("target", sorted(CPU))
@pytest.mark.parametrize("model", MODELS)
def test_sources_build_with_cast_align_werror(model, target, tmp_path):
    cc = shutil.which("arm-none-eabi-gcc")
    if cc is None:
        if os.environ.get("CI") == "true":
            pytest.fail("arm-none-eabi-gcc is missing in CI (apt install gcc-arm-none-eabi)")
        pytest.skip("arm-none-eabi-gcc not installed")
    from tinyfuse.driver import compile_model
    out = compile_model(str(shared_or_skip("models", *model.split("/"))), target=target).write(tmp_path / "out")
    sources = sorted(out.glob("*.c"))
    assert len(sources) == 2
    for src in sources:
        proc = subprocess.run([cc, *CPU[target], "-mthumb", "-std=c99", "-O2", "-Wall", "-Wextra", "-Wcast-align",
                               "-Werror", "-c", str(src), "-o", str(tmp_path / (src.stem + ".o"))],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
