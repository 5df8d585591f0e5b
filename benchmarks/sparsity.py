#!/usr/bin/env python3
"""Weight sparsity on Cortex-M4: the pruned MLPerf Tiny int8 models with the sparse kernels.

    python3 benchmarks/sparsity.py [--out DIR] [--json] [--target cortex-m4]

examples/prune_models.py prunes KWS (DS-CNN) and ResNet-8 int8 by magnitude to 50%, 75%, 90%
unstructured and 2:4 structured sparsity (.tflite and its QDQ .onnx twin, into DIR, default a
temporary folder). For the dense model and every pruned one, with the commands printed as they run:

- ``tinyfuse bench M.tflite --target T --json`` (default ``--sparse auto``) and the same with
  ``--sparse off``: executed instructions of one inference under qemu (exact counts, not cycles),
  flash (code + constants of the linked image); the sparse kernels the cost model chose;
- instructions per nonzero MAC: the auto run's instructions / the MACs whose weight is nonzero
  (every qnn.conv2d / qnn.matmul, padded taps counted as MACs are);
- ``tinyfuse run M.tflite --tflite-ref M.tflite --target T`` and ``tinyfuse run M.onnx --tflite-ref
  M.tflite --target T``: outputs equal to TFLite Micro on the same pruned model (exact).

Results on cortex-m4 (qemu instruction counts, tinyfuse 2026-12-02, the SMLAD pair layout of
lower/conv/sparse_dsp.py or the index lists, whichever the estimate prefers, for groups-1 convs and fully
connected layers; the dense costs refitted). The same models with the index lists only (the previous
kernel, dense costs fitted before today's dense kernels): KWS 5,748,138 / 5,037,482 / 3,625,691 /
5,812,032 instructions at 50% / 75% / 90% / 2:4 (slower than dense except at 90%), ResNet-8
22,343,494 / 21,733,953 / 19,159,849 / 22,343,702:

| model | sparsity | instructions | --sparse off | instr./nonzero MAC | sparse kernels | flash B | --sparse off | exact .tflite | .onnx |
|---|---|---|---|---|---|---|---|---|---|
| kws_ref_model | 0% | 4,871,745 | 4,871,745 | 1.85 | 0/12 | 73,404 | 73,404 | yes | yes |
| kws_ref_model | 50% | 4,872,034 | 4,872,034 | 3.67 | 0/12 | 73,404 | 73,404 | yes | yes |
| kws_ref_model | 75% | 3,617,576 | 4,872,362 | 5.45 | 5/12 | 64,558 | 73,404 | yes | yes |
| kws_ref_model | 90% | 2,854,276 | 4,872,316 | 10.73 | 6/12 | 47,674 | 73,404 | yes | yes |
| kws_ref_model | 2:4 | 4,236,588 | 4,872,428 | 3.15 | 4/12 | 74,524 | 73,404 | yes | yes |
| pretrainedResnet_quant | 0% | 22,343,193 | 22,343,193 | 1.81 | 0/9 | 118,096 | 118,096 | yes | yes |
| pretrainedResnet_quant | 50% | 22,062,904 | 22,343,494 | 3.53 | 2/9 | 199,544 | 118,096 | yes | yes |
| pretrainedResnet_quant | 75% | 20,476,562 | 22,343,201 | 6.55 | 3/9 | 141,728 | 118,096 | yes | yes |
| pretrainedResnet_quant | 90% | 18,447,574 | 22,343,074 | 14.73 | 5/9 | 92,936 | 118,096 | yes | yes |
| pretrainedResnet_quant | 2:4 | 21,334,488 | 22,343,702 | 3.41 | 2/9 | 171,512 | 118,096 | yes | yes |

ResNet-8 keeps two poly-fused conv chains dense (memory first: they lower the arena peak); with
``--disable-pass poly_fuse`` at 90% it runs 10,511,692 instructions (21,728,006 with --sparse off),
arena 32,768 B instead of 19,456 B.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = next((p / "shared" / "models" for p in (ROOT.parent, ROOT.parent.parent) if (p / "shared" / "models").is_dir()),
              ROOT.parent / "shared" / "models")      # ../shared, or ../../shared from a git worktree
MODELS = ("kws_ref_model", "pretrainedResnet_quant")
LEVELS = ("0", "50", "75", "90", "2:4")
TAG = {"50": "s50", "75": "s75", "90": "s90", "2:4": "s2of4"}


def tinyfuse(*args: str) -> str:
    """Run the CLI (``python -m tinyfuse ...``) under nice; print the command; return stdout."""
    cmd = ["nice", sys.executable, "-m", "tinyfuse", *args]
    print("$ python", " ".join(cmd[2:]), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def nonzero_macs(path: Path) -> int:
    """MACs whose weight is nonzero: over every int8 conv / matmul anchor of the compiled graph."""
    from tinyfuse.driver import compile_model
    from tinyfuse.ir import Call, Constant, Function, post_order
    from tinyfuse.ops.conv_geom import ConvGeom
    result = compile_model(str(path))
    total, stack = 0, [result.module.main.body]
    while stack:
        for n in post_order(stack.pop()):
            if isinstance(n, Call) and isinstance(n.op, Function):
                stack.append(n.op.body)
            elif isinstance(n, Call) and n.op in ("qnn.conv2d", "qnn.matmul") and isinstance(n.args[1], Constant):
                nnz = int(np.count_nonzero(n.args[1].value))
                if n.op == "qnn.conv2d":
                    g = ConvGeom.of_call(n)
                    total += g.N * g.P * nnz
                else:
                    total += int(np.prod(n.ty.shape)) // n.args[1].ty.shape[-1] * nnz
    return total


def exact(text: str) -> str:
    m = re.search(r"TFLite Micro \(.*\): (\d+)/(\d+) outputs equal", text)
    return "yes" if m and m.group(1) == m.group(2) else "NO"


def measure(model: str, level: str, out: Path, target: str) -> dict:
    if level == "0":
        tfl, onnx = SHARED / "tflite" / f"{model}.tflite", SHARED / "onnx" / f"{model}.onnx"
    else:
        tfl, onnx = out / f"{model}_{TAG[level]}.tflite", out / f"{model}_{TAG[level]}.onnx"
    auto = json.loads(tinyfuse("bench", str(tfl), "--target", target, "--json"))
    off = json.loads(tinyfuse("bench", str(tfl), "--target", target, "--json", "--sparse", "off"))
    nz = nonzero_macs(tfl)
    row = {"model": model, "sparsity": level, "instructions": auto["instructions"],
           "instructions_dense": off["instructions"], "macs": auto["macs"], "nonzero_macs": nz,
           "insns_per_nonzero_mac": auto["instructions"] / nz,
           "sparse_kernels": sum(k["variant"] == "sparse" for k in auto["kernels"]),
           "kernels": len(auto["kernels"]), "flash": auto["flash_image"], "flash_dense": off["flash_image"],
           "exact_tflite": exact(tinyfuse("run", str(tfl), "--tflite-ref", str(tfl), "--target", target))}
    row["exact_onnx"] = exact(tinyfuse("run", str(onnx), "--tflite-ref", str(tfl), "--target", target)) \
        if onnx.exists() else "-"
    return row


def table(rows: list[dict]) -> str:
    head = ("| model | sparsity | instructions | --sparse off | instr./nonzero MAC | sparse kernels | "
            "flash B | --sparse off | exact .tflite | .onnx |\n|---|---|---|---|---|---|---|---|---|---|")
    lines = [f"| {r['model']} | {r['sparsity'] + ('%' if r['sparsity'] != '2:4' else '')} | {r['instructions']:,} | "
             f"{r['instructions_dense']:,} | {r['insns_per_nonzero_mac']:.2f} | {r['sparse_kernels']}/{r['kernels']} | "
             f"{r['flash']:,} | {r['flash_dense']:,} | {r['exact_tflite']} | {r['exact_onnx']} |" for r in rows]
    return "\n".join([head, *lines])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="folder for the pruned models (default: a temporary one)")
    ap.add_argument("--target", default="cortex-m4")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        cmd = [sys.executable, str(ROOT / "examples" / "prune_models.py"), str(out), "--models", str(SHARED)]
        print("$ python examples/prune_models.py", out, "--models", SHARED, file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        rows = [measure(m, lv, out, args.target) for m in MODELS for lv in LEVELS]
    print(json.dumps(rows, indent=1) if args.json else table(rows))
    return 0 if all(r["exact_tflite"] == "yes" and r["exact_onnx"] in ("yes", "-") for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
