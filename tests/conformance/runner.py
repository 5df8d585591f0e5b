"""The ONNX backend node tests through tinyfuse end to end: compile → C → gcc → run.

``run(model_path, inputs)`` is the callable ``../shared/tools/node_tests.py --runner`` expects::

    python ../shared/tools/node_tests.py --runner tests.conformance.runner:run --preset mcu \
        --kinds node,pytorch-converted --xfail tests/conformance/expected_failures.txt

One adaptation, the one every ahead-of-time compiler makes (TVM's ``freeze_params``): a graph input
that feeds only parameter slots (Conv weights, BatchNormalization statistics, Reshape's shape, Pad's
pads, Clip's bounds, ...: ``PARAM_SLOTS``) is bound to the test's value as an initializer, since
tinyfuse compiles a model with static weights and shapes. Data inputs stay runtime inputs.

``python -m tests.conformance.runner`` runs the mcu preset (node + pytorch-converted), prints one line
per case, the per-op table and the total, and exits 1 when a case fails that is not in
``expected_failures.txt``, when an expected failure passes, or when an expected failure is not a
clear ``TinyfuseError`` (a crash or wrong numbers).
"""
from __future__ import annotations

import argparse
import shutil
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
PARAM_SLOTS.update({"Gather": (1,), "Expand": (1,), "Tile": (1,), "PRelu": (1,)})  # opsmisc
PARAM_SLOTS.update({"LSTM": (1, 2, 3, 4, 7), "GRU": (1, 2, 3, 4)})  # rnn: W, R, B, sequence_lens, P
# op types run beside node_tests.CNN_OPS (the mcu preset's default list)
EXTRA_OPS = ["LSTM", "GRU"]
EXTRA_OPS += ["Pow", "Sqrt", "Reciprocal", "Exp", "Log", "Neg", "Abs", "Floor", "Ceil", "Round", "Sign", "Erf", "Sin",
              "Cos", "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Not", "And", "Or", "Xor", "Where",
              "Mod", "Min", "Max", "Mean", "Sum", "Softplus", "Softsign", "Selu", "Elu", "Celu", "ThresholdedRelu",
              "Mish", "Shrink", "Cast", "IsNaN", "IsInf"]  # elemops


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


def run(model_path: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Compile ``model_path`` with tinyfuse, build the C with gcc (strict warnings), run it on
    ``inputs``; TinyfuseError for a model tinyfuse does not support."""
    from tinyfuse.driver import compile_model
    from tinyfuse.harness import build_host, run_host

    model, rest = freeze_params(onnx.load(model_path), inputs)
    result = compile_model(model, name="model")
    work = Path(tempfile.mkdtemp(prefix="tf_conf_"))
    try:
        exe = build_host(result, work, cflags=CFLAGS)
        return run_host(exe, result, rest)
    finally:
        shutil.rmtree(work, ignore_errors=True)


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


def run_cases(kinds=("node", "pytorch-converted"), include=(), verbose=True, json_out=None):
    """Run the mcu preset; returns the per-case results of node_tests.run_suite."""
    import json
    nt = node_tests()
    tmp_json = json_out or tempfile.mktemp(suffix=".json")
    nt.run_suite(run, ops=nt.CNN_OPS + EXTRA_OPS, preset="mcu", kinds=kinds, include=include, cache_dir=str(CACHE_DIR),
                 verbose=verbose, json_out=tmp_json)
    with open(tmp_json) as f:
        return json.load(f)


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="ONNX node conformance of tinyfuse (mcu preset)")
    ap.add_argument("--kinds", default="node,pytorch-converted")
    ap.add_argument("--include", action="append", default=[], help="regex on the test name")
    ap.add_argument("--json", help="write per-case results here")
    a = ap.parse_args(argv)
    results = run_cases(tuple(a.kinds.split(",")), a.include, json_out=a.json)
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
    for p in problems:
        print("PROBLEM", p)
    print(f"conformance: {tot[0]} passed, {tot[1]} failed, {tot[2]} expected failures "
          f"({len(results)} cases); {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
