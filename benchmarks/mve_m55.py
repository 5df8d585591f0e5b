#!/usr/bin/env python3
"""int8 models on Cortex-M55 (Helium, mps3-an547 under qemu): instructions per MAC, arena bytes, and
instructions per kernel kind, with the default pipeline and with --disable-pass poly_fuse.

    PYTHONPATH=.imp python3 benchmarks/mve_m55.py [--json] [--models kws,resnet8,vww]

Models: KWS and ResNet-8 (MLPerf Tiny, ../shared/models/onnx, checked byte for byte against TFLite
Micro's output in their .io.npz) and a VWW-like MobileNetV1-0.25 at 96x96 (tests/builders/mobilenet_v1:
seeded weights, onnxruntime static QDQ int8; checked byte for byte against the host build of the
portable kernels). Every figure is an exact count from tinyfuse.harness.bench (executed instructions
of one inference, not cycles); a kernel's count runs from its entry to the next kernel's.
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
ONNX = ROOT.parent / "shared" / "models" / "onnx"

from int8_targets import _group_calls, kernel_kinds, table  # noqa: E402
from tinyfuse.driver import compile_model  # noqa: E402
from tinyfuse.harness import build_host, run_host  # noqa: E402
from tinyfuse.harness.bench import bench_target  # noqa: E402
from tinyfuse.harness.qemu import build_target, run_target  # noqa: E402

TARGET = "cortex-m55"
# MobileNetV1 alpha 0.25 widths (32 64 128 128 256 256 512x6 1024 1024, times 0.25)
VWW_WIDTHS = (8, 16, 32, 32, 64, 64, 128, 128, 128, 128, 128, 128, 256, 256)


def vww_model(tmp: Path):
    """(QDQ int8 MobileNetV1-0.25 96x96 with a 2-class head, one seeded input)."""
    from tests.builders.mobilenet_v1 import mobilenet_v1, quantize_static_qdq
    m = quantize_static_qdq(mobilenet_v1(96, VWW_WIDTHS, n_cls=2, seed=18, first_stride=2), tmp, "QInt8")
    x = np.random.default_rng(18).standard_normal((1, 3, 96, 96)).astype(np.float32)
    return m, x


def measure(name: str, tmp: Path, disabled=()) -> dict:
    if name == "vww":
        model, x = vww_model(tmp)
        want = None
    else:
        model = ONNX / {"kws": "kws_ref_model.onnx", "resnet8": "pretrainedResnet_quant.onnx"}[name]
        io = np.load(model.with_suffix(".io.npz"))
        x, want = io["input"], io["tflm"]
    result = compile_model(model, target=TARGET, disabled_passes=disabled)
    tag = f"{name}_{'_'.join(disabled) or 'default'}"
    build = build_target(result, TARGET, tmp / tag, [x])
    (y,) = run_target(build)
    if want is None:          # the oracle of the seeded model: the host build of the portable kernels
        host = compile_model(model, disabled_passes=disabled)
        want = run_host(build_host(host, tmp / f"{tag}_host"), host, [x])[0]
    f = bench_target(build)
    kinds = dict(zip((id(c) for c in _group_calls(result)), kernel_kinds(result)))
    for k, step in zip(f["kernels"], result.steps):
        k.update(kind=kinds.get(id(step.call), "?"), variant=step.kernel.variant)
    f.update(name=name, disabled=list(disabled), exact=bool(np.array_equal(y, want)))
    return f


def report(runs: list[dict]) -> str:
    rows = [[f["name"], "default" if not f["disabled"] else "no poly_fuse", f["instructions"], f["macs"],
             f"{f['instructions_per_mac']:.3f}", f["arena_bytes"], "yes" if f["exact"] else "NO"] for f in runs]
    out = [f"Table 1: int8 on {TARGET}, one inference, exact executed instructions",
           table(rows, ["model", "pipeline", "instructions", "MACs", "instr/MAC", "arena B", "exact"]), ""]
    rows = []
    for f in runs:
        if f["disabled"]:
            continue
        acc = defaultdict(lambda: [0, 0, 0, set()])
        for k in f["kernels"]:
            a = acc[k["kind"]]
            a[0] += k["instructions"] or 0
            a[1] += k["macs"]
            a[2] += 1
            a[3].add(k["variant"])
        for kind, (ins, macs, n, vs) in acc.items():
            rows.append([f["name"], kind, n, "+".join(sorted(vs)), macs, ins, f"{ins / macs:.2f}" if macs else "-"])
    out += [f"Table 2: per kernel kind, default pipeline, {TARGET}",
            table(rows, ["model", "kind", "kernels", "variants", "MACs", "instructions", "instr/MAC"])]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--models", default="kws,resnet8,vww")
    args = ap.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as d:
        for name in args.models.split(","):
            for disabled in ((), ("poly_fuse",)):
                runs.append(measure(name, Path(d), disabled))
    print(json.dumps(runs, indent=1, default=str) if args.json else report(runs))


if __name__ == "__main__":
    main()
