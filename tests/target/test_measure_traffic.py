"""bench --measure's plugin on a hand-written kernel: the bytes it loads and stores by region and its
instruction classes, counted by hand from the assembly below (the assembler is the encoding oracle)."""
from __future__ import annotations

import subprocess
from pathlib import Path

from tinyfuse.harness.bench import plugin_path
from tinyfuse.harness.measure import interval_sums, mix_of, parse_measure, plugin_arg, traffic_of
from tinyfuse.harness.cycles import CLASSES
from tinyfuse.harness.elf import _open
from tinyfuse.targets import BOARDS_DIR, RUNTIME_DIR, get_target
from tests.target.conftest import require_tools

# kern(src = a const table in flash, dst = a .bss buffer in SRAM); kern_end labels its last `bx lr`.
KERNEL_M4 = r"""
#include <stdint.h>
static const uint32_t table[4] = {0x11223344u, 7u, 0x55u, 0x3f800000u};
static uint32_t buf[4];
__attribute__((naked, noinline)) void kern(const uint32_t *src, uint32_t *dst)
{
  __asm__ volatile(
    "push {r4-r7}\n"             /* stm, 4 words: stack writes 16 B */
    "ldr r2, [r0]\n"             /* ld: flash 4 B */
    "ldr r3, [r0, #4]\n"         /* ldst_pipe: flash 4 B */
    "ldrb r4, [r0, #8]\n"        /* ldst_pipe: flash 1 B */
    "adds r2, r2, r3\n"          /* alu */
    "str r2, [r1]\n"             /* st: SRAM 4 B */
    "strb r4, [r1, #4]\n"        /* ldst_pipe: SRAM 1 B */
    "ldr r5, [r1]\n"             /* ldst_pipe: SRAM read 4 B */
    "smlad r2, r2, r3, r2\n"     /* dsp */
    "mul r2, r2, r3\n"           /* mul */
    "mla r2, r2, r3, r2\n"       /* mac */
    "smull r6, r7, r2, r3\n"     /* mull */
    "smlal r6, r7, r2, r3\n"     /* macl */
    "sdiv r2, r2, r3\n"          /* div */
    "sxtb16 r2, r2\n"            /* dsp */
    "qadd r2, r2, r3\n"          /* dsp */
    "ssat r2, #8, r2\n"          /* dsp */
    "vmov s0, r2\n"              /* fp */
    "vadd.f32 s0, s0, s0\n"      /* fp */
    "vfma.f32 s0, s0, s0\n"      /* fp_mac */
    "vdiv.f32 s0, s0, s0\n"      /* fp_div */
    "vsqrt.f32 s1, s0\n"         /* fp_div */
    "vldr s2, [r0, #12]\n"       /* fp_ldst, 1 word: flash 4 B */
    "vpush {s0-s3}\n"            /* fp_ldst, 4 words: stack writes 16 B */
    "vpop {s0-s3}\n"             /* fp_ldst, 4 words: stack reads 16 B */
    "movs r4, #3\n"              /* alu */
    "1: subs r4, #1\n"           /* alu x3 */
    "bne 1b\n"                   /* bcond x3, taken x2 */
    "pop {r4-r7}\n"              /* ldm, 4 words: stack reads 16 B */
    ".global kern_end\n"
    "kern_end: bx lr\n");
}
int main(void)
{
  kern(table, buf);
  return (int)(buf[1] & 0);
}
"""

EXPECTED_MIX = {"alu": 5, "ld": 1, "st": 1, "ldst_pipe": 4, "stm": 1, "stm_words": 4, "ldm": 1, "ldm_words": 4,
                "bcond": 3, "bcond_taken": 2, "mul": 1, "mac": 1, "mull": 1, "macl": 1, "div": 1, "dsp": 4,
                "fp": 2, "fp_mac": 1, "fp_div": 2, "fp_ldst": 3, "fp_ldst_words": 9}


def _addr(elf: Path, name: str) -> int:
    f, e = _open(elf)
    with f:
        for sym in e.get_section_by_name(".symtab").iter_symbols():
            if sym.name == name:
                return sym["st_value"] & ~1
    raise AssertionError(f"{name} not in {elf}")


def _measure(target: str, main_c: str, tmp: Path) -> tuple[dict, dict]:
    t = get_target(target)
    b = t.board
    (tmp / "main.c").write_text(main_c)
    elf = tmp / "k.elf"
    subprocess.run([t.cc, *t.cflags, "-O2", f"-I{RUNTIME_DIR / 'include'}", str(tmp / "main.c"),
                    str(RUNTIME_DIR / "src" / "tf_bench.c"), *(str(BOARDS_DIR / s) for s in b.sources), *t.ldflags,
                    *(f"-L{BOARDS_DIR / d}" for d in b.lib_dirs), "-T", str(BOARDS_DIR / b.linker_script),
                    "-Wl,--no-warn-rwx-segments", "-o", str(elf)], check=True)
    start, end = _addr(elf, "kern"), _addr(elf, "kern_end")
    out = tmp / "m.txt"
    arg = plugin_arg(plugin_path(), out, elf, [start, end], None, True)
    subprocess.run([*b.qemu, "-icount", "shift=0", "-plugin", arg, "-semihosting-config", "enable=on,target=native",
                    "-kernel", str(elf)], check=True, capture_output=True, timeout=60, cwd=tmp)
    columns, log = parse_measure(out.read_text())
    labels = {start: "<run>", end: "<end>"}
    _, total = interval_sums([(labels[a], row) for a, row in log])
    col = dict(zip(columns, total))
    return traffic_of(col), mix_of(col, CLASSES)


