#!/usr/bin/env python3
"""Arena bytes before and after the SIMD-overhead work and with the input pushed by rows
(``--input-rows``), per model and target, into benchmarks/data/rows_arena.md.

    PYTHONPATH=.shim python3 benchmarks/rows_arena.py [--before TREE] [--targets host,cortex-m4] [--out FILE]

Models: the VWW-like 96x96 MobileNetV1 of examples/build_vww.py (built into a temporary directory),
KWS (kws_ref_model), ResNet-8 (pretrainedResnet_quant) and keyword_spotting_on_off_v3 from
../shared/models. Columns:

- arena before: ``tinyfuse compile`` of the tree at ``--before`` (a checkout or ``git archive`` of the
  commit to compare with; its ``compiler/`` is imported as tinyfuse), whole frame ("-" without it);
- arena after: ``tinyfuse bench --target T --json`` of this tree, whole frame (``arena_bytes``; host:
  ``compile``, bench runs under qemu);
- with rows pushed: the same with ``--input-rows N`` (N rows a call, the table says which);
- stack: bench's measured stack bytes of the rows-pushed build (qemu targets);
- TFLM exact: ``tinyfuse run --target T`` verdicts, whole frame / rows pushed: "yes" when the outputs
  equal TensorFlow Lite Micro's.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "models"
MODELS = [("VWW 96x96 (examples/build_vww.py)", None, 4), ("KWS", "tflite/kws_ref_model.tflite", 1),
          ("ResNet-8", "tflite/pretrainedResnet_quant.tflite", 4),
          ("keyword_spotting_on_off_v3", "real/keyword_spotting_on_off_v3.tflite", 1)]


def _tinyfuse(args: list[str], tree: Path | None = None) -> str:
    """stdout + stderr of ``python -m tinyfuse ARGS`` with this tree (or ``tree``) as tinyfuse."""
    env = dict(os.environ)
    if tree is None:
        env["PYTHONPATH"] = f"{ROOT / '.shim'}:{ROOT}"
        cwd = ROOT
    else:
        shim = Path(tempfile.mkdtemp()) / "tinyfuse"
        shim.symlink_to(tree / "compiler")
        env["PYTHONPATH"] = f"{shim.parent}:{tree}"
        cwd = Path(tempfile.gettempdir())
    p = subprocess.run([sys.executable, "-m", "tinyfuse", *args], capture_output=True, text=True, env=env, cwd=cwd)
    return p.stdout + p.stderr


def _arena(text: str) -> int | None:
    m = re.search(r"arena (\d+) bytes", text)
    return int(m.group(1)) if m else None


def _bench(model: str, target: str, extra: list[str]) -> tuple[int | None, int | None]:
    """(arena bytes, stack bytes) of ``bench --json`` (qemu targets) or ``compile`` (host)."""
    if target == "host":
        with tempfile.TemporaryDirectory() as d:
            return _arena(_tinyfuse(["compile", model, "-o", d, "--target", target, *extra])), None
    out = _tinyfuse(["bench", model, "--target", target, "--json", *extra])
    start = out.find("{")
    data = json.loads(out[start:out.rindex("}") + 1]) if start >= 0 else {}
    return data.get("arena_bytes"), data.get("ram_stack")


def _exact(model: str, target: str, extra: list[str]) -> str:
    out = _tinyfuse(["run", model, "--target", target, *extra])
    return "yes" if re.search(r"outputs equal to TFLite Micro", out) else "NO"


def row(name: str, model: str, target: str, rows: int, before: Path | None) -> str:
    with tempfile.TemporaryDirectory() as d:
        old = _arena(_tinyfuse(["compile", str(model), "-o", d, "--target", target], before)) if before else None
    after, _ = _bench(model, target, [])
    pushed, stack = _bench(model, target, ["--input-rows", str(rows)])
    exact = f"{_exact(model, target, [])} / {_exact(model, target, ['--input-rows', str(rows)])}"
    return (f"| {name} | {target} | {old if old is not None else '-'} | {after} | {pushed} ({rows} row{'s' if rows > 1 else ''}"
            f" a call) | {stack if stack is not None else '-'} | {exact} |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, default=None, help="a tinyfuse source tree to compare with")
    ap.add_argument("--targets", default="host,cortex-m4")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "data" / "rows_arena.md")
    args = ap.parse_args(argv)
    lines = ["# Arena bytes: SIMD overhead gone, input pushed by rows", "",
             "`PYTHONPATH=.shim python3 benchmarks/rows_arena.py" + (" --before TREE" if args.before else "") + "`"
             " (arena bytes; before: the tree given by --before, whole frame; after: this tree, whole frame;"
             " rows pushed: `--input-rows N`, the input frame not in the arena; stack: bench's measured stack of"
             " the rows-pushed build; TFLM exact: `tinyfuse run` verdicts whole frame / rows pushed).", "",
             "| model | target | arena before | arena after | with rows pushed | stack | TFLM exact |",
             "|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, str(ROOT / "examples" / "build_vww.py"), tmp], check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": f"{ROOT / '.shim'}:{ROOT}"})
        for name, rel, rows in MODELS:
            model = str(Path(tmp) / "vww_96_int8.tflite") if rel is None else str(SHARED / rel)
            for target in args.targets.split(","):
                lines.append(row(name, model, target, rows, args.before))
                print(lines[-1], flush=True)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
