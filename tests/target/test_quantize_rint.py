"""tf_quantize_rint (runtime_c/include/tinyfuse/quant.h), the rounding of every float -> int8/uint8
quantize (ONNX QuantizeLinear / TFLite QUANTIZE: round half to even, then saturate), equals numpy's
rint clipped to [-1024, 1024] (NaN: -1024, the lowest code) on the ties, the clamp edges, infinities
and random values: on the host, a Cortex-M4F (FPv4, no VRINT), a Cortex-M33 and soft-float RV32."""
import subprocess

import numpy as np
import pytest

from tinyfuse.targets import RUNTIME_DIR
from tests.conftest import require_programs
from tests.target.conftest import require_tools, run_bare

EDGES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, 127.5, -128.5, 1023.5, -1023.5, 1024.49, 1024.5, -1024.5,
         4194303.5, 8388607.0, 1e9, -1e9, 1e-30, -0.0, 3.4e38]


def _values() -> np.ndarray:
    rng = np.random.default_rng(7)
    rnd = rng.normal(0, 300, 200).astype(np.float32)
    halves = (rng.integers(-1100, 1100, 60) + 0.5).astype(np.float32)
    return np.concatenate([np.array(EDGES, np.float32), rnd, halves])


def _main_c(vals: np.ndarray) -> str:
    want = np.clip(np.rint(vals.astype(np.float64)), -1024, 1024).astype(int)      # float64: no float rounding
    rows = ",\n".join(f"  {{{float(v)!r}f, {w}}}" for v, w in zip(vals, want))
    return f"""#include <math.h>
#include <stdint.h>
#include "tinyfuse/quant.h"
static const struct {{ float v; int32_t want; }} cases[] = {{
{rows}
}};
int main(void)
{{
  volatile float nan = NAN, inf = INFINITY;
  int bad = 0;
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    bad += tf_quantize_rint(cases[i].v) != cases[i].want;
  bad += tf_quantize_rint(nan) != -1024;
  bad += tf_quantize_rint(inf) != 1024;
  bad += tf_quantize_rint(-inf) != -1024;
  return bad;
}}
"""


@pytest.mark.parametrize("target", ["host", "cortex-m4", "cortex-m33", "rv32imac"])
def test_quantize_rint_is_rint_clipped(target, tmp_path):
    src = _main_c(_values())
    if target == "host":
        require_programs("gcc")
        (tmp_path / "main.c").write_text(src)
        exe = tmp_path / "main"
        subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Werror", f"-I{RUNTIME_DIR / 'include'}",
                        str(tmp_path / "main.c"), "-o", str(exe), "-lm"], check=True)
        proc = subprocess.run([str(exe)], capture_output=True, text=True)
    else:
        require_tools(target)
        proc = run_bare(target, src, tmp_path)
    assert proc.returncode == 0, f"{proc.returncode} values rounded differently from numpy rint ({proc.stderr})"
