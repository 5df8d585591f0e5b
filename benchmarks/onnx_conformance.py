"""The ONNX conformance table of the ONNX issue's operators: benchmarks/data/onnx_conformance.md.

Runs the whole ONNX backend suite through tinyfuse (``tests.conformance.runner --preset all``: node,
pytorch-converted, pytorch-operator and simple cases; compile → gcc -Werror → run → compare), unless
``--after`` names the JSON of such a run, and compares it with ``--before`` (the same run on the commit
the change started from). Per operator of ``ISSUE_OPS`` (node cases, ``_expanded`` function bodies
included): pass / expected-fail (a clear one-line TinyfuseError: an op, dtype or attribute tinyfuse
refuses; the most frequent message is quoted) / fail (wrong numbers, a crash, C that gcc refuses or
that fails, a compile over 300 s), before → after; then the totals of the node and pytorch-converted
kinds and of the whole suite. CPU-heavy (about 2000 cases): run it niced::

    nice -n 10 python -m benchmarks.onnx_conformance --before build/all_main.json [--after RUN.json] [--note TEXT]
"""
from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.conformance.runner import bound_lines, changes, outcome  # noqa: E402

OUT = ROOT / "benchmarks" / "data" / "onnx_conformance.md"
ISSUE_OPS = [
    "Pow", "Sqrt", "Reciprocal", "Exp", "Log", "Neg", "Abs", "Floor", "Ceil", "Round", "Sign", "Erf", "Sin", "Cos",
    "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Not", "And", "Or", "Xor", "Where", "Mod", "Min",
    "Max", "Mean", "Sum", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSumExp", "ArgMax", "ArgMin", "LogSoftmax", "Hardmax", "CumSum", "TopK", "GatherElements", "GatherND",
    "ScatterND", "ScatterElements", "OneHot", "Size", "Shape", "ConstantOfShape", "Range", "Trilu", "DepthToSpace",
    "SpaceToDepth", "Einsum", "InstanceNormalization", "GroupNormalization", "Softplus", "Softsign", "Selu", "Elu",
    "Celu", "ThresholdedRelu", "Mish", "HardSigmoid", "Shrink", "LSTM", "GRU", "If", "Loop", "Gather", "Pad"]
CLASSES = ("pass", "error", "fail", "skip")


def counts(results: list[dict], keep) -> dict[str, int]:
    c = collections.Counter(outcome(r) for r in results if keep(r))
    return {k: c.get(k, 0) for k in CLASSES}


def first_error(results: list[dict], op: str) -> str:
    """The most frequent clear error of ``op``'s node cases, without the node name, cut to one short line."""
    msgs = collections.Counter()
    for r in results:
        if r["kind"] == "node" and r["op"] == op and outcome(r) == "error":
            msg = r["msg"].removeprefix("TinyfuseError: ")
            msgs[msg.split("): ", 1)[-1][:110].replace("|", "/")] += 1
    return msgs.most_common(1)[0][0] if msgs else ""


def fmt(c: dict[str, int]) -> str:
    return f"{c['pass']} / {c['error']} / {c['fail']}" + (f" (+{c['skip']} skip)" if c["skip"] else "")


def table(before: list[dict], after: list[dict]) -> list[str]:
    lines = ["| op | before: pass / expected-fail / fail | after: pass / expected-fail / fail | expected-fail "
             "(most frequent error, after) |", "|---|---|---|---|"]
    for op in ISSUE_OPS:
        keep = (lambda o: lambda r: r["kind"] == "node" and r["op"] == o)(op)
        lines.append(f"| {op} | {fmt(counts(before, keep))} | {fmt(counts(after, keep))} | {first_error(after, op)} |")
    return lines


def totals(before: list[dict], after: list[dict]) -> list[str]:
    issue = set(ISSUE_OPS)
    rows = [("the ops above (node)", lambda r: r["kind"] == "node" and r["op"] in issue),
            ("node (all ops)", lambda r: r["kind"] == "node"),
            ("pytorch-converted", lambda r: r["kind"] == "pytorch-converted"),
            ("pytorch-operator", lambda r: r["kind"] == "pytorch-operator"),
            ("simple", lambda r: r["kind"] == "simple"),
            ("whole suite", lambda r: True)]
    lines = ["| cases | before: pass / expected-fail / fail | after: pass / expected-fail / fail |", "|---|---|---|"]
    lines += [f"| {name} | {fmt(counts(before, keep))} | {fmt(counts(after, keep))} |" for name, keep in rows]
    return lines


def failures(after: list[dict]) -> list[str]:
    bad = [r for r in after if outcome(r) == "fail"]
    return [f"- {r['kind']} {r['name']} ({r['op']}): {r['msg'][:150]}" for r in bad] or ["- none"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="JSON of the runner on the starting commit")
    ap.add_argument("--after", help="JSON of the runner on this tree (default: run it now)")
    ap.add_argument("--before-label", default="main at the merge", help="what --before was run on")
    ap.add_argument("--note", action="append", default=[], help="a paragraph for the Notes section")
    a = ap.parse_args(argv)
    after_path = a.after
    if after_path is None:
        after_path = str(ROOT / "build" / "conformance_after.json")
        subprocess.run([sys.executable, "-m", "tests.conformance.runner", "--preset", "all", "--json", after_path,
                        "-q"], cwd=ROOT, check=False)
    with open(a.before) as f:
        before = json.load(f)
    with open(after_path) as f:
        after = json.load(f)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    text = ["# ONNX backend conformance of the ONNX issue's operators", "",
            f"Produced by `benchmarks/onnx_conformance.py` (module docstring): before = {a.before_label}, "
            f"after = this tree (HEAD {commit}, uncommitted changes included). Each case: compile with tinyfuse, "
            "build with gcc -std=c99 -O1 -Wall -Wextra -Werror, run, compare with the suite's outputs "
            "(tests/conformance/runner.py). expected-fail = one clear `error:` line from the compiler; "
            "fail = wrong numbers, a crash, C that does not build or run, or a compile over 300 s. "
            "Node cases of each op (the `_expanded` function bodies included); skip = sequence/optional-typed "
            "cases the harness cannot feed.", "", *table(before, after), "", "## Totals", "",
            *totals(before, after), "", "## Cases whose class changed", "",
            *(f"- `{line.strip()}`" for line in changes(before, after) or ["none"]), "",
            "## Cases run with inputs bound (after)", "",
            "The compiler answered NeedsBinding (one error line naming the graph inputs that decide an output "
            "shape, a Loop trip count or an If condition, and `--bind`); the runner bound them to the test's "
            "values as a user would and compiled again; the outputs are compared with the test's as for every "
            "case.", "", *(f"- `{line.strip()}`" for line in bound_lines(after) or ["none"]), "",
            "## Failures after", "", *failures(after), "", *(["## Notes", ""] + [x for n in a.note for x in (n, "")] if a.note else [])]
    OUT.write_text("\n".join(text))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
