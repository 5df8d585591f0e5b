"""Tuning tables: instructions before/after `tinyfuse tune` (cortex-m4, int8 KWS / ResNet-8 /
MobileNetV2-0.35), tuning time, and the learned cost model's Spearman rank correlation on held-out
kernels next to the analytical model's.

    python3 benchmarks/tune.py [--trials 8] [--target cortex-m4] [--records build/tune/records.jsonl]
                               [--max-arena-growth 0] [--extra]   (--extra: also tune AD01 and ResNet-10 for data)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tinyfuse.cost.features import analytical_instructions  # noqa: E402
from tinyfuse.cost.learned import fit, holdout_split, spearman  # noqa: E402
from tinyfuse.tune import load_records, tune  # noqa: E402

MODELS = ROOT.parent / "shared" / "models" / "onnx"
MAIN = ("kws_ref_model.onnx", "pretrainedResnet_quant.onnx", "mobilenetv2_035_96_qdq.onnx")
EXTRA = ("ad01_int8.onnx", "resnet10_w16_64_qdq.onnx")


def spearman_table(records: list[dict], seeds=range(5)) -> list[str]:
    """Held-out kernels (25% of distinct group signatures, 5 splits): Spearman of predicted vs measured."""
    recs = {r["key"]: r for r in records if r.get("kind") == "kernel" and r.get("instructions")}
    recs = list(recs.values())                   # one per (signature, knob): counts are exact
    y = np.array([r["instructions"] for r in recs], dtype=np.float64)
    feats = [r["features"] for r in recs]
    ana = np.array([analytical_instructions(f) for f in feats])
    lines = [f"{'split':<8} {'train':>6} {'test':>5} {'learned':>8} {'analytical':>11} {'pairs':>6} "
             f"{'learned ok':>11} {'analytical ok':>14}"]
    tot = []
    for seed in seeds:
        test = holdout_split([r["sig"] for r in recs], 0.25, seed)
        model = fit([f for f, t in zip(feats, test) if not t], y[~test])
        pred = model.predict([f for f, t in zip(feats, test) if t])
        s_l, s_a = spearman(pred, y[test]), spearman(ana[test], y[test])
        # decisions: the same group under two knob values (variant), both held out
        by_sig: dict = {}
        for i in np.flatnonzero(test):
            by_sig.setdefault(recs[i]["sig"], []).append(i)
        p_map = dict(zip(np.flatnonzero(test), pred))
        pairs = ok_l = ok_a = 0
        for idx in by_sig.values():
            for a in idx:
                for b in idx:
                    if a < b and y[a] != y[b]:
                        pairs += 1
                        ok_l += (p_map[a] < p_map[b]) == (y[a] < y[b])
                        ok_a += (ana[a] < ana[b]) == (y[a] < y[b])
        tot.append((s_l, s_a))
        lines.append(f"{seed:<8} {int((~test).sum()):>6} {int(test.sum()):>5} {s_l:>8.3f} {s_a:>11.3f} {pairs:>6} "
                     f"{ok_l:>5}/{pairs:<5} {ok_a:>8}/{pairs:<5}")
    m = np.array(tot)
    lines.append(f"{'mean':<8} {'':>6} {'':>5} {m[:, 0].mean():>8.3f} {m[:, 1].mean():>11.3f}")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--target", default="cortex-m4")
    ap.add_argument("--records", default=str(ROOT / "build" / "tune" / "records.jsonl"))
    ap.add_argument("--max-arena-growth", type=float, default=0.0)
    ap.add_argument("--extra", action="store_true")
    ap.add_argument("--fresh", action="store_true", help="delete the records file first")
    args = ap.parse_args(argv)
    rec = Path(args.records)
    rec.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh and rec.exists():
        rec.unlink()
    rows = []
    for name in MAIN + (EXTRA if args.extra else ()):
        path = MODELS / name
        if not path.exists():
            print(f"skip {name}: not found", file=sys.stderr)
            continue
        s = tune(path, args.target, trials=args.trials, records_path=rec, max_arena_growth=args.max_arena_growth)
        rows.append((name, s))
    print(f"\ntuning on {args.target}: {args.trials} trials + 1 verification each, arena growth <= "
          f"{args.max_arena_growth:.0%}, {rows[0][1]['jobs'] if rows else '-'} parallel qemu jobs")
    print(f"{'model':<32} {'before':>11} {'after':>11} {'fewer':>7} {'best seen':>11} {'arena before':>13} "
          f"{'arena after':>12} {'time s':>7}  global knobs")
    for name, s in rows:
        print(f"{name:<32} {s['before']:>11} {s['after']:>11} {1 - s['after'] / s['before']:>7.1%} "
              f"{s['best_measured']:>11} {s['arena_before']:>13} {s['arena_after']:>12} {s['seconds']:>7}  {s['global']}")
    records = load_records(rec).records
    print(f"\nlearned cost model vs analytical: Spearman on held-out kernels ({len(records)} records in {rec})")
    for line in spearman_table(records):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
