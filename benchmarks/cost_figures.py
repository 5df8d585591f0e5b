#!/usr/bin/env python3
"""The analytical cost model's figures (compiler/cost/analytical.py) against measurement: instructions
per MAC by (geometric family, implementation) from exact per-kernel qemu counts, beside the value the
model uses (``IPM``), and the dense SIMD line ``DENSE_SIMD_IPM`` (a + b * outputs / MACs) refitted.

    python benchmarks/cost_figures.py [--targets cortex-m4 cortex-m55] [--out benchmarks/data/cost_figures.md]

Models: the int8 MLPerf Tiny KWS (DS-CNN) and ResNet-8 and MobileNetV2-0.35 (96x96) from ../shared,
compiled with --sparse off, one inference on a seeded random input. A kernel's measured figure is
(instructions - EPILOGUE_INSNS x outputs) / MACs, the form the model prices; fused chains are left out
(their stages are priced one by one, with recompute and row overhead).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MODELS = ["kws_ref_model.onnx", "pretrainedResnet_quant.onnx", "mobilenetv2_035_96_qdq.onnx"]


def measure(model: Path, target: str) -> list[dict]:
    """One row per conv-family kernel: family, implementation, MACs, outputs, instructions."""
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.bench import bench_target
    from tinyfuse.harness.inputs import load_inputs
    from tinyfuse.harness.qemu import build_target
    from tinyfuse.ops.conv_geom import conv_group
    result = compile_model(str(model), target=target, sparse="off")
    with tempfile.TemporaryDirectory(prefix="tinyfuse_cost_") as tmp:
        fig = bench_target(build_target(result, target, Path(tmp), load_inputs(None, result.inputs, 0)))
    counts = {k["name"]: k["instructions"] for k in fig["kernels"]}
    rows = []
    for step in result.steps:
        if step.call.op.attrs.get("poly") or not step.kernel.macs:
            continue
        g = conv_group(step.call.op)
        if g is None:
            continue
        rows.append({"model": model.stem, "family": g[2].family, "kind": step.kernel.kind, "macs": step.kernel.macs,
                     "outputs": step.call.op.body.ty.size, "instructions": counts[step.kernel.name]})
    return rows


def table(rows: list[dict], target: str) -> list[str]:
    from tinyfuse.cost.analytical import EPILOGUE_INSNS, IPM
    by = defaultdict(list)
    for r in rows:
        by[(r["family"], r["kind"])].append(r)
    out = [f"### {target}", "", "| family | implementation | kernels | MACs | measured instr/MAC (range) | IPM (model) |",
           "|---|---|---:|---:|---|---:|"]
    for (fam, kind), rs in sorted(by.items()):
        per = [(r["instructions"] - EPILOGUE_INSNS * r["outputs"]) / r["macs"] for r in rs]
        macs = sum(r["macs"] for r in rs)
        mean = (sum(r["instructions"] for r in rs) - EPILOGUE_INSNS * sum(r["outputs"] for r in rs)) / macs
        model = IPM.get((fam, kind))
        out.append(f"| {fam} | {kind} | {len(rs)} | {macs:,} | {mean:.2f} ({min(per):.2f} .. {max(per):.2f}) | "
                   f"{'-' if model is None else model} |")
    dense = [r for r in rows if r["family"] in ("conv", "pw") and ("arm_dsp" in r["kind"] or "arm_mve" in r["kind"])]
    if len(dense) >= 2:
        a = np.array([[1.0, r["outputs"] / r["macs"]] for r in dense])
        y = np.array([r["instructions"] / r["macs"] for r in dense])
        (c0, c1), *_ = np.linalg.lstsq(a, y, rcond=None)
        out += ["", f"dense SIMD conv/pointwise kernels ({len(dense)}): instructions/MAC = {c0:.2f} + {c1:.1f} x "
                f"outputs/MACs (least squares; the model's DENSE_SIMD_IPM is for cortex-m4)"]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", nargs="+", default=["cortex-m4", "cortex-m55"])
    ap.add_argument("--out", default=None, help="write the markdown there too")
    a = ap.parse_args(argv)
    shared = ROOT.parent / "shared" / "models" / "onnx"
    lines = ["# Cost-model figures against qemu counts", "", f"`python benchmarks/cost_figures.py --targets "
             f"{' '.join(a.targets)}`; models: {', '.join(MODELS)} (--sparse off).", ""]
    for t in a.targets:
        rows = [r for m in MODELS for r in measure(shared / m, t)]
        lines += table(rows, t) + [""]
    text = "\n".join(lines)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
