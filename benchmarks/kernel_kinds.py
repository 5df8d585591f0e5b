#!/usr/bin/env python3
"""Instructions per MAC by kernel kind (first conv, depthwise, pointwise, conv, FC, add, fused chain,
other) of int8 models on qemu targets, default pipeline, one inference on a seeded random input.

    python3 benchmarks/kernel_kinds.py MODEL [MODEL ...] [--targets cortex-m4 cortex-m55] [--json]

Every figure is an exact count from tinyfuse.harness.bench (executed instructions under the qemu TCG
plugin), with the arena and code bytes of the linked image. A kernel's kind comes from its anchor: a
grouped qnn.conv2d is depthwise, the first conv kernel is "first conv", a 1x1 conv pointwise, qnn.matmul
FC, a group holding qnn.add add, a poly-fused chain "fused chain".
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path


def kinds(result) -> dict[str, str]:
    from tinyfuse.lower.kernel import split_group
    out, first = {}, True
    for k, s in zip(result.kernels, result.steps):
        if s.call.op.attrs.get("poly"):
            out[k.name] = "fused chain"
            continue
        anchor = split_group(s.call.op)[0]
        if anchor is not None and anchor.op == "qnn.conv2d":
            kh, kw = anchor.args[1].ty.shape[1:3]
            out[k.name] = ("depthwise" if anchor.attrs.get("groups", 1) > 1 else "first conv" if first
                           else "pointwise" if (kh, kw) == (1, 1) else "conv")
            first = False
        elif anchor is not None and anchor.op == "qnn.matmul":
            out[k.name] = "FC"
        else:
            out[k.name] = "add" if "qnn.add" in k.ops else "other"
    return out


def measure(model: str, target: str) -> dict:
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.bench import bench_target
    from tinyfuse.harness.inputs import load_inputs
    from tinyfuse.harness.qemu import build_target
    result = compile_model(model, target=target)
    with tempfile.TemporaryDirectory(prefix="tinyfuse_kinds_") as tmp:
        fig = bench_target(build_target(result, target, Path(tmp), load_inputs(None, result.inputs, 0)))
    kind = kinds(result)
    agg = defaultdict(lambda: [0, 0])
    for k in fig["kernels"]:
        a = agg[kind.get(k["name"], "other")]
        a[0] += k["macs"]
        a[1] += k["instructions"]
    return {"model": Path(model).name, "target": target, "instructions": fig["instructions"], "macs": fig["macs"],
            "per_mac": fig["instructions_per_mac"], "arena": fig["arena_bytes"], "code": fig["flash_code"],
            "kinds": {n: {"macs": m, "instructions": i} for n, (m, i) in sorted(agg.items())}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--targets", nargs="+", default=["cortex-m4"])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [measure(m, t) for m in args.models for t in args.targets]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        print(f"\n{r['model']} on {r['target']}: {r['instructions']:,} instructions, {r['per_mac']} /MAC, "
              f"arena {r['arena']} B, code {r['code']} B")
        print("| kind | MACs | instructions | /MAC |\n|---|---:|---:|---:|")
        for n, v in r["kinds"].items():
            per = f"{v['instructions'] / v['macs']:.2f}" if v["macs"] else "-"
            print(f"| {n} | {v['macs']:,} | {v['instructions']:,} | {per} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
