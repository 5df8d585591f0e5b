"""The ONNX backend node tests through tinyfuse end to end: compile → C → gcc → run.

``run(model_path, inputs)`` is the callable ``../shared/tools/node_tests.py --runner`` expects::

    python ../shared/tools/node_tests.py --runner tests.conformance.runner:run --preset mcu \
        --kinds node,pytorch-converted --xfail tests/conformance/expected_failures.txt

One adaptation, the one every ahead-of-time compiler makes (TVM's ``freeze_params``): a graph input
that feeds only parameter slots (Conv weights, BatchNormalization statistics, Reshape's shape, Pad's
pads, Clip's bounds, ...: ``PARAM_SLOTS``) is bound to the test's value as an initializer, since
tinyfuse compiles a model with static weights and shapes. Data inputs stay runtime inputs. A second,
the one a user makes after reading the compiler's error line: where the compiler answers NeedsBinding
(a graph input decides an output shape, a Loop trip count or an If condition: ConstantOfShape and Range
on graph inputs), ``compile_binding`` binds the inputs it names to the test's values (``--bind``) and
compiles again; the outputs are still compared with the test's, and those cases are listed as bound.

``python -m tests.conformance.runner`` runs the mcu preset (node + pytorch-converted), prints one line
per case, the per-op table and the total, and exits 1 when a case fails that is not in
``expected_failures.txt``, when an expected failure passes, or when an expected failure is not a
clear ``TinyfuseError`` (a crash or wrong numbers).

``--preset all`` runs the whole suite (every op of the node cases, every dtype, the ``_expanded``
function bodies; node, pytorch-converted, pytorch-operator and simple kinds) and sorts each case into
pass / error (one clear ``TinyfuseError`` line from the compiler: an op, dtype or attribute tinyfuse
does not support) / fail (wrong numbers, a crash, generated C that gcc refuses or that exits with an
error, a compile over ``CASE_SECONDS``); it exits 1 when a case fails. ``--json`` keeps the per-case
results for a before/after comparison (``--compare OLD.json`` prints the cases whose class changed).
"""
from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT.parent / "shared" / "tools"
EXPECTED_FAILURES = Path(__file__).with_name("expected_failures.txt")
CACHE_DIR = ROOT / "build" / "onnx_node_data"
CFLAGS = ["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror"]

# op type → input slots that a deployed model carries as initializers
PARAM_SLOTS = {
    "Conv": (1, 2), "ConvTranspose": (1, 2), "BatchNormalization": (1, 2, 3, 4), "Clip": (1, 2),
    "Pad": (1, 2, 3), "Reshape": (1,), "Resize": (1, 2, 3), "Slice": (1, 2, 3, 4), "Split": (1,),
    "Squeeze": (1,), "Unsqueeze": (1,), "ReduceMean": (1,), "QuantizeLinear": (1, 2),
    "DequantizeLinear": (1, 2), "QLinearConv": (1, 2, 3, 4, 5, 6, 7, 8), "QLinearMatMul": (1, 2, 4, 5, 6, 7),
    "ConvInteger": (1, 2, 3), "MatMulInteger": (1, 2, 3), "Dropout": (1, 2),
}
PARAM_SLOTS.update({"Expand": (1,), "Tile": (1,), "PRelu": (1,)})  # opsmisc (Gather indices stay runtime inputs)
PARAM_SLOTS.update({"LSTM": (1, 2, 3, 4, 7), "GRU": (1, 2, 3, 4)})  # rnn: W, R, B, sequence_lens, P
PARAM_SLOTS.update({op: (1,) for op in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                                         "ReduceLogSumExp", "ReduceSumSquare", "CumSum", "TopK", "ScatterND",
                                         "ScatterElements", "Trilu")})     # structops: axes, k, constant indices
