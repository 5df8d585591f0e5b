#!/usr/bin/env python3
"""Issue 18 figures for the pointwise / first-conv / fully-connected DSP kernels and the float FPU kernels.

    PYTHONPATH=.imp .venv/bin/python benchmarks/kernels18.py [--json]

Two tables, every figure an exact count from tinyfuse.harness.bench (executed instructions of one
inference under the qemu TCG plugin, not cycles):
  1. The VWW-like int8 MobileNetV1-0.25 96x96 (examples/build_vww.py, built into a temporary
     directory), KWS and ResNet-8 (.tflite) on cortex-m4 and cortex-m55, default pipeline: instructions
     per MAC per kernel kind, arena, and whether the output equals TFLite Micro's byte for byte.
  2. The float models (kws_ref_model_float32, pretrainedResnet .tflite) on cortex-m4 and cortex-m7:
     the portable kernels (--kernels ref) against the default ones (arm_fpu), instructions per MAC,
     and the largest difference from the float oracle (the .io.npz 'tflite_ref': LiteRT's reference kernels)
     relative to its largest magnitude.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
TFLITE = ROOT.parent / "shared" / "models" / "tflite"

from int8_targets import _group_calls, kernel_kinds, table  # noqa: E402
from tinyfuse.driver import compile_model  # noqa: E402
from tinyfuse.harness.bench import bench_target  # noqa: E402
from tinyfuse.harness.qemu import build_target, missing_tools, run_target  # noqa: E402


def measure(path: Path, io: dict, target: str, tmp: Path, kernels: str = "auto") -> dict:
    """One build and run of ``path`` on ``target``: bench figures, per-kernel kinds, the output check."""
    result = compile_model(path, target=target, kernels=kernels)
    build = build_target(result, target, tmp / f"{path.stem}_{target}_{kernels}", [io["input"]])
    (y,) = run_target(build)
    f = bench_target(build)
    want = io["tflm"]
    if y.dtype == np.int8:
        f["check"] = "== TFLM" if np.array_equal(y, want) else "DIFFERS"
    else:
        err = float(np.max(np.abs(y.astype(np.float64) - want))) / max(float(np.max(np.abs(want))), 1e-12)
        f["check"] = f"rel {err:.1e}"
    kinds = dict(zip((id(c) for c in _group_calls(result)), kernel_kinds(result)))
    for k, step in zip(f["kernels"], result.steps):
        k.update(kind=kinds.get(id(step.call), "?"), variant=step.kernel.variant)
    return f


def per_kind(f: dict) -> dict[str, str]:
    acc = defaultdict(lambda: [0, 0])
    for k in f["kernels"]:
        acc[k["kind"]][0] += k["instructions"] or 0
        acc[k["kind"]][1] += k["macs"]
    return {kind: f"{a[0] / a[1]:.2f}" if a[1] else str(a[0]) for kind, a in acc.items()}


def int8_table(tmp: Path, emit) -> str:
    sys.path.insert(0, str(ROOT / "examples"))
    from build_vww import main as build_vww
    build_vww([str(tmp / "vww")])
    models = [(tmp / "vww" / "vww_96_int8.tflite", dict(np.load(tmp / "vww" / "vww_96_int8.io.npz")))]
    for name in ("kws_ref_model", "pretrainedResnet_quant"):
        io = np.load(ROOT.parent / "shared" / "models" / "onnx" / f"{name}.io.npz")
        models.append((TFLITE / f"{name}.tflite", {"input": io["input"], "tflm": io["tflm"]}))
    rows, kinds = [], ["conv 3x3", "conv 10x4", "pointwise 1x1", "depthwise", "poly-fused conv chain",
                       "fully connected"]
    for path, io in models:
        for target in ("cortex-m4", "cortex-m55"):
            if missing_tools(target):
                continue
            f = measure(path, io, target, tmp)
            emit(f)
            k = per_kind(f)
            rows.append([path.stem, target, f["instructions"], f["macs"], f"{f['instructions_per_mac']:.3f}",
                         *(k.get(x, "-") for x in kinds), f["arena_bytes"], f["flash_code"], f["check"]])
    return "\n".join(["Table 1: int8, default pipeline and kernels; per kind: instructions/MAC",
                      table(rows, ["model", "target", "instructions", "MACs", "instr/MAC", *kinds, "arena",
                                   "flash code", "output"])])


def float_table(tmp: Path, emit) -> str:
    rows = []
    for name in ("kws_ref_model_float32", "pretrainedResnet"):
        io = np.load(ROOT.parent / "shared" / "models" / "onnx" / f"{name}.io.npz")
        oracle = {"input": io["input"], "tflm": io["tflite_ref"]}      # LiteRT reference kernels on the .tflite
        for target in ("cortex-m4", "cortex-m7"):
            if missing_tools(target):
                continue
            ref, fpu = (measure(TFLITE / f"{name}.tflite", oracle, target, tmp, k) for k in ("ref", "auto"))
            emit(ref)
            emit(fpu)
            rows.append([name, target, ref["instructions"], f"{ref['instructions_per_mac']:.2f}", fpu["instructions"],
                         f"{fpu['instructions_per_mac']:.2f}", f"{ref['instructions'] / fpu['instructions']:.1f}x",
                         ref["arena_bytes"], fpu["arena_bytes"], fpu["flash_code"], ref["check"], fpu["check"]])
    return "\n".join(["Table 2: float32, portable kernels (ref) vs the default arm_fpu kernels",
                      table(rows, ["model", "target", "ref instr", "ref i/MAC", "fpu instr", "fpu i/MAC", "speed-up",
                                   "ref arena", "fpu arena", "fpu flash code", "ref vs oracle", "fpu vs oracle"])])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="also print one JSON object per measurement")
    args = ap.parse_args(argv)
    if not TFLITE.exists():
        print(f"# skipped: {TFLITE} not found", file=sys.stderr)
        return 0

    def emit(f):
        if args.json:
            print(json.dumps(f), flush=True)
    with tempfile.TemporaryDirectory(prefix="tinyfuse_k18_") as tmp:
        print(int8_table(Path(tmp), emit), end="\n\n", flush=True)
        print(float_table(Path(tmp), emit), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
