"""Two models compiled into one ``-o DIR`` (codegen/output.py) build into one firmware: the host gcc
compiles and links kws.c and vww.c from the shared directory (their shared tinyfuse_quant.h once),
with a main that runs both; each model's int8 output equals onnxruntime's within 1 LSB (unit tests of
the directory rules: tests/unit/test_output_dir_models.py)."""
from __future__ import annotations

import subprocess

import numpy as np

from tinyfuse.driver import compile_model
from tests.builders.outdir_models import OUTDIR_MODELS, outdir_model
from tests.conftest import ort_run, require_programs

MAIN = """#include <stdio.h>
#include "kws.h"
#include "vww.h"
static unsigned char a1[KWS_ARENA_SIZE] __attribute__((aligned(16)));
static unsigned char a2[VWW_ARENA_SIZE] __attribute__((aligned(16)));
static void fill(signed char *x, int n) { for (int i = 0; i < n; i++) x[i] = (signed char)((i * 37) % 256 - 128); }
static void show(const signed char *y, int n) { for (int i = 0; i < n; i++) printf("%d ", y[i]); printf("\\n"); }
int main(void) {
    fill((signed char *)kws_input(a1), KWS_INPUT_SIZE);
    fill((signed char *)vww_input(a2), VWW_INPUT_SIZE);
    if (kws_run(a1) != 0 || vww_run(a2) != 0) return 1;
    show((const signed char *)kws_output(a1), KWS_OUTPUT_SIZE);
    show((const signed char *)vww_output(a2), VWW_OUTPUT_SIZE);
    return 0;
}
"""


def test_two_models_in_one_dir_link_into_one_program(tmp_path):
    require_programs("gcc")
    d = tmp_path / "src_model"
    for n in OUTDIR_MODELS:
        compile_model(outdir_model(n), target="host", name=n).write(d)
    (tmp_path / "main.c").write_text(MAIN)
    exe = tmp_path / "app"
    sources = [str(d / f"{n}{s}.c") for n in OUTDIR_MODELS for s in ("", "_weights")]
    subprocess.run(["gcc", "-std=c99", "-O1", "-Wall", "-Werror", f"-I{d}", str(tmp_path / "main.c"), *sources,
                    "-lm", "-o", str(exe)], check=True)
    lines = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    for n, line in zip(OUTDIR_MODELS, lines, strict=True):
        model = outdir_model(n)
        shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        x = ((np.arange(np.prod(shape)) * 37) % 256 - 128).astype(np.int8).reshape(shape)
        want = ort_run(model, {model.graph.input[0].name: x})[0].ravel().astype(int)
        got = np.array(line.split(), int)
        assert got.shape == want.shape and np.abs(got - want).max() <= 1, (n, got, want)