PARAM_SLOTS.update({"OneHot": (1, 2), "InstanceNormalization": (1, 2), "GroupNormalization": (1, 2)})
PARAM_SLOTS.update({"If": (0,), "Loop": (0, 1)})   # control flow: the condition, the trip count (--bind)
# op types run beside node_tests.CNN_OPS (the mcu preset's default list)
EXTRA_OPS = ["LSTM", "GRU"]
EXTRA_OPS += ["Pow", "Sqrt", "Reciprocal", "Exp", "Log", "Neg", "Abs", "Floor", "Ceil", "Round", "Sign", "Erf", "Sin",
              "Cos", "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Not", "And", "Or", "Xor", "Where",
              "Mod", "Min", "Max", "Mean", "Sum", "Softplus", "Softsign", "Selu", "Elu", "Celu", "ThresholdedRelu",
              "Mish", "Shrink", "Cast", "IsNaN", "IsInf"]  # elemops
EXTRA_OPS += ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSumExp",
              "ReduceSumSquare", "ArgMax", "ArgMin", "LogSoftmax", "Hardmax", "CumSum", "TopK", "GatherElements",
              "GatherND", "ScatterND", "ScatterElements", "OneHot", "Size", "Shape", "ConstantOfShape", "Range", "Trilu",
              "DepthToSpace", "SpaceToDepth", "Einsum", "InstanceNormalization", "GroupNormalization", "Tile",
              "Expand"]  # structops
ALL_KINDS = ("node", "pytorch-converted", "pytorch-operator", "simple")
CASE_SECONDS = 300        # --preset all: a compile that takes longer is a failure, not a hang
BOUND: dict[str, list[str]] = {}   # case → the graph inputs bound with --bind (the compiler asked: NeedsBinding)


class BuildFailure(RuntimeError):
    """The generated C did not build or did not run: a failure, never a clear compiler error."""


class CaseTimeout(RuntimeError):
    """A case over CASE_SECONDS."""


def freeze_params(model: onnx.ModelProto, inputs: list[np.ndarray]) -> tuple[onnx.ModelProto, list[np.ndarray]]:
    """Bind graph inputs used only in PARAM_SLOTS as initializers; returns the model and the
    remaining (runtime) inputs in order."""
    inits = {i.name for i in model.graph.initializer}
    graph_inputs = [vi for vi in model.graph.input if vi.name not in inits]
    uses: dict[str, list[bool]] = {}
    for n in model.graph.node:
        for slot, name in enumerate(n.input):
            if name:
                uses.setdefault(name, []).append(slot in PARAM_SLOTS.get(n.op_type, ()))
    frozen = {vi.name for vi in graph_inputs if uses.get(vi.name) and all(uses[vi.name])}
    if not frozen:
        return model, inputs
    m = onnx.ModelProto()
    m.CopyFrom(model)
    keep, rest = [], []
    for vi, x in zip(graph_inputs, inputs):
        if vi.name in frozen:
            m.graph.initializer.append(numpy_helper.from_array(np.asarray(x), vi.name))
        else:
            keep.append(vi)
            rest.append(x)
    del m.graph.input[:]
    m.graph.input.extend(keep)
    return m, rest


def compile_binding(model: onnx.ModelProto, inputs: list[np.ndarray], work: Path):
    """``compile_model``, and when the compiler answers NeedsBinding (a graph input decides an output
    shape, a trip count or a condition: its error line names the inputs and ``--bind``), what a user
    does: bind those inputs to the test's values (``--bind NAME=FILE.npy``) and compile again.
    Returns (CompileResult, the run-time inputs left, the names bound)."""
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import NeedsBinding

    names = [vi.name for vi in model.graph.input if vi.name not in {i.name for i in model.graph.initializer}]
    bound: dict[str, str] = {}
    while True:
        try:
            result = compile_model(model, name="model", bind=list(bound.items()))
            return result, [x for n, x in zip(names, inputs) if n not in bound], list(bound)
        except NeedsBinding as e:
            new = [n for n in e.inputs if n in names and n not in bound]
            if not new:
                raise
            for n in new:
                bound[n] = str(work / f"bind{len(bound)}.npy")
                np.save(bound[n], np.asarray(inputs[names.index(n)]))


