#!/usr/bin/env python3
"""One-run comparison: tinyfuse's instructions/MAC and estimated cycles/MAC beside the recorded
TFLite Micro + CMSIS-NN figures and the published X-CUBE-AI cycles/MAC (benchmarks/data/published.json,
with where each figure came from).

    python3 benchmarks/compare_published.py [--json] [--targets cortex-m4,cortex-m7,cortex-m55]

Every tinyfuse figure is from one run per model and target (tinyfuse.harness.bench, measure=True):
executed instructions counted exactly by the qemu TCG plugin (seeded random int8 input), and
cycles ESTIMATED from the executed instruction mix with the core's TRM per-class timings
(tinyfuse/harness/cycles.py): an estimate, not a measurement; X-CUBE-AI's figures are measured cycles
on silicon. Table 1 per model and target, table 2 per kernel kind (summed over the models).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
ONNX = ROOT.parent / "shared" / "models" / "onnx"
PUBLISHED = json.loads((ROOT / "benchmarks" / "data" / "published.json").read_text())

from int8_targets import _group_calls, kernel_kinds, table  # noqa: E402
from tinyfuse.driver import compile_model  # noqa: E402
from tinyfuse.harness.bench import bench_target  # noqa: E402
from tinyfuse.harness.inputs import load_inputs  # noqa: E402
from tinyfuse.harness.qemu import build_target, missing_tools  # noqa: E402

MODELS = ["kws_ref_model", "pretrainedResnet_quant", "mobilenetv2_035_96_qdq", "ad01_int8"]
VWW = {"mobilenetv2_035_96_qdq": ("mobilenet_v1_025_vww", "vww_like", "vww")}


def measure_model(model: str, target: str, tmp: Path, disabled=()) -> dict:
    """bench_target(measure=True)'s figures of ``model`` (default kernels) on ``target``, with each
    kernel's kind (conv KxK, pointwise, depthwise, fully connected, poly-fused chain, other)."""
    result = compile_model(ONNX / f"{model}.onnx", target=target, disabled_passes=list(disabled))
    tag = f"{model}_{target}_{'_'.join(disabled) or 'default'}"
    build = build_target(result, target, tmp / tag, load_inputs(None, result.inputs, 0))
    f = bench_target(build, measure=True)
    kinds = dict(zip((id(c) for c in _group_calls(result)), kernel_kinds(result)))
    for k, step in zip(f["kernels"], result.steps):
        k["kind"] = kinds.get(id(step.call), "?")
    return f


def _published(model: str, target: str) -> tuple[str, str, str]:
    """(TFLM+CMSIS-NN instructions, its instructions/MAC, X-CUBE-AI cycles/MAC) as text, "-" when absent."""
    t, x = PUBLISHED["tflm_cmsis_nn"], PUBLISHED["x_cube_ai"]["cortex-m4_cycles_per_mac"]
    m4, m55, xk = VWW.get(model, (model, model, model))
    insns = t["cortex-m4_instructions"].get(m4) if target == "cortex-m4" else None
    ipm = t["cortex-m55_instructions_per_mac"].get(m55) if target == "cortex-m55" else None
    xc = x.get(xk) if target == "cortex-m4" else None
    return (f"{insns / 1e6:.2f} M" if insns else "-", f"{ipm:.2f}" if ipm else "-", f"{xc:.2f}" if xc else "-")


def model_table(runs: dict) -> str:
    rows = []
    for (model, target), f in runs.items():
        cyc = f["cycles_estimate"]["total"]
        tflm, tflm_ipm, xcube = _published(model, target)
        if tflm != "-" and model not in VWW:
            tflm_ipm = f"{PUBLISHED['tflm_cmsis_nn']['cortex-m4_instructions'][model] / f['macs']:.2f}"
        rows.append([model, target, f["macs"], f["instructions"], f"{f['instructions_per_mac']:.2f}",
                     f"{cyc / f['macs']:.2f}", tflm, tflm_ipm, xcube])
    return table(rows, ["model", "target", "MACs", "instructions", "instr/MAC", "est. cycles/MAC*",
                        "TFLM+CMSIS-NN instr", "TFLM instr/MAC", "X-CUBE-AI cycles/MAC (M4)"])


def kind_table(runs: dict) -> str:
    acc: dict = defaultdict(lambda: [0, 0, 0, 0])
    for (_, target), f in runs.items():
        per_cyc = f["cycles_estimate"]["per_kernel"]
        for k in f["kernels"]:
            a = acc[(k["kind"], target)]
            a[0] += 1
            a[1] += k["macs"]
            a[2] += k["instructions"] or 0
            a[3] += per_cyc.get(k["name"], 0)
    rows = [[kind, target, n, macs, insns, f"{insns / macs:.2f}" if macs else "-", f"{cyc / macs:.2f}" if macs else "-"]
            for (kind, target), (n, macs, insns, cyc) in sorted(acc.items())]
    return table(rows, ["kernel kind", "target", "kernels", "MACs", "instructions", "instr/MAC", "est. cycles/MAC*"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--targets", default="cortex-m4,cortex-m7,cortex-m55")
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args(argv)
    targets = [t for t in args.targets.split(",") if not missing_tools(t)]
    runs = {}
    with tempfile.TemporaryDirectory(prefix="tinyfuse_published_") as tmp:
        for model in args.models.split(","):
            for target in targets:
                runs[(model, target)] = measure_model(model, target, Path(tmp))
    if args.json:
        print(json.dumps({f"{m}|{t}": f for (m, t), f in runs.items()}))
        return 0
    print("Table 1: tinyfuse (this run) beside TFLite Micro + CMSIS-NN (recorded) and X-CUBE-AI (published);"
          " sources: benchmarks/data/published.json")
    print(model_table(runs))
    print("\nTable 2: per kernel kind (summed over the models)")
    print(kind_table(runs))
    print("\n* estimated cycles: executed instruction mix x per-class TRM timings (tinyfuse/harness/cycles.py),"
          " 0-wait-state memories; not a measurement. TFLM VWW row: MobileNetV1-0.25 (MLPerf Tiny), a different"
          " model from mobilenetv2_035_96_qdq.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
