"""Per model and qemu target: executed instructions of one inference, MACs, instructions/MAC, flash
(code, constants) and RAM (arena, stack, total), as a table (or JSON lines with --json).

    python benchmarks/targets.py [--models a.onnx b.onnx] [--targets cortex-m4 rv32imac] [--json]

Default models: the demo DS-CNN (built here) and, when ../shared exists, kws_ref_model_float32 and
ad01_fp32. Figures come from tinyfuse.harness.bench (exact instruction counts, not cycles).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tinyfuse.driver import compile_model  # noqa: E402
from tinyfuse.harness.bench import bench_target  # noqa: E402
from tinyfuse.harness.qemu import build_target, missing_tools  # noqa: E402
from tinyfuse.targets import TARGETS  # noqa: E402

SHARED_MODELS = ROOT.parent / "shared" / "models" / "onnx"
DEFAULT_SHARED = ["kws_ref_model_float32", "ad01_fp32"]
COLUMNS = [("model", "model", 22), ("target", "target", 10), ("board", "board", 10),
           ("instructions", "instructions", 12), ("macs", "MACs", 9), ("instructions_per_mac", "instr/MAC", 9),
           ("flash_code", "flash code", 10), ("flash_const", "flash const", 11), ("arena_bytes", "arena", 7),
           ("ram_stack", "stack", 5), ("ram_total", "RAM total", 9)]


def default_models(tmp: Path) -> list[Path]:
    spec = importlib.util.spec_from_file_location("build_models", ROOT / "examples" / "build_models.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    models = [Path(mod.build_dscnn(str(tmp / "dscnn_kws.onnx")))]
    models += [SHARED_MODELS / f"{m}.onnx" for m in DEFAULT_SHARED if (SHARED_MODELS / f"{m}.onnx").exists()]
    return models


def model_input(path: Path, result) -> list[np.ndarray]:
    """The reference input shipped beside a shared model (<name>.io.npz), else seeded normal(0, 1)."""
    io = path.with_suffix(".io.npz")
    if io.exists() and len(result.inputs) == 1:
        return [np.load(io)["input"]]
    rng = np.random.default_rng(0)
    return [rng.standard_normal(t.shape).astype(t.dtype) for t in result.inputs]


def row_text(f: dict) -> str:
    cells = []
    for key, _, width in COLUMNS:
        v = f[key]
        text = f"{v:.2f}" if isinstance(v, float) else str(v)
        cells.append(f"{text:<{width}}" if key in ("model", "target", "board") else f"{text:>{width}}")
    return "  ".join(cells)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", type=Path, help="ONNX files (default: demo + shared float models)")
    ap.add_argument("--targets", nargs="+", default=[t for t in TARGETS if t != "host"], choices=list(TARGETS)[1:])
    ap.add_argument("--json", action="store_true", help="one JSON object per line instead of the table")
    args = ap.parse_args(argv)
    targets = [t for t in args.targets if not missing_tools(t)]
    for t in sorted(set(args.targets) - set(targets)):
        print(f"# skipping {t}: missing {', '.join(missing_tools(t))}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="tinyfuse_bench_") as tmp:
        tmp = Path(tmp)
        models = args.models or default_models(tmp)
        if not args.json:
            print("  ".join(f"{title:<{w}}" if k in ("model", "target", "board") else f"{title:>{w}}"
                            for k, title, w in COLUMNS))
        start = time.time()
        for path in models:
            for target in targets:
                result = compile_model(path, target=target)
                build = build_target(result, target, tmp / f"{result.name}_{target}", model_input(path, result))
                figures = bench_target(build)
                print(json.dumps(figures) if args.json else row_text(figures), flush=True)
        if not args.json:
            print(f"# {len(models)} models x {len(targets)} targets in {time.time() - start:.0f} s; instructions are "
                  "executed instructions of one inference (qemu TCG plugin, exact), not cycles; flash code = model "
                  "code + library code it pulls in (soft float, expf)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
