"""tinyfuse bench: instruction counts, flash and RAM figures, and the stack painting behind them."""
import json

import numpy as np
import pytest

from tinyfuse.cli import main as cli_main
from tinyfuse.driver import compile_model
from tinyfuse.harness.bench import BENCH_KEYS, bench_target
from tinyfuse.harness.qemu import build_target
from tests.conftest import shared_or_skip
from tests.target.conftest import require_tools, run_bare
from tests.builders import tiny_mlp


def test_bench_json_keys_and_sane_values(capsys):
    require_tools("cortex-m4")
    path = shared_or_skip("models", "onnx", "kws_ref_model_float32.onnx")
    assert cli_main(["bench", str(path), "--target", "cortex-m4", "--json"]) == 0
    f = json.loads(capsys.readouterr().out)
    assert set(BENCH_KEYS) <= set(f)
    assert f["macs"] == 2664768 and f["instructions"] > f["macs"]
    assert 1 < f["instructions_per_mac"] < 20     # the arm_fpu VFMA kernels (about 2.2 on cortex-m4)
    assert 0.99 * f["instructions"] < f["instructions_model_code"] < f["instructions"]   # expf: the only library call
    weights = f["weights_bytes"]
    assert weights <= f["flash_const"] < weights + 16 * 20          # + alignment padding of 20 arrays
    assert 1000 < f["flash_code"] < 20000 and f["flash_code"] == f["flash_code_model"] + f["flash_code_lib"]
    assert f["arena_bytes"] == 64000 and f["ram_data"] == 0 and 0 < f["ram_stack"] < 1024
    assert f["ram_total"] == f["arena_bytes"] + f["ram_data"] + f["ram_stack"]
    # per kernel: each conv kernel counted, and kernels + glue of <name>_run add up to the total
    counted = [k["instructions"] for k in f["kernels"]]
    assert all(n and n > 0 for n in counted) and len(counted) == 12
    assert sum(counted) + f["run_glue_instructions"] == f["instructions"]


def test_bench_is_exact_and_repeatable_and_soft_float_costs_more(tmp_path):
    require_tools("cortex-m0")
    require_tools("rv32imac")
    path = tiny_mlp(tmp_path / "tiny.onnx")
    x = np.random.default_rng(1).standard_normal((1, 16)).astype(np.float32)
    figures = {}
    for target in ("cortex-m0", "cortex-m7", "rv32imac"):
        require_tools(target)
        result = compile_model(path, target=target)
        build = build_target(result, target, tmp_path / target, [x])
        first, second = bench_target(build), bench_target(build)
        assert first["instructions"] == second["instructions"]
        figures[target] = first
    assert figures["cortex-m0"]["board"] == "microbit"
    # soft float (M0, RV32) against the M7's FPU: many instructions per MAC, and library code in flash
    assert figures["cortex-m0"]["instructions"] > 3 * figures["cortex-m7"]["instructions"]
    assert figures["rv32imac"]["instructions"] > 3 * figures["cortex-m7"]["instructions"]
    assert figures["cortex-m0"]["flash_code_lib"] > figures["cortex-m7"]["flash_code_lib"]
    for target in ("cortex-m0", "rv32imac"):   # most of a soft-float inference runs in libgcc / picolibc
        assert figures[target]["instructions_model_code"] < 0.5 * figures[target]["instructions"]


STACK_MAIN = r"""
#include <stdint.h>
#include "tinyfuse/bench.h"
#include "tinyfuse/semihost.h"
__attribute__((noinline)) static uint32_t deep(volatile uint8_t *p, int n)
{
  volatile uint8_t buf[1000];
  for (int i = 0; i < 1000; ++i) buf[i] = (uint8_t)(p[i % 4] + n);
  return buf[999] + buf[n];
}
int main(void)
{
  uint8_t seed[4] = {1, 2, 3, 4};
  uintptr_t top = tf_sp();
  uint32_t used;
  tf_stack_paint();
  (void)deep(seed, 7);
  used = tf_stack_used(top);
  tf_sh_putu(used);
  tf_sh_puts("\n");
  return used >= 1000 && used < 1200 ? 0 : 1;
}
"""


@pytest.mark.parametrize("target", ["cortex-m0", "cortex-m4", "rv32imac"])
def test_stack_painting_measures_a_known_frame(target, tmp_path):
    require_tools(target)
    proc = run_bare(target, STACK_MAIN, tmp_path)
    assert proc.returncode == 0, proc.stderr     # 1000 <= measured < 1200 for a 1000-byte local array


FAULT_MAIN = r"""
#include <stdint.h>
#if defined(__riscv)
#define NOWHERE 0x90000000u     /* past the 'virt' RAM */
#else
#define NOWHERE 0x7ffffff0u     /* no memory there on the MPS2/MPS3 boards */
#endif
int main(void) { return (int)*(volatile uint32_t *)NOWHERE; }
"""


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m33", "rv32imac"])
def test_a_guest_fault_exits_127_with_a_message(target, tmp_path):
    require_tools(target)
    proc = run_bare(target, FAULT_MAIN, tmp_path)
    assert proc.returncode == 127 and "FAULT" in proc.stderr
