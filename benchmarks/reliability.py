"""Reliability figures in one table: ONNX node conformance per op (mcu preset: node and
pytorch-converted kinds), and a differential fuzzing campaign (graphs, outcomes, int8 LSB
histogram vs onnxruntime).

    python benchmarks/reliability.py [--fuzz 500] [--seed 1000] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.conformance import runner  # noqa: E402
from tests.fuzz import generator  # noqa: E402


def conformance_table(results: list[dict], expected: dict[str, str]) -> tuple[list[str], dict]:
    per: dict[tuple[str, str], list[int]] = {}
    for r in results:
        s = per.setdefault((r["kind"], r["op"]), [0, 0, 0])
        s[0 if r["msg"] is None else 2 if r["name"] in expected else 1] += 1
    lines = [f"{'suite':<18} {'op':<34} {'pass':>5} {'fail':>5} {'xfail':>6}"]
    totals: dict[str, list[int]] = {}
    for (kind, op), (p, f, x) in sorted(per.items()):
        lines.append(f"{kind:<18} {op:<34} {p:>5} {f:>5} {x:>6}")
        t = totals.setdefault(kind, [0, 0, 0])
        t[0], t[1], t[2] = t[0] + p, t[1] + f, t[2] + x
    for kind, (p, f, x) in sorted(totals.items()):
        lines.append(f"{kind:<18} {'TOTAL':<34} {p:>5} {f:>5} {x:>6}")
    return lines, totals


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fuzz", type=int, default=300, help="graphs in the fuzzing campaign (0: none)")
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--json", help="write the figures as JSON")
    a = ap.parse_args(argv)
    results = runner.run_cases(verbose=False)
    expected = runner.load_expected()
    lines, totals = conformance_table(results, expected)
    print("== ONNX node conformance (mcu preset), compile -> C -> gcc -> run ==")
    print("\n".join(lines))
    figures = {"conformance": totals}
    if a.fuzz:
        r = generator.campaign(list(range(a.seed, a.seed + a.fuzz)), minimise_failures=False, progress=False)
        print(f"\n== differential fuzzing: {a.fuzz} graphs (seeds {a.seed}..{a.seed + a.fuzz - 1}), "
              f"{r['seconds']:.0f} s ==")
        for status, n in sorted(r["counts"].items()):
            print(f"  {status:<14} {n:>6}")
        print(f"  int8 LSB vs onnxruntime (LSB: graphs): {r['lsb_hist']}")
        for f in r["failures"]:
            print(f"  FAIL seed {f['seed']} {f['status']}: {f['detail'][:200]}")
        figures["fuzz"] = {"graphs": a.fuzz, "counts": r["counts"], "lsb_hist": r["lsb_hist"],
                           "failures": [{k: f[k] for k in ("seed", "status", "detail")} for f in r["failures"]]}
    if a.json:
        Path(a.json).write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
