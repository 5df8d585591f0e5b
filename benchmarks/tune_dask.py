"""Dask throughput of `tinyfuse tune`: candidates measured per second with a LocalCluster of 1 and 2
workers, with an existing cluster (`--scheduler`, e.g. `dask scheduler` + `dask worker` processes
started by hand), and a resumed run that skips the candidates already in the records.

    python3 benchmarks/tune_dask.py [--model kws_ref_model.onnx] [--trials 8] [--out /tmp/tune_dask]
                                    [--scheduler tcp://127.0.0.1:8786]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tinyfuse.tune import tune  # noqa: E402

MODELS = ROOT.parent / "shared" / "models" / "onnx"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="kws_ref_model.onnx")
    ap.add_argument("--target", default="cortex-m4")
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--out", default="/tmp/tune_dask")
    ap.add_argument("--scheduler", default=None)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = MODELS / args.model
    runs = [("LocalCluster, 1 worker", dict(workers=1), "w1"), ("LocalCluster, 2 workers", dict(workers=2), "w2")]
    if args.scheduler:
        runs.append((f"--scheduler {args.scheduler}", dict(scheduler=args.scheduler), "sched"))
    rows = []
    for label, kw, tag in runs:
        rec = out / f"{tag}.jsonl"
        rec.unlink(missing_ok=True)
        s = tune(path, args.target, trials=args.trials, records_path=rec, progress=False, **kw)
        rows.append((label, s))
    s = tune(path, args.target, trials=args.trials + 2, records_path=out / "w2.jsonl", workers=2, progress=False)
    rows.append(("resumed (2 workers, records of the 2-worker run, trials + 2)", s))
    print(f"| run ({args.model}, {args.target}) | workers | measured | skipped | seconds | candidates/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, s in rows:
        print(f"| {label} | {s['workers']} | {s['measured']} | {s['skipped']} | {s['seconds']} | "
              f"{s['candidates_per_second']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
