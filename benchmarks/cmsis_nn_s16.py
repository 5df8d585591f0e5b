#!/usr/bin/env python3
"""Instructions per MAC of CMSIS-NN's 16x8 kernels (arm_convolve_wrapper_s16, arm_depthwise_conv_wrapper_s16,
arm_fully_connected_s16: the kernels TFLM + CMSIS-NN calls for int16 CONV_2D / DEPTHWISE_CONV_2D /
FULLY_CONNECTED) on the layers of the 16x8 DS-CNN (benchmarks/int16_kernels.py), for the figures beside
tinyfuse's in benchmarks/data/int16_kernels.md.

    PYTHONPATH=.shim python3 benchmarks/cmsis_nn_s16.py --cmsis-nn DIR [--targets cortex-m4,cortex-m55] [--out FILE]

DIR: a checkout of github.com/ARM-software/CMSIS-NN (not part of tinyfuse; nothing of it is copied). Its
Source/*.c are compiled with the target's arm-none-eabi-gcc flags and tinyfuse's -O2 harness flags into
one bare-metal image per target (tinyfuse's start-up code and linker script of the target's qemu board)
whose main calls each layer once between two calls of a marker function; the qemu TCG plugin
(runtime_c/tools/tc_insncount.c) counts the instructions executed between the marks (the kernel call,
its argument set-up and the marker's return: a few instructions more than the kernel). Only the
kernel calls: TFLM's interpreter around them (Invoke dispatch, per-op Eval glue) is not counted, so these
figures are a lower bound of TFLM + CMSIS-NN's. Weights, inputs and quantization are seeded random values
of the layer's shape and type (the instruction counts of these kernels do not depend on the values).
Prints and writes (``--out``) JSON {target: {layer family: instructions per MAC}}.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tinyfuse.harness.bench import plugin_path  # noqa: E402
from tinyfuse.harness.qemu import BOARDS_DIR, RUNTIME_DIR, missing_tools  # noqa: E402
from tinyfuse.targets import get_target  # noqa: E402

# (family, MACs, C call) of the DS-CNN's layers: conv 10x4 /2 (49x10x1 -> 25x5x64, SAME: pads 4 top,
# 1 left), depthwise 3x3 and pointwise 64 -> 64 at 25x5 (one of the four blocks), FC 64 -> 12
LAYERS = [
    ("conv 10x4", 25 * 5 * 64 * 40, "arm_convolve_wrapper_s16(&ctx, &conv, &pc, &d_in, in0, &d_f0, w0, &d_b, &bias0, &d_mid, mid)"),
    ("depthwise", 25 * 5 * 64 * 9, "arm_depthwise_conv_wrapper_s16(&ctx, &dw, &pc, &d_mid, mid, &d_f1, w1, &d_b, b64, &d_mid, mid2)"),
    ("pointwise 1x1", 25 * 5 * 64 * 64, "arm_convolve_wrapper_s16(&ctx, &pw, &pc, &d_mid, mid2, &d_f2, w2, &d_b, &bias2, &d_mid, mid)"),
    ("fully connected", 64 * 12, "arm_fully_connected_s16(&ctx, &fc, &pt, &d_fin, mid, &d_f3, w3, &d_b, b64, &d_fout, fout)"),
]

HARNESS = r"""
#include <stdint.h>
#include <string.h>
#include "arm_nnfunctions.h"
static int16_t in0[49 * 10], mid[25 * 5 * 64], mid2[25 * 5 * 64], fout[12];
static int8_t w0[64 * 10 * 4], w1[9 * 64], w2[64 * 64], w3[12 * 64];
static int64_t b64[64];
static int32_t mult[64], shift[64];
static int8_t scratch[32768];
static uint32_t seed = 1u;
static uint32_t next(void) { seed = seed * 1664525u + 1013904223u; return seed >> 8; }
__attribute__((noinline)) void tf_cmsis_mark(void) { __asm volatile("" ::: "memory"); }
int main(void) {
  for (unsigned i = 0; i < sizeof in0 / 2; ++i) in0[i] = (int16_t)next();
  for (unsigned i = 0; i < sizeof w0; ++i) w0[i] = (int8_t)next();
  for (unsigned i = 0; i < sizeof w1; ++i) w1[i] = (int8_t)next();
  for (unsigned i = 0; i < sizeof w2; ++i) w2[i] = (int8_t)next();
  for (unsigned i = 0; i < sizeof w3; ++i) w3[i] = (int8_t)next();
  for (int i = 0; i < 64; ++i) { b64[i] = (int32_t)next() >> 8; mult[i] = 0x40000000 + (int32_t)(next() & 0xFFFFFF); shift[i] = -12; }
  const cmsis_nn_context ctx = {scratch, sizeof scratch};
  const cmsis_nn_conv_params conv = {0, 0, {2, 2}, {1, 4}, {1, 1}, {-32768, 32767}};
  const cmsis_nn_conv_params pw = {0, 0, {1, 1}, {0, 0}, {1, 1}, {-32768, 32767}};
  const cmsis_nn_dw_conv_params dw = {0, 0, 1, {1, 1}, {1, 1}, {1, 1}, {-32768, 32767}};
  const cmsis_nn_fc_params fc = {0, 0, 0, {-32768, 32767}};
  const cmsis_nn_per_channel_quant_params pc = {mult, shift};
  const cmsis_nn_per_tensor_quant_params pt = {0x40000000, -10};
  const cmsis_nn_dims d_in = {1, 49, 10, 1}, d_mid = {1, 25, 5, 64}, d_f0 = {64, 10, 4, 1}, d_f1 = {1, 3, 3, 64},
                      d_f2 = {64, 1, 1, 64}, d_f3 = {64, 1, 1, 12}, d_b = {1, 1, 1, 64}, d_fin = {1, 1, 1, 64},
                      d_fout = {1, 1, 1, 12};
  const cmsis_nn_bias_data bias0 = {b64, false}, bias2 = {b64, false};
  if (arm_convolve_wrapper_s16_get_buffer_size(&conv, &d_in, &d_f0, &d_mid) > (int32_t)sizeof scratch ||
      arm_depthwise_conv_wrapper_s16_get_buffer_size(&dw, &d_mid, &d_f1, &d_mid) > (int32_t)sizeof scratch)
    return 3;
  int bad = 0;
  tf_cmsis_mark();
%CALLS%
  return bad;
}
"""


def build_and_count(src: Path, target: str, work: Path) -> list[int]:
    """Compile CMSIS-NN and the harness for ``target``, run it under the plugin: the instruction counts
    at each marker call, in order."""
    t = get_target(target)
    board = t.boards[0]
    calls = "\n".join(f"  bad |= {c} != ARM_CMSIS_NN_SUCCESS;\n  tf_cmsis_mark();" for _, _, c in LAYERS)
    main = work / "main.c"
    main.write_text(HARNESS.replace("%CALLS%", calls))
    flags = [*t.cflags, "-std=gnu11", "-O2", "-ffunction-sections", "-fdata-sections", f"-I{src / 'Include'}",
             f"-I{RUNTIME_DIR / 'include'}"]
    units = [u for u in sorted((src / "Source").rglob("*.c")) if not u.stem.endswith(("_f16", "_f32"))]
    units += [main] + [BOARDS_DIR / s for s in board.sources]
    objs = []
    for i, u in enumerate(units):
        o = work / f"u{i}.o"
        proc = subprocess.run([t.cc, *flags, "-c", str(u), "-o", str(o)], capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(f"{t.cc} failed on {u}:\n{proc.stderr[:2000]}")
        objs.append(o)
    elf = work / "cmsis.elf"
    subprocess.run([t.cc, *t.cflags, *map(str, objs), *t.ldflags, "-Wl,--gc-sections",
                    *(f"-L{BOARDS_DIR / d}" for d in board.lib_dirs), "-T", str(BOARDS_DIR / board.linker_script),
                    "-Wl,--no-warn-rwx-segments", "-lm", "-o", str(elf)], check=True, capture_output=True)
    nm = subprocess.run([t.cc.replace("gcc", "nm"), str(elf)], check=True, capture_output=True, text=True).stdout
    addr = next(int(line.split()[0], 16) for line in nm.splitlines() if line.endswith(" tf_cmsis_mark"))
    out = work / "insns.txt"
    cmd = [*board.qemu, "-icount", "shift=0", "-plugin", f"{plugin_path()},out={out},mark={addr:#x}",
           "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=work)
    if proc.returncode:
        raise SystemExit(f"{target}: the CMSIS-NN harness exited with {proc.returncode} {proc.stderr[:500]}")
    return [int(line.split()[2]) for line in out.read_text().splitlines() if line.startswith("mark")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cmsis-nn", required=True, help="a CMSIS-NN checkout (Include/, Source/)")
    ap.add_argument("--targets", default="cortex-m4,cortex-m55")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    res = {}
    for target in args.targets.split(","):
        if missing_tools(target):
            continue
        with tempfile.TemporaryDirectory(prefix="tinyfuse_cmsis_") as tmp:
            counts = build_and_count(Path(args.cmsis_nn), target, Path(tmp))
        res[target] = {fam: round((b - a) / macs, 3) for (fam, macs, _), a, b in zip(LAYERS, counts, counts[1:])}
    text = json.dumps(res, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
