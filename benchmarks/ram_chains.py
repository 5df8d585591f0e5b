#!/usr/bin/env python3
"""RAM of long line-buffered chains (poly_fuse ``long_chains`` + the pooling stage) on the MLPerf Tiny
models, measured under qemu (``tinyfuse bench``: arena, stack, code, constants, instructions).

Builds per model: ``main`` (optional: ``--main DIR``, the CLI of another checkout run in a
subprocess, e.g. the main branch before this work: its own ``.venv`` when it has one, else this
interpreter with DIR's ``compiler/`` imported as tinyfuse), ``default`` (this checkout: a long chain
only where the cost model estimates at most +10% instructions, ``poly_fuse.MAX_LONG_OVERHEAD``) and
``chain forced`` (that bound lifted: the chain whatever it costs; what ``--ram-limit`` builds when
the default does not fit). ``TFLM exact``: the qemu output
for two seeded inputs equals TensorFlow Lite Micro's (.tflite models; the ONNX MobileNetV2 has no
TFLM twin: onnxruntime is not bit-exact with TFLM's int8 arithmetic, so the column says n/a).

    python3 benchmarks/ram_chains.py [--target cortex-m4] [--main /work/main] [--out benchmarks/data/ram_chains.md]
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "models"

from tinyfuse.driver import compile_model  # noqa: E402
from tinyfuse.harness.bench import bench_target  # noqa: E402
from tinyfuse.harness.inputs import load_inputs  # noqa: E402
from tinyfuse.harness.qemu import build_target, run_target  # noqa: E402
from tinyfuse.targets import get_target  # noqa: E402

POLY_FUSE = importlib.import_module("tinyfuse.passes.poly_fuse")
HEADER = ("| model | build | arena B | stack B | code B | const B | instructions | schedule | TFLM exact |\n"
          "|---|---|---:|---:|---:|---:|---:|---|---|")


def models(tmp: Path) -> list[tuple[str, Path]]:
    subprocess.run([sys.executable, str(ROOT / "examples" / "build_vww.py"), str(tmp)], check=True,
                   capture_output=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    return [("KWS (kws_ref_model)", SHARED / "tflite" / "kws_ref_model.tflite"),
            ("ResNet-8 (pretrainedResnet_quant)", SHARED / "tflite" / "pretrainedResnet_quant.tflite"),
            ("VWW-like 96x96 (examples/build_vww.py)", tmp / "vww_96_int8.tflite"),
            ("MobileNetV2-0.35 96 QDQ", SHARED / "onnx" / "mobilenetv2_035_96_qdq.onnx")]


def schedule(result) -> str:
    """Per kernel group: layer-by-layer, or the chain's stage kinds, tile width and rings (r: rows of
    the tile's width, px: the pixels of a pixel group's ring)."""
    chains = []
    for s in result.steps:
        info = s.call.op.attrs.get("poly")
        if info:
            kinds = ",".join(k.replace("chain.", "") for k in getattr(s.kernel, "stage_kinds", []))
            plan = s.kernel.plan
            rings = [f"{plan.width[p]}px" if plan.pixel[p] else f"{plan.rows[p]}r" for p in range(plan.final)]
            chains.append(f"chain {info['stages']} stages [{kinds}] tile_w {info['tile_w']} rings [{' '.join(rings)}]")
    return "; ".join(chains) + ("; rest layer-by-layer" if chains else "") if chains else "layer-by-layer"


def exact(result, path: Path, target) -> str:
    if path.suffix != ".tflite":
        return "n/a (ONNX)"
    from tests.conftest import tflm_run
    rng = np.random.default_rng(5)
    shape = tuple(result.inputs[0].shape)
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(2):
            x = rng.integers(-128, 128, shape).astype(np.int8)
            (got,) = run_target(build_target(result, target, Path(tmp) / str(i), [x]))
            if not np.array_equal(got, tflm_run(path, [x])[0]):
                return "NO"
    return "yes (2 inputs)"


def row(label: str, build: str, fig: dict, sched: str, ok: str) -> str:
    return (f"| {label} | {build} | {fig['arena_bytes']:,} | {fig['ram_stack']} | {fig['flash_code']:,} | "
            f"{fig['flash_const']:,} | {fig['instructions']:,} | {sched} | {ok} |")


def ours(label: str, path: Path, target_name: str, bound: float, build: str) -> str:
    POLY_FUSE.MAX_LONG_OVERHEAD = bound
    target = get_target(target_name)
    result = compile_model(path, target=target_name)
    with tempfile.TemporaryDirectory() as tmp:
        fig = bench_target(build_target(result, target, Path(tmp), load_inputs(None, result.inputs, 0)))
    return row(label, build, fig, schedule(result), exact(result, path, target))


def _cli(main: Path, shim: Path) -> tuple[list[str], dict]:
    """The command and environment that run ``main``'s tinyfuse CLI (module doc)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if (main / ".venv" / "bin" / "tinyfuse").exists():
        return [str(main / ".venv" / "bin" / "tinyfuse")], env
    shim.mkdir(exist_ok=True)
    if not (shim / "tinyfuse").exists():
        (shim / "tinyfuse").symlink_to(main / "compiler")
    return [sys.executable, "-m", "tinyfuse"], {**env, "PYTHONPATH": f"{shim}{os.pathsep}{main}"}


def theirs(label: str, path: Path, target_name: str, main: Path) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        cmd, env = _cli(main, Path(tmp) / "shim")
        out = subprocess.run([*cmd, "bench", str(path), "--target", target_name, "--json"], check=True,
                             capture_output=True, text=True, env=env, cwd=tmp)
    fig = json.loads(out.stdout)
    chains = [k["name"] for k in fig["kernels"] if k["kind"] == "fused_chain"]
    return row(label, "main", fig, ("chains " + ", ".join(chains)) if chains else "layer-by-layer", "-")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="cortex-m4")
    ap.add_argument("--main", type=Path, default=None, help="another checkout whose .venv/bin/tinyfuse is the baseline")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    cmd = f"python3 benchmarks/ram_chains.py --target {args.target}" + (f" --main {args.main}" if args.main else "")
    lines = [f"Target {args.target} (qemu, `tinyfuse bench`); made by `{cmd}`.", "", HEADER]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for label, path in models(Path(tmp)):
            rows = [theirs(label, path, args.target, args.main)] if args.main else []
            rows += [ours(label, path, args.target, 0.10, "default"), ours(label, path, args.target, 1e9, "chain forced")]
            print("\n".join(rows), flush=True)
            lines += rows
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