def test_traffic_and_classes_of_a_hand_counted_kernel(tmp_path):
    require_tools("cortex-m4")
    traffic, mix = _measure("cortex-m4", KERNEL_M4, tmp_path)
    assert {c: n for c, n in mix.items() if n} == EXPECTED_MIX
    assert traffic["flash_read_bytes"] == 4 + 4 + 1 + 4 and traffic["flash_write_bytes"] == 0
    assert traffic["stack_write_bytes"] == 16 + 16 and traffic["stack_read_bytes"] == 16 + 16
    assert traffic["sram_write_bytes"] == 4 + 1 + 32 and traffic["sram_read_bytes"] == 4 + 32
    assert traffic["other_read_bytes"] == traffic["other_write_bytes"] == 0


KERNEL_M55 = r"""
#include <stdint.h>
static const uint32_t table[4] = {1u, 2u, 3u, 4u};
static uint32_t buf[4];
__attribute__((naked, noinline)) void kern(const uint32_t *src, uint32_t *dst)
{
  __asm__ volatile(
    "push {r4, lr}\n"             /* stm, 2 words: stack writes 8 B */
    "vldrw.u32 q0, [r0]\n"        /* mve_ldst: flash 16 B */
    "vldrb.s8 q1, [r0]\n"         /* mve_ldst: flash 16 B */
    "vmladava.s8 r2, q0, q1\n"    /* mve */
    "vstrw.32 q0, [r1]\n"         /* mve_ldst: SRAM writes 16 B */
    "movs r3, #2\n"               /* alu */
    "dls lr, r3\n"                /* lob */
    "1: adds r2, #1\n"            /* alu x2 */
    "le lr, 1b\n"                 /* lob x2 */
    "pop.w {r4, lr}\n"            /* ldm, 2 words: stack reads 8 B */
    ".global kern_end\n"
    "kern_end: bx lr\n");
}
int main(void)
{
  kern(table, buf);
  return (int)(buf[1] & 0);
}
"""


def test_helium_traffic_and_classes(tmp_path):
    require_tools("cortex-m55")
    traffic, mix = _measure("cortex-m55", KERNEL_M55, tmp_path)
    assert {c: n for c, n in mix.items() if n} == {"stm": 1, "stm_words": 2, "mve_ldst": 3, "mve": 1, "alu": 3,
                                                   "lob": 3, "ldm": 1, "ldm_words": 2}
    assert traffic["flash_read_bytes"] == 32 and traffic["stack_write_bytes"] == 8 == traffic["stack_read_bytes"]
    assert traffic["sram_write_bytes"] == 16 + 8 and traffic["sram_read_bytes"] == 8


def test_bench_measure_and_report_roofline_use_the_traffic(tmp_path):
    """A float MLP on cortex-m4: every dense kernel reads each of its constants from flash once (no
    reuse of weights in a matrix-vector product; + literal-pool words: gcc reloads the 0.0f of the
    accumulator with a pc-relative VLDR per output element, + a few outside the loop), per-kernel figures add up
    to at most the whole call's, and the report's roofline points use the measured bytes."""
    import numpy as np
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.bench import bench_target
    from tinyfuse.harness.qemu import build_target
    from tinyfuse.report import report_data
    from tinyfuse.targets import get_target
    from tests.builders import tiny_mlp
    require_tools("cortex-m4")
    result = compile_model(tiny_mlp(tmp_path / "mlp.onnx"), target="cortex-m4")
    x = np.random.default_rng(0).standard_normal((1, 16)).astype(np.float32)
    f = bench_target(build_target(result, "cortex-m4", tmp_path / "b", [x]), measure=True)
    data = report_data(result, get_target("cortex-m4"), f)
    t = f["traffic"]
    for key in ("sram_read_bytes", "sram_write_bytes", "flash_read_bytes"):
        assert sum(k[key] for k in t["per_kernel"].values()) <= t[key]
    dense = [r for r in data["kernels"] if r["macs"]]
    assert len(dense) == 2
    outputs = {s.kernel.name: s.kernel.out.size for s in result.steps}
    for r in dense:
        got = t["per_kernel"][r["kernel"]]["flash_read_bytes"]
        assert r["flash"] <= got <= r["flash"] + 4 * outputs[r["kernel"]] + 16, (r["kernel"], r["flash"], got)
        assert r["measured_bytes"] >= got and r["measured_intensity"] == r["macs"] / r["measured_bytes"]
        assert r["cycles_estimate"] > 0
    assert f["cycles_estimate"]["total"] >= f["instructions"] / 2 and f["energy_estimate_uj"] > 0
