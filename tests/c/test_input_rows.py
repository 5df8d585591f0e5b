"""--input-rows: examples/rows/main.c pushes the rows of a frame a few at a time (host gcc); its output
equals the whole-frame build's and TFLite Micro's, and the arena holds no input frame."""
import json
import subprocess

import numpy as np
import pytest

from tests.builders.input_rows import EXAMPLE, ROOT, compile_both, outputs, pattern, vww_bytes
from tests.conftest import require_programs, shared_or_skip, tflm_run


def _run(gen, tmp_path, *defines) -> np.ndarray:
    exe = tmp_path / f"{gen.name}.exe"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", *defines, f"-I{gen}",
                    f"-I{ROOT / 'runtime_c' / 'include'}", str(EXAMPLE), str(gen / "model.c"),
                    str(gen / "model_weights.c"), "-lm", "-o", str(exe)], check=True)
    return outputs(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)


def _model(which):
    if which == "vww":
        return vww_bytes()
    return str(shared_or_skip("models", "tflite", which))


@pytest.mark.parametrize("which, rows", [("kws_ref_model.tflite", 1), ("pretrainedResnet_quant.tflite", 5), ("vww", 3)])
def test_rows_pushed_equal_whole_frame_and_tflm(tmp_path, which, rows):
    require_programs("gcc")
    model = _model(which)
    rows_dir, frame_dir, pushed, whole = compile_both(model, "host", tmp_path, rows)
    got = _run(rows_dir, tmp_path, f"-DROWS_AT_A_TIME={rows}")
    ref_frame = _run(frame_dir, tmp_path, "-DWHOLE_FRAME")
    x = pattern(whole.inputs[0].shape)
    tflm = tflm_run(model if isinstance(model, bytes) else model, [x])[0].reshape(-1)
    assert np.array_equal(got, ref_frame) and np.array_equal(got, tflm)
    meta = json.loads((rows_dir / "metadata.json").read_text())["input_rows"]
    assert meta["rows_per_call"] == rows and meta["rows"] == x.shape[1] and meta["row_bytes"] == x.shape[2] * x.shape[3]
    # the input frame is not in the arena: at most the ring's rows of it
    assert meta["ring_bytes"] < whole.inputs[0].nbytes
    assert not any(b.name == "t0" and b.size == whole.inputs[0].nbytes for b in pushed.buffers)


MISUSE = r"""
#include <stdio.h>
#include <string.h>
#include "model.h"
static unsigned char arena[MODEL_ARENA_SIZE] __attribute__((aligned(16)));
static signed char rows[(MODEL_ROWS_PER_CALL + 1) * MODEL_ROW_BYTES] __attribute__((aligned(16)));
static signed char out[MODEL_OUTPUT0_BYTES] __attribute__((aligned(16)));
int main(void)
{
  int r, last = 0;
  printf("%d", model_push_rows(arena, rows, MODEL_ROWS_PER_CALL + 1, out));    /* too many a call */
  printf(" %d", model_push_rows(arena, rows, -1, out));
  printf(" %d", model_push_rows(arena + 1, rows, 1, out));
  for (r = 0; r < MODEL_INPUT_ROWS - 1; ++r)
    last |= model_push_rows(arena, rows, 1, out);
  printf(" %d", last);                                                          /* 0 until the frame ends */
  printf(" %d", model_push_rows(arena, rows, 2, out));                          /* past the frame's end */
  printf(" %d", model_push_rows(arena, rows, 1, out));                          /* the last row */
  printf(" %d\n", model_push_rows(arena, rows, 0, out));                        /* a new frame: nothing yet */
  return 0;
}
"""


def test_push_rows_misuse(tmp_path):
    require_programs("gcc")
    from tinyfuse.driver import compile_model
    compile_model(str(shared_or_skip("models", "tflite", "kws_ref_model.tflite")), name="model", input_rows=1).write(tmp_path / "g")
    (tmp_path / "m.c").write_text(MISUSE)
    exe = tmp_path / "m.exe"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Werror", f"-I{tmp_path / 'g'}", str(tmp_path / "m.c"),
                    str(tmp_path / "g" / "model.c"), str(tmp_path / "g" / "model_weights.c"), "-lm", "-o", str(exe)], check=True)
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    assert got == ["-5", "-5", "-2", "0", "-5", "1", "0"]
