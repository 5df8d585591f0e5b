#!/usr/bin/env python3
"""int16x8 (16x8) evidence: whole int16 networks byte for byte against TFLite Micro over 50 inputs /
frames, and the instructions per MAC of the 16x8 DS-CNN on Cortex-M4 and Cortex-M55 with the default
kernels (the arm_dsp_s16 SMLAD kernels on Cortex-M4, the arm_mve_s16 Helium kernels on Cortex-M55, where
the strategy takes them) and with the portable int64 kernels (--kernels ref), per kernel kind; written to
benchmarks/data/int16_kernels.md.

    PYTHONPATH=.shim python3 benchmarks/int16_kernels.py [--out benchmarks/data/int16_kernels.md]
        [--tflm-models DIR]   # also TFLM's keyword_scrambled.tflite / keyword_scrambled_8bit.tflite from DIR
        [--cmsis-nn FILE]     # JSON {target: {kind: instructions per MAC}} of CMSIS-NN's s16 kernels

Models: tests/builders/tflm_int16_models.py (keyword_svdf: the architecture of TFLM's keyword benchmark
model with seeded weights, int16 and int8 SVDF state; kws_16x8: the MLPerf Tiny DS-CNN quantized 16x8
from ../shared/models/tflite/kws_ref_model_float32.tflite); tests/builders/tflm_lstm16.py (a 16x8
UNIDIRECTIONAL_SEQUENCE_LSTM, its state carried from frame to frame). Exactness: every frame's output
bytes equal TFLM's (tflite_micro, one interpreter streamed frame after frame), host build and qemu
Cortex-M4 and Cortex-M55.
Instructions: executed instructions of one inference counted by the qemu TCG plugin
(tinyfuse.harness.bench), an exact count, not cycles.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from int8_targets import _group_calls, kernel_kinds, table  # noqa: E402
from tests.builders.tflm_int16_models import keyword_svdf  # noqa: E402
from tests.builders.tflm_lstm16 import lstm16  # noqa: E402
from tests.c.test_int16_models import FRAMES, differing, kws_16x8_model, stream_against_tflm  # noqa: E402
from tinyfuse.driver import compile_model  # noqa: E402
from tinyfuse.harness.bench import bench_target  # noqa: E402
from tinyfuse.harness.qemu import build_target, missing_tools  # noqa: E402

TARGETS = ("cortex-m4", "cortex-m55")
NOTES = """Notes. `auto`: the default kernels (Cortex-M4: conv2d / depthwise / matmul .arm_dsp_s16, SMLAD;
Cortex-M55: .arm_mve_s16, Helium VMLADAVA.S16 / VMUL.S32; int32 accumulators where 32768 * sum|w| of every
channel fits int32); `ref`: the portable kernels (int64 accumulators).
\\* CMSIS-NN s16 calls: the instructions per MAC of CMSIS-NN's arm_convolve_wrapper_s16 /
arm_depthwise_conv_wrapper_s16 / arm_fully_connected_s16 on the same layer shapes (benchmarks/cmsis_nn_s16.py,
benchmarks/data/cmsis_nn_s16.json), weighted by the model's MACs of the conv, depthwise and FC layers only
(no pool, softmax, TFLM interpreter): a lower bound of TFLM + CMSIS-NN on this model. On Cortex-M55
both run Helium (MVE) s16 kernels.
TFLM's keyword_scrambled models have scrambled weights: their outputs hardly move with the input
(distinct outputs column), so they test the SVDF state path more than the classifier."""


def exactness(models: dict, tmp: Path) -> list[list]:
    """[model, target, frames, exact frames, distinct outputs, kernel kinds] per model and target."""
    rows = []
    for name, model in models.items():
        for target in ("host", "cortex-m4", "cortex-m55"):
            if target != "host" and missing_tools(target):
                continue
            got, want, kinds = stream_against_tflm(model, target, tmp / f"{name}_{target}")
            rows.append([name, target, FRAMES, FRAMES - len(differing(got, want)), len({w[0].tobytes() for w in want}),
                         ", ".join(sorted(kinds))])
    return rows


def bench(model: bytes, target: str, kernels: str, tmp: Path) -> dict:
    """bench_target's figures of ``model`` on ``target``, each kernel with its kind (conv KxK, pointwise,
    depthwise, fully connected, other)."""
    result = compile_model(model, target=target, kernels=None if kernels == "auto" else kernels)
    x = np.random.default_rng(0).normal(0, 4000, result.inputs[0].shape).clip(-32768, 32767).astype(np.int16)
    f = bench_target(build_target(result, target, tmp / f"{target}_{kernels}", [x]))
    kinds = dict(zip((id(c) for c in _group_calls(result)), kernel_kinds(result)))
    for k, step in zip(f["kernels"], result.steps):
        k["family"] = kinds.get(id(step.call), "?")
    return f


def ipm_tables(runs: dict, cmsis: dict) -> tuple[str, str]:
    rows = [[target, kernels, f["macs"], f["instructions"], f"{f['instructions_per_mac']:.2f}", f["arena_bytes"],
             f["flash_code"]] for (target, kernels), f in runs.items()]
    for target in sorted({t for t, _ in runs}):
        ipm = cmsis.get(target)
        if ipm and (target, "auto") in runs:
            f = runs[(target, "auto")]
            covered = [k for k in f["kernels"] if k["family"] in ipm]
            insns = sum(k["macs"] * ipm[k["family"]] for k in covered)
            macs = sum(k["macs"] for k in covered)
            rows.append([target, "CMSIS-NN s16 calls*", macs, int(insns), f"{insns / macs:.2f}", "-", "-"])
    whole = table(rows, ["target", "kernels", "MACs", "instructions", "instr/MAC", "arena B", "code B"])
    acc: dict = defaultdict(lambda: [0, 0, set()])
    for (target, kernels), f in runs.items():
        for k in f["kernels"]:
            a = acc[(target, k["family"], kernels)]
            a[0] += k["macs"]
            a[1] += k["instructions"] or 0
            a[2].add(k["kind"])
    rows = []
    for (target, family, kernels), (macs, insns, kinds) in sorted(acc.items()):
        ref = cmsis.get(target, {}).get(family)
        rows.append([target, family, kernels, ", ".join(sorted(kinds)), macs, insns,
                     f"{insns / macs:.2f}" if macs else "-", f"{ref:.2f}" if ref else "-"])
    return whole, table(rows, ["target", "layers", "kernels", "kernel kinds", "MACs", "instructions", "instr/MAC",
                               "CMSIS-NN s16 instr/MAC"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "data" / "int16_kernels.md"))
    ap.add_argument("--tflm-models", default=None)
    ap.add_argument("--cmsis-nn", default=None)
    args = ap.parse_args(argv)
    kws = kws_16x8_model()
    models = {"keyword_svdf (int16 state)": keyword_svdf(0), "keyword_svdf (int8 state)": keyword_svdf(0, "int8"),
              "ds_cnn_16x8": kws, "lstm_16x8 (B2 T4 I12 H16)": lstm16(2, 4, 12, 16, seed=1)}
    if args.tflm_models:
        for f in ("keyword_scrambled", "keyword_scrambled_8bit"):
            models[f"TFLM {f}.tflite"] = (Path(args.tflm_models) / f"{f}.tflite").read_bytes()
    cmsis = json.loads(Path(args.cmsis_nn).read_text()) if args.cmsis_nn else {}
    with tempfile.TemporaryDirectory(prefix="tinyfuse_int16_") as tmp:
        exact = exactness(models, Path(tmp))
        runs = {(t, k): bench(kws, t, k, Path(tmp)) for t in TARGETS if not missing_tools(t) for k in ("auto", "ref")}
    whole, per_kind = ipm_tables(runs, cmsis)
    text = "\n".join([
        "# int16x8 kernels: exactness against TFLM and instructions per MAC", "",
        f"Written by `benchmarks/int16_kernels.py{' --tflm-models DIR' if args.tflm_models else ''}"
        f"{' --cmsis-nn FILE' if args.cmsis_nn else ''}` (see its docstring).", "",
        f"## Byte-exact with TFLite Micro over {FRAMES} inputs / frames", "",
        "```", table(exact, ["model", "target", "frames", "exact", "distinct TFLM outputs", "kernels"]), "```", "",
        "## ds_cnn_16x8, one inference (executed instructions, qemu TCG plugin)", "",
        "```", whole, "```", "", "Per layer family:", "", "```", per_kind, "```", "", NOTES])
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
