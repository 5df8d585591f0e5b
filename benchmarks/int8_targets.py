#!/usr/bin/env python3
"""int8 MLPerf Tiny models on the qemu targets: what the SIMD kernel variants buy, and what fits where.

    python3 benchmarks/int8_targets.py [--json] [--quick]

Three tables, every figure an exact count from tinyfuse.harness.bench (executed instructions of one
inference under the qemu TCG plugin, not cycles; flash and RAM from the linked ELF):
  1. KWS and ResNet-8 on cortex-m4: instructions/MAC with the SIMD kernels (arm_dsp, --kernels auto)
     and the portable ones (--kernels ref); default pipeline, --disable-pass poly_fuse (every conv its
     own kernel, so the SIMD ones run) and --disable-pass fuse_ops. Every run's output is checked
     byte for byte against TFLite Micro (the models' .io.npz 'tflm').
  2. The runs without poly_fuse per kernel kind (conv KxK, pointwise 1x1, depthwise, fully connected,
     other).
  3. Flash and RAM of each int8 model (KWS, ResNet-8, AD) on each target with its default kernels,
     and whether it fits a BBC micro:bit v1 (Cortex-M0, 256 KB flash / 16 KB RAM).
--quick: table 3 only for cortex-m0, cortex-m4 and cortex-m55.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ONNX = ROOT.parent / "shared" / "models" / "onnx"

from tinyfuse.driver import compile_model  # noqa: E402
from tinyfuse.harness.bench import bench_target  # noqa: E402
from tinyfuse.harness.qemu import build_target, missing_tools, run_target  # noqa: E402
from tinyfuse.ir import Call, Function, post_order  # noqa: E402
from tinyfuse.lower.kernel import split_group  # noqa: E402
from tinyfuse.passes.pipeline import PASS_NAMES  # noqa: E402
from tinyfuse.targets import TARGETS  # noqa: E402

SIMD_MODELS = ["kws_ref_model", "pretrainedResnet_quant"]
ALL_MODELS = ["kws_ref_model", "pretrainedResnet_quant", "ad01_int8"]
MICROBIT_FLASH, MICROBIT_RAM = 256 * 1024, 16 * 1024


def kernel_kinds(result) -> list[str]:
    """The kind of each kernel: conv KxK, pointwise, depthwise, fully connected, or its first op."""
    kinds = []
    for n in post_order(result.module.main.body):
        if not (isinstance(n, Call) and isinstance(n.op, Function)):
            continue
        if n.op.attrs.get("poly"):
            kinds.append("poly-fused conv chain")
            continue
        anchor, ops = split_group(n.op)
        op = anchor.op if anchor is not None else ops[0].op
        if op in ("qnn.conv2d", "nn.conv2d"):
            w = anchor.args[1].ty.shape
            kh, kw = w[1:3] if anchor.attrs["kernel_layout"] == "OHWI" else w[2:]
            kinds.append("depthwise" if anchor.attrs["groups"] > 1 else "pointwise 1x1" if (kh, kw) == (1, 1)
                         else f"conv {kh}x{kw}")
        elif op in ("qnn.matmul", "nn.matmul"):
            kinds.append("fully connected")
        else:
            kinds.append(f"other ({op})")
    return kinds


def measure(model: str, target: str, tmp: Path, kernels: str = "auto", disabled=()) -> dict:
    path = ONNX / f"{model}.onnx"
    io = np.load(path.with_suffix(".io.npz"))
    result = compile_model(path, target=target, kernels=kernels, disabled_passes=disabled)
    tag = f"{model}_{target}_{kernels}_{'_'.join(disabled) or 'default'}"
    build = build_target(result, target, tmp / tag, [io["input"]])
    (y,) = run_target(build)
    f = bench_target(build)
    f.update(kernel_choice=kernels, disabled=list(disabled), tflm_exact=bool(np.array_equal(y, io["tflm"])),
             variants=sorted({k.variant for k in result.kernels}))
    kinds = dict(zip((id(c) for c in _group_calls(result)), kernel_kinds(result)))
    for k, step in zip(f["kernels"], result.steps):       # steps run in the memory plan's order
        k.update(kind=kinds.get(id(step.call), "?"), variant=step.kernel.variant)
    return f


def table(rows: list[list], header: list[str]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    def fmt(r):
        return "  ".join(str(x).rjust(w) if i else str(x).ljust(w) for i, (x, w) in enumerate(zip(r, widths)))
    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows])


def _group_calls(result) -> list:
    return [n for n in post_order(result.module.main.body) if isinstance(n, Call) and isinstance(n.op, Function)]


def simd_tables(runs: dict, pipelines: list) -> str:
    rows = []
    for (model, kernels, pipeline), f in runs.items():
        rows.append([model, "SIMD (arm_dsp)" if kernels == "auto" else "portable (ref)", pipeline, f["instructions"],
                     f["macs"], f"{f['instructions_per_mac']:.2f}", f["flash_code"], f["arena_bytes"],
                     "yes" if f["tflm_exact"] else "NO"])
    out = ["Table 1: int8 on cortex-m4 (mps2-an386), one inference, exact executed instructions",
           table(rows, ["model", "kernels", "pipeline", "instructions", "MACs", "instr/MAC", "flash code", "arena",
                        "== TFLM"])]
    per_kind = pipelines[1][0] if len(pipelines) > 2 else pipelines[0][0]
    rows = []
    for model in SIMD_MODELS:
        per = {}
        for kernels in ("auto", "ref"):
            acc = defaultdict(lambda: [0, 0, 0])
            for k in runs[(model, kernels, per_kind)]["kernels"]:
                a = acc[k["kind"]]
                a[0] += k["instructions"] or 0
                a[1] += k["macs"]
                a[2] += 1
            per[kernels] = acc
        for kind in per["auto"]:
            s, r = per["auto"][kind], per["ref"][kind]
            ipm = lambda a: f"{a[0] / a[1]:.2f}" if a[1] else "-"  # noqa: E731
            speed = f"{r[0] / s[0]:.1f}x" if s[0] else "-"
            rows.append([model, kind, s[2], s[1], s[0], ipm(s), r[0], ipm(r), speed])
    out += ["", f"Table 2: per kernel kind, pipeline '{per_kind}', cortex-m4 (a kernel's count runs from its "
            "entry to the next kernel's)",
            table(rows, ["model", "kind", "kernels", "MACs", "SIMD instr", "SIMD i/MAC", "ref instr", "ref i/MAC",
                         "speed-up"])]
    return "\n".join(out)


def size_table(sizes: list[dict]) -> str:
    rows = []
    for f in sizes:
        flash = f["flash_code"] + f["flash_const"]
        fits = flash <= MICROBIT_FLASH and f["ram_total"] <= MICROBIT_RAM
        kinds = sorted({"ref-inplace" if v.startswith("inplace_") else v for v in f["variants"]})
        rows.append([f["model"], f["target"], f["board"], "+".join(kinds), f["flash_code"], f["flash_const"],
                     flash, f["arena_bytes"], f["ram_stack"], f["ram_total"], f"{f['instructions_per_mac']:.2f}",
                     "yes" if fits else "no", "yes" if f["tflm_exact"] else "NO"])
    return "\n".join([
        "Table 3: flash and RAM per int8 model and target (default kernels); micro:bit v1 = 256 KB flash, 16 KB RAM",
        table(rows, ["model", "target", "board", "kernels", "flash code", "flash const", "flash total", "arena",
                     "stack", "RAM total", "instr/MAC", "fits micro:bit", "== TFLM"]),
        "flash code = the model's functions + the library code they pull in; flash const = weights, biases, "
        "requantization tables; RAM total = arena (activations, input, output, kernel scratch) + stack of one "
        "inference. The board column is the smallest emulated board the image links for (cortex-m0 tries the "
        "micro:bit first). kernels: the variants in the image (ref-inplace: portable kernels the memory plan "
        "runs in place; fused_chain: poly_fuse's line-buffered conv chains)."])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="one JSON object per measurement instead of tables")
    ap.add_argument("--quick", action="store_true", help="table 3 for cortex-m0, m4 and m55 only")
    args = ap.parse_args(argv)
    if not (ONNX / "kws_ref_model.onnx").exists():
        print(f"# skipped: {ONNX} not found", file=sys.stderr)
        return 0
    targets = ["cortex-m0", "cortex-m4", "cortex-m55"] if args.quick else [t for t in TARGETS if t != "host"]
    targets = [t for t in targets if not missing_tools(t)]
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="tinyfuse_int8_") as tmp:
        tmp = Path(tmp)
        runs = {}
        pipelines = [("default", ())] + [(f"no {p}", (p,)) for p in ("poly_fuse", "fuse_ops") if p in PASS_NAMES]
        if not missing_tools("cortex-m4"):
            for model in SIMD_MODELS:
                for kernels in ("auto", "ref"):
                    for pipeline, disabled in pipelines:
                        f = measure(model, "cortex-m4", tmp, kernels, disabled)
                        runs[(model, kernels, pipeline)] = f
                        if args.json:
                            print(json.dumps(f), flush=True)
            if not args.json:
                print(simd_tables(runs, pipelines), end="\n\n", flush=True)
        sizes = []
        for model in ALL_MODELS:
            for target in targets:
                f = runs.get((model, "auto", "default")) if target == "cortex-m4" else None
                f = f or measure(model, target, tmp)
                sizes.append(f)
                if args.json:
                    print(json.dumps(f), flush=True)
        if not args.json:
            print(size_table(sizes))
            print(f"# {time.time() - start:.0f} s; instructions are executed instructions (qemu TCG plugin, exact), "
                  "not cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
