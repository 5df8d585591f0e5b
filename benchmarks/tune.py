"""Tuning tables: Pareto fronts of `tinyfuse tune` (cortex-m4, int8 KWS / ResNet-8 /
MobileNetV2-0.35), tuning time, and the learned cost model's Spearman rank correlation on held-out
kernels next to the analytical model's.

    python3 benchmarks/tune.py [--trials 40] [--target cortex-m4] [--records build/tune] [--workers N]
                               [--scheduler tcp://HOST:PORT] [--fresh] [--extra]
(--extra: also tune AD01 and ResNet-10 for data). Per model: the Pareto front (arena + stack vs
instructions, knobs changed), the fastest build at no more RAM than the default; then compile
--ram-limit examples from the records (KWS 6K/8K/16K, ResNet-8 16K/24K/48K).
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
from tinyfuse.cost.records import BuildRecord, KernelRecord  # noqa: E402
from tinyfuse.tune import load_records, tune  # noqa: E402
from tinyfuse.tune.pareto import brief_changes  # noqa: E402

MODELS = ROOT.parent / "shared" / "models" / "onnx"
MAIN = ("kws_ref_model.onnx", "pretrainedResnet_quant.onnx", "mobilenetv2_035_96_qdq.onnx")
EXTRA = ("ad01_int8.onnx", "resnet10_w16_64_qdq.onnx")


def spearman_table(records: list, seeds=range(5)) -> list[str]:
    """Held-out kernels (25% of distinct group signatures, 5 splits): Spearman of predicted vs measured."""
    recs = {r.key: r for r in records if isinstance(r, KernelRecord) and r.instructions}
    recs = list(recs.values())                   # one per (signature, knob): counts are exact
    y = np.array([r.instructions for r in recs], dtype=np.float64)
    feats = [r.features for r in recs]
    ana = np.array([analytical_instructions(f) for f in feats])
    lines = [f"{'split':<8} {'train':>6} {'test':>5} {'learned':>8} {'analytical':>11} {'pairs':>6} "
             f"{'learned ok':>11} {'analytical ok':>14}"]
    tot = []
    for seed in seeds:
        test = holdout_split([r.sig for r in recs], 0.25, seed)
        model = fit([f for f, t in zip(feats, test) if not t], y[~test])
        pred = model.predict([f for f, t in zip(feats, test) if t])
        s_l, s_a = spearman(pred, y[test]), spearman(ana[test], y[test])
        # decisions: the same group under two knob values (variant), both held out
        by_sig: dict = {}
        for i in np.flatnonzero(test):
            by_sig.setdefault(recs[i].sig, []).append(i)
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


RAM_LIMITS = {"kws_ref_model.onnx": ("6K", "8K", "16K"), "pretrainedResnet_quant.onnx": ("16K", "24K", "48K")}


def ram_limit_rows(path: Path, target: str, rec: Path, limits) -> list[str]:
    """``compile --tuning-records rec --ram-limit X`` per limit: the chosen build (from the records) or the error."""
    from tinyfuse.cost.records import TuningRecords
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import TinyfuseError
    from tinyfuse.tune.ramlimit import parse_bytes
    rows = []
    for lim in limits:
        try:
            res = compile_model(path, target=target, tuning_records=rec, ram_limit=parse_bytes(lim))
        except TinyfuseError as e:
            rows.append(f"| {path.stem} | {lim} | error: {e} | | | | |")
            continue
        cfg = TuningRecords(load_records(rec).records).config_for(res.model_hash, target, parse_bytes(lim))
        from tinyfuse.cost.knobs import config_key
        hit = next(r for r in load_records(rec).records if isinstance(r, BuildRecord) and r.config_key == config_key(cfg))
        rows.append(f"| {path.stem} | {lim} | {brief_changes(hit.changes) or '(default)'} | "
                    f"{res.arena_bytes} | {hit.ram_stack} | {hit.instructions} | {hit.flash_bytes or '-'} |")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--target", default="cortex-m4")
    ap.add_argument("--records", default=str(ROOT / "build" / "tune"), help="directory of the records (one per model)")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--scheduler", default=None)
    ap.add_argument("--extra", action="store_true")
    ap.add_argument("--fresh", action="store_true", help="delete the records files first")
    args = ap.parse_args(argv)
    out = Path(args.records)
    out.mkdir(parents=True, exist_ok=True)
    all_records, ram_rows = [], []
    for name in MAIN + (EXTRA if args.extra else ()):
        path = MODELS / name
        rec = out / f"{path.stem}.{args.target}.jsonl"
        if args.fresh and rec.exists():
            rec.unlink()
        s = tune(path, args.target, trials=args.trials, records_path=rec, workers=args.workers,
                 scheduler=args.scheduler, out_dir=out / path.stem)
        print(f"\n### {name} on {args.target}: {s['measured']} measured now, {s['skipped']} from the records, "
              f"{s['failed']} failed, {s['seconds']} s on {s['workers']} workers")
        print(f"default: arena {s['default']['arena_bytes']} B, {s['default']['instructions']} instructions; "
              f"fastest at no more RAM: {s['chosen']['instructions']} ({s['gain_at_default_ram']:.1%} fewer)\n")
        print(s["front_table"])
        print("\nIn arena + stack, model flash and instructions (int16 weights trade flash for speed):\n")
        print(s["front_flash_table"])
        all_records += load_records(rec).records
        if name in RAM_LIMITS:
            ram_rows += ram_limit_rows(path, args.target, rec, RAM_LIMITS[name])
    print("\n| model | --ram-limit | chosen build (knobs changed) | arena B | stack B | instructions | model flash B |")
    print("|---|---|---|---:|---:|---:|---:|")
    print("\n".join(ram_rows))
    print(f"\nlearned cost model vs analytical: Spearman on held-out kernels ({len(all_records)} records)")
    for line in spearman_table(all_records):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
