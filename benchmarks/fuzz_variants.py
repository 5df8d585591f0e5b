"""Differential fuzzing per kernel variant against TFLite Micro (tests/fuzz/tflm_twin.py) and, per SIMD
target, against onnxruntime (tests/fuzz/generator.py): reruns the campaigns of
benchmarks/data/fuzz_variants.md and prints one row each: variant, target, models drawn, shape classes
covered (with the variant used), exact (int8 byte for byte, float within the rounding bound; TFLM-wrap
models included: exact outside the channels where TFLM's int32 shift overflows), refused, mismatches,
models whose kernels ran the variant, seconds.

    python benchmarks/fuzz_variants.py                      # every campaign (hours on 2 cores)
    python benchmarks/fuzz_variants.py --only arm_dsp,qemu-m4 --scale 0.05   # a few, smaller
    python benchmarks/fuzz_variants.py --list               # the campaigns and their CLI commands

The campaigns run one after the other in this process; ``--log-dir`` keeps each campaign's per-op and
per-shape-class tables (the CLI's output) and its failures.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# name: (kind, variant or target, ops group, count, first seed)
CAMPAIGNS = {
    "ref": ("twin", "ref", "simd", 2000, 0),             # the arm_mve draws on portable kernels: parity
    "arm_dsp": ("twin", "arm_dsp", "dsp", 2000, 0),
    "arm_mve": ("twin", "arm_mve", "simd", 2000, 0),
    "arm_fpu": ("twin", "arm_fpu", "float", 1000, 0),
    "ref-float": ("twin", "ref", "float", 1000, 0),      # the arm_fpu draws on portable kernels: parity
    "qemu-m4": ("qemu", "cortex-m4", "", 500, 0),
    "qemu-m55": ("qemu", "cortex-m55", "", 500, 0),
    "arm_mve16": ("twin", "arm_mve", "dsp16", 600, 0),     # the 16x8 draws on the Helium s16 kernels
    "qemu-m55-16": ("qemu", "cortex-m55", "dsp16", 70, 0),
    "int16": ("twin", "ref", "int16", 600, 0),             # every 16x8 draw (the 16x8 LSTM too), portable kernels
    "graph-m4": ("graph", "cortex-m4", "", 500, 1000),
    "graph-m55": ("graph", "cortex-m55", "", 500, 1000),
}
TARGET = {"ref": "host", "arm_dsp": "cortex-m4", "arm_mve": "cortex-m55", "arm_fpu": "cortex-m4"}


def command(name: str, count: int) -> str:
    kind, what, ops, _, seed = CAMPAIGNS[name]
    if kind == "graph":
        return f"python -m tests.fuzz.generator --count {count} --seed {seed} --target {what} --no-minimise"
    how = (f"--qemu {what}" if kind == "qemu" else f"--variant {what}") + (f" --ops {ops}" if ops else "")
    return f"python -m tests.fuzz.tflm_twin {how} --count {count} --seed {seed}"


def run_twin(name: str, count: int, log_dir: Path | None) -> dict:
    from tests.fuzz import tflm_twin
    kind, what, ops, _, seed = CAMPAIGNS[name]
    qemu = what if kind == "qemu" else None
    variant = "ref" if qemu else what
    t0 = time.time()
    r = tflm_twin.campaign(list(range(seed, seed + count)), tflm_twin.op_list(ops, variant, qemu), progress=False,
                           variant=variant, qemu=qemu, log=str(log_dir / f"{name}_failures.jsonl") if log_dir else None)
    seconds = time.time() - t0
    rows = r["table"].values()
    total = {k: sum(row[k] for row in rows) for k in ("exact", "tflm wraps", "tflm refused", "tf refused", "failure", "used")}
    used_classes = sorted(c for c, v in r["classes"].items() if v["used"])
    if log_dir:
        used = "used " + "/".join(r["asked"])
        (log_dir / f"{name}.md").write_text(f"{command(name, count)}\n\n{tflm_twin.format_table(r['table'], used)}\n\n"
                                            f"{tflm_twin.format_classes(r['classes'], used)}\n\nvariants: {r['variants']}; "
                                            f"largest float |diff| / bound {r['float_ratio']:.3g}\n")
    return dict(variant=variant if not qemu else "/".join(r["asked"]), target=qemu or TARGET[variant],
                build="qemu" if qemu else "host" if variant == "ref" else "host (simd_host.h)", models=count,
                classes=f"{len(used_classes)}/{len(r['classes'])}", exact=total["exact"] + total["tflm wraps"],
                refused=total["tflm refused"] + total["tf refused"], mismatches=total["failure"], used=total["used"],
                seconds=seconds, failures=[{k: f[k] for k in ("seed", "op", "detail")} for f in r["failures"]])


def run_graph(name: str, count: int, log_dir: Path | None) -> dict:
    from tests.fuzz import generator
    _, target, _, _, seed = CAMPAIGNS[name]
    log = str(log_dir / f"{name}_failures.jsonl") if log_dir else None
    r = generator.campaign(list(range(seed, seed + count)), minimise_failures=False, progress=False, log=log,
                           target=target)
    if log_dir:
        (log_dir / f"{name}.md").write_text(f"{command(name, count)}\n\n{json.dumps(r['counts'])}\nSIMD: {r['simd']}\n"
                                            f"int8 LSB vs onnxruntime: {r['lsb_hist']}\n")
    simd = "/".join(f"{v} {n}" for v, n in r["simd"].items() if v != "any")
    return dict(variant=simd or "-", target=target, build="host (simd_host.h), vs onnxruntime", models=count,
                classes="-", exact=r["counts"].get("ok", 0), refused=r["counts"].get("rejected", 0),
                mismatches=len(r["failures"]), used=r["simd"].get("any", 0), seconds=r["seconds"],
                failures=[{k: f[k] for k in ("seed", "status", "detail")} for f in r["failures"]])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help=f"comma-separated campaigns: {', '.join(CAMPAIGNS)}")
    ap.add_argument("--scale", type=float, default=1.0, help="run this fraction of each campaign's models")
    ap.add_argument("--log-dir", default="build/fuzz", help="per-campaign tables and failures ('' for none)")
    ap.add_argument("--list", action="store_true", help="print the campaigns' commands and stop")
    a = ap.parse_args(argv)
    names = [n for n in a.only.split(",") if n] or list(CAMPAIGNS)
    unknown = set(names) - set(CAMPAIGNS)
    if unknown:
        ap.error(f"unknown campaigns {sorted(unknown)}; known: {', '.join(CAMPAIGNS)}")
    if a.list:
        for n in names:
            print(f"{n:10} {command(n, CAMPAIGNS[n][3])}")
        return 0
    log_dir = Path(a.log_dir) if a.log_dir else None
    if log_dir:
        log_dir.mkdir(parents=True, exist_ok=True)
    import warnings
    warnings.filterwarnings("ignore")
    print("| campaign | variant | target | build | models | shape classes used | exact | refused | mismatches | "
          "used variant | seconds |")
    print("|" + "---|" * 11)
    bad = 0
    for n in names:
        count = max(1, round(CAMPAIGNS[n][3] * a.scale))
        row = (run_graph if CAMPAIGNS[n][0] == "graph" else run_twin)(n, count, log_dir)
        print(f"| {n} | {row['variant']} | {row['target']} | {row['build']} | {row['models']} | {row['classes']} | "
              f"{row['exact']} | {row['refused']} | {row['mismatches']} | {row['used']} | {row['seconds']:.0f} |",
              flush=True)
        for f in row["failures"]:
            print(f"    FAIL {json.dumps(f)[:300]}", flush=True)
        bad += row["mismatches"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