def run(model_path: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Compile ``model_path`` with tinyfuse (binding what the compiler asks to bind: ``compile_binding``,
    recorded in BOUND), build the C with gcc (strict warnings), run it on ``inputs``; TinyfuseError for
    a model tinyfuse does not support."""
    from tinyfuse.harness import build_host, run_host

    model, rest = freeze_params(onnx.load(model_path), inputs)
    work = Path(tempfile.mkdtemp(prefix="tf_conf_"))
    try:
        result, rest, bound = compile_binding(model, rest, work)
        if bound:
            BOUND[Path(model_path).parent.name] = bound
        try:
            exe = build_host(result, work, cflags=CFLAGS)
            return run_host(exe, result, rest)
        except Exception as e:       # gcc refused the C, or the program failed: not a clear compiler error
            raise BuildFailure(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_bounded(model_path: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """``run`` with an alarm at CASE_SECONDS (CaseTimeout), so one pathological case cannot stall the
    whole suite."""
    def expire(signum, frame):
        raise CaseTimeout(f"over {CASE_SECONDS} s")
    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(CASE_SECONDS)
    try:
        return run(model_path, inputs)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# --------------------------------------------------------------------------- expected failures

def load_expected(path: Path = EXPECTED_FAILURES) -> dict[str, str]:
    """``name  # reason`` per line → {test name: reason}; names are exact, not regexes."""
    out = {}
    for line in path.read_text().splitlines():
        name, _, reason = line.partition("#")
        if name.strip():
            out[name.strip()] = reason.strip()
    return out


def node_tests():
    sys.path.insert(0, str(TOOLS))
    import node_tests as nt
    return nt


def run_cases(kinds=("node", "pytorch-converted"), include=(), verbose=True, json_out=None, preset="mcu"):
    """Run the mcu preset (or ``preset="all"``: every case of ``kinds``); returns the per-case results
    of node_tests.run_suite."""
    nt = node_tests()
    tmp_json = json_out or tempfile.mktemp(suffix=".json")
    if preset == "all":
        nt.run_suite(run_bounded, all_ops=True, kinds=kinds, include=include, cache_dir=str(CACHE_DIR),
                     verbose=verbose, json_out=tmp_json)
    else:
        nt.run_suite(run, ops=nt.CNN_OPS + EXTRA_OPS, preset="mcu", kinds=kinds, include=include,
                     cache_dir=str(CACHE_DIR), verbose=verbose, json_out=tmp_json)
    with open(tmp_json) as f:
        results = json.load(f)
    for r in results:
        if r["name"] in BOUND:
            r["bound"] = BOUND[r["name"]]
    if json_out:
        with open(json_out, "w") as f:
            json.dump(results, f, indent=1)
    return results


def outcome(r: dict) -> str:
    """pass, error (one clear TinyfuseError line from the compiler) or fail (anything else); skip for a
    case node_tests cannot materialise (sequence/map/optional-typed values)."""
    if r["status"] == "SKIP":
        return "skip"
    if r["msg"] is None:
        return "pass"
    return "error" if r["msg"].startswith("TinyfuseError") else "fail"


def whole_suite_table(results: list[dict]) -> tuple[list[str], dict[str, int]]:
    """Per-op lines (pass / error / fail / skip) and the totals of a --preset all run."""
    per_op: dict[str, dict[str, int]] = {}
    for r in results:
        per_op.setdefault(f"{r['kind'][:5]}:{r['op']}", dict.fromkeys(("pass", "error", "fail", "skip"), 0))[
            outcome(r)] += 1
    lines = [f"{'suite:op':48s} {'pass':>5} {'error':>5} {'fail':>5} {'skip':>5}"]
    lines += [f"{op:48s} {c['pass']:5d} {c['error']:5d} {c['fail']:5d} {c['skip']:5d}" for op, c in sorted(per_op.items())]
    totals = {k: sum(c[k] for c in per_op.values()) for k in ("pass", "error", "fail", "skip")}
    return lines, totals


def changes(old: list[dict], new: list[dict]) -> list[str]:
    """One line per case whose outcome differs between two --json files (before → after)."""
    before = {r["name"]: outcome(r) for r in old}
    return [f"{r['name']:60s} {before.get(r['name'], '-'):5s} -> {outcome(r)}" for r in new
            if before.get(r["name"]) != outcome(r)]


def bound_lines(results: list[dict]) -> list[str]:
    """One line per case that ran with inputs bound (``compile_binding``) and its outcome."""
    return [f"{r['name']:60s} --bind {', '.join(r['bound'])}: {outcome(r)}" for r in results if r.get("bound")]


def check(results: list[dict], expected: dict[str, str]) -> list[str]:
    """Problems: failures not listed, listed cases that pass, listed failures that are not a clear
    TinyfuseError (a crash or wrong numbers)."""
    problems = []
    for r in results:
        name, msg = r["name"], r["msg"]
        if r["status"] == "SKIP":
            continue
        if msg is None and name in expected:
            problems.append(f"{name}: expected to fail ({expected[name]}) but passes: remove it from "
                            f"{EXPECTED_FAILURES.name}")
        elif msg is not None and name not in expected:
            problems.append(f"{name}: fails: {msg}")
        elif msg is not None and not msg.startswith("TinyfuseError"):
            problems.append(f"{name}: an expected failure must be a clear TinyfuseError, got: {msg}")
    return problems


def main_all(a) -> int:
    """--preset all: the per-op table of pass / error / fail / skip and the totals; exit 1 on a failure."""
    results = run_cases(tuple(a.kinds.split(",")) if a.kinds else ALL_KINDS, a.include, json_out=a.json,
                        preset="all", verbose=not a.quiet)
    lines, t = whole_suite_table(results)
    print("\n".join(lines))
    if a.compare:
        with open(a.compare) as f:
            print("\n".join(["changed since " + a.compare + ":", *changes(json.load(f), results)]))
    print("\n".join(["with inputs bound (the compiler named them; outputs still compared):", *bound_lines(results)]))
    print(f"conformance (whole suite): {t['pass']} passed, {t['fail']} failed, {t['error']} clear errors, "
          f"{t['skip']} skipped ({len(results)} cases)")
    return 1 if t["fail"] else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="ONNX node conformance of tinyfuse (mcu preset, or the whole suite)")
    ap.add_argument("--preset", default="mcu", choices=("mcu", "all"), help="mcu (default: the MCU op list, "
                    "expected_failures.txt) or all (every case: pass / clear error / fail per op)")
    ap.add_argument("--kinds", default=None, help="default node,pytorch-converted (mcu); "
                    f"{','.join(ALL_KINDS)} (all)")
    ap.add_argument("--include", action="append", default=[], help="regex on the test name")
    ap.add_argument("--json", help="write per-case results here")
    ap.add_argument("--compare", metavar="OLD.json", help="--preset all: list the cases whose outcome changed")
    ap.add_argument("-q", "--quiet", action="store_true", help="no line per case")
    a = ap.parse_args(argv)
    if a.preset == "all":
        return main_all(a)
    results = run_cases(tuple((a.kinds or "node,pytorch-converted").split(",")), a.include, json_out=a.json,
                        verbose=not a.quiet)
    expected = load_expected()
    per_op: dict[str, list[int]] = {}
    for r in results:
        s = per_op.setdefault(f"{r['kind'][:5]}:{r['op']}", [0, 0, 0])
        ok, xf = r["msg"] is None, r["name"] in expected
        s[0 if ok else 2 if xf else 1] += 1
    print(f"\n{'suite:op':40s} {'pass':>5} {'fail':>5} {'xfail':>5}")
    for op, (p, f, x) in sorted(per_op.items()):
        print(f"{op:40s} {p:5d} {f:5d} {x:5d}")
    tot = [sum(v[i] for v in per_op.values()) for i in range(3)]
    problems = check(results, expected)
    print("\n".join(["with inputs bound (the compiler named them; outputs still compared):", *bound_lines(results)]))
    for p in problems:
        print("PROBLEM", p)
    print(f"conformance: {tot[0]} passed, {tot[1]} failed, {tot[2]} expected failures "
          f"({len(results)} cases); {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
