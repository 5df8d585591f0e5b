"""--input-rows on Cortex-M4 (arm_dsp kernels: the first conv sliced on output pixel pairs, VWW's fused
chain with DSP stages on its final rows): examples/rows/main.c under qemu pushes a frame a few rows at
a time; its output equals the whole-frame build's and TFLite Micro's."""
import numpy as np
import pytest

from tests.builders.input_rows import EXAMPLE, compile_both, outputs, pattern, vww_bytes
from tests.conftest import shared_or_skip, tflm_run
from tests.target.conftest import require_tools, run_bare


def _run(gen, tmp_path, *defines) -> np.ndarray:
    work = tmp_path / f"run_{gen.name}"
    work.mkdir()
    src = "".join(f"#define {d}\n" for d in defines) + EXAMPLE.read_text()
    proc = run_bare("cortex-m4", src, work, sources=(gen / "model.c", gen / "model_weights.c"), include=gen)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return outputs(proc.stderr)


@pytest.mark.parametrize("which, rows", [("kws_ref_model.tflite", 2), ("vww", 4)])
def test_rows_pushed_under_qemu(tmp_path, which, rows):
    require_tools("cortex-m4")
    model = vww_bytes() if which == "vww" else str(shared_or_skip("models", "tflite", which))
    rows_dir, frame_dir, pushed, whole = compile_both(model, "cortex-m4", tmp_path, rows)
    assert pushed.rows.unit == ("step" if which == "vww" else "pixel pair")   # a chain: its steps, warm-up included
    got = _run(rows_dir, tmp_path, f"ROWS_AT_A_TIME {rows}")
    ref_frame = _run(frame_dir, tmp_path, "WHOLE_FRAME 1")
    tflm = tflm_run(model, [pattern(whole.inputs[0].shape)])[0].reshape(-1)
    assert np.array_equal(got, ref_frame) and np.array_equal(got, tflm)
