#!/usr/bin/env python3
"""Flash and RAM of the default cortex-m4 builds, before and after a change, each model checked against TFLM.

For every model: ``tinyfuse bench --target cortex-m4 --json`` (code flash, constants flash, arena, stack,
instructions under qemu), the host build's arena and constants (the portable kernels), and
``tinyfuse run --target cortex-m4 --json`` (the outputs against TFLite Micro: tflm_exact). A tree is a
checkout of tinyfuse (its ``compiler/`` imported as tinyfuse); the "before" tree is typically
``git archive <commit>`` of the base.

    python3 benchmarks/ram_flash.py --before /tmp/ram_before            # both trees, writes the table
    python3 benchmarks/ram_flash.py --sides after                       # re-measure this tree only
    -> benchmarks/data/ram_flash.json (raw numbers) and benchmarks/data/ram_flash.md (the table)

Models: ../shared/models (KWS, ResNet-8, real/keyword_spotting_on_off_v3), the VWW-like 96x96 built by
examples/build_vww.py, and any extra .tflite given with --model (person_detect, the MLTK fingerprint
model, when a copy is at hand).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "models"
DATA = ROOT / "benchmarks" / "data"
PY = sys.executable
MODELS = [  # (label, path relative to ../shared/models)
    ("KWS (kws_ref_model)", "tflite/kws_ref_model.tflite"),
    ("ResNet-8", "tflite/pretrainedResnet_quant.tflite"),
    ("keyword_spotting_on_off_v3", "real/keyword_spotting_on_off_v3.tflite"),
]
NOTES = ("Not measured: TFLM's person_detect and the SiliconLabs MLTK fingerprint model (no copy in ../shared;\n"
         "pass them with --model when at hand).")
FIELDS = ("flash_code", "flash_const", "arena_bytes", "ram_stack", "instructions")


HOST = ("import json, sys; from tinyfuse.driver import compile_model; r = compile_model(sys.argv[1], target='host'); "
        "print(json.dumps({'arena_bytes': r.arena_bytes, 'weights_bytes': r.weights_bytes}))")


def _env(tree: Path) -> dict:
    return {**os.environ, "PYTHONPATH": f"{tree / '.shim'}:{tree}"}


def _tinyfuse(tree: Path, *args: str) -> dict:
    out = subprocess.run([PY, "-m", "tinyfuse", *args, "--json"], env=_env(tree), capture_output=True, text=True,
                         check=True, cwd=tree).stdout
    return json.loads(out.strip().splitlines()[-1])


def measure(tree: Path, model: Path) -> dict:
    """The cortex-m4 bench fields, the host arena and the TFLM verdict of ``model`` built by ``tree``."""
    m4 = _tinyfuse(tree, "bench", str(model), "--target", "cortex-m4")
    host = json.loads(subprocess.run([PY, "-c", HOST, str(model)], env=_env(tree), capture_output=True, text=True,
                                     check=True).stdout)
    run = _tinyfuse(tree, "run", str(model), "--target", "cortex-m4")
    return {**{f: m4.get(f) for f in FIELDS}, "host_arena": host.get("arena_bytes"),
            "host_weights": host["weights_bytes"],
            "tflm_exact": run.get("tflm_exact"), "tflm_equal": f"{run.get('tflm_equal')}/{run.get('outputs_total')}"}


def models(extra: list[str], workdir: Path) -> list[tuple[str, Path]]:
    out = [(label, SHARED / rel) for label, rel in MODELS]
    subprocess.run([PY, str(ROOT / "examples" / "build_vww.py"), str(workdir)], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    out.insert(2, ("VWW-like 96x96", workdir / "vww_96_int8.tflite"))
    return out + [(Path(p).stem, Path(p)) for p in extra]


def _row(label: str, side: str, r: dict) -> str:
    cells = [f"{r[f]:,}" if isinstance(r.get(f), int) else str(r.get(f)) for f in FIELDS]
    ratio = r["flash_const"] / r["host_weights"]
    return (f"| {label} | {side} | " + " | ".join(cells) + f" | {r['host_arena']:,} | {r['host_weights']:,} | "
            f"{ratio:.3f} | {r['tflm_exact']} ({r['tflm_equal']}) |")


def table(data: dict) -> str:
    lines = ["# Flash and RAM of the default cortex-m4 builds (benchmarks/ram_flash.py)", "",
             "code = flash_code (model kernels, bytes), const = flash_const (weights and tables), arena and",
             "stack in bytes, instructions under qemu (cortex-m4, one inference); host arena: the portable",
             "build's; host const: the host build's weights (int8 weights, int32 bias and requantize terms);",
             "const / host: the cortex-m4 constants over them (goal <= 1.05); TFLM: `tinyfuse run --target",
             "cortex-m4` outputs equal to TFLite Micro. before / after: the trees given to --before / --after.", "",
             NOTES, "",
             "| model | build | code | const | arena | stack | instructions | host arena | host const | const / host | TFLM exact |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for label in {**data.get("before", {}), **data.get("after", {})}:
        for side in ("before", "after"):
            if label in data.get(side, {}):
                lines.append(_row(label, side, data[side][label]))
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="a tree of the base commit (git archive)")
    ap.add_argument("--after", type=Path, default=ROOT, help="the tree of the change (default: this checkout)")
    ap.add_argument("--sides", default="before,after", help="which trees to measure (the others keep their stored numbers)")
    ap.add_argument("--model", action="append", default=[], help="an extra .tflite (person_detect, fingerprint)")
    args = ap.parse_args(argv)
    DATA.mkdir(parents=True, exist_ok=True)
    store = DATA / "ram_flash.json"
    data = json.loads(store.read_text()) if store.exists() else {}
    sides = [(s, args.after if s == "after" else args.before) for s in args.sides.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        if not sides[0][0]:          # --sides "": the table from the stored numbers
            return _write(store, data)
        for label, path in models(args.model, Path(tmp)):
            for side, tree in sides:
                data.setdefault(side, {})[label] = measure(tree, path)
                print(side, label, data[side][label], flush=True)
    return _write(store, data)


def _write(store: Path, data: dict) -> int:
    store.write_text(json.dumps(data, indent=1) + "\n")
    (DATA / "ram_flash.md").write_text(table(data))
    print(table(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
