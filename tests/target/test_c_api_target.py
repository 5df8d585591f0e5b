"""On Cortex-M4 under qemu, a misaligned or NULL arena (or state) given to the generated entry points
is a status, not a HardFault: the int8 KWS model's DSP kernels and the float autoencoder's FPU loads
fault on a misaligned arena (exception 3, exit 127 of the board start-up) when nothing checks it.
The main (tests/builders/c_api.py) prints each wrong status and exits with their number."""
from __future__ import annotations

import pytest

from tinyfuse.driver import compile_model
from tests.builders.c_api import status_main
from tests.conftest import shared_or_skip
from tests.target.conftest import require_tools, run_bare

MODELS = {"kws": ("tflite", "kws_ref_model.tflite"), "ad01": ("tflite", "ad01_fp32.tflite"),
          "nabu": ("real", "okay_nabu.tflite")}


@pytest.mark.parametrize("case", sorted(MODELS))
def test_null_and_misaligned_buffers_return_a_status_on_cortex_m4(tmp_path, case):
    require_tools("cortex-m4")
    result = compile_model(shared_or_skip("models", *MODELS[case]), name=case, target="cortex-m4")
    src = result.write(tmp_path / "src")
    proc = run_bare("cortex-m4", status_main(result, semihosting=True), tmp_path,
                    sources=tuple(src / f for f in sorted(result.files) if f.endswith(".c")), include=src)
    assert "FAULT" not in proc.stderr, proc.stderr
    assert proc.returncode == 0 and "check" not in proc.stderr, (proc.returncode, proc.stderr)
