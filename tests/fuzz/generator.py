"""Differential fuzzing: random valid ONNX graphs through tinyfuse (compile → C → gcc → run), compared
with onnxruntime (float: |C − ORT| ≤ 1e-4 · max|ORT|) and, for int8 QDQ graphs, with the per-kernel
real-arithmetic oracle (harness/real_oracle.py: every int8 kernel within 1 LSB of the real arithmetic of
its ops, on its own C inputs) and with the compiler's own numpy reference (``run_module(result.module,
inputs)`` must equal the C output exactly); the LSB difference to onnxruntime, which requantizes in
float, is recorded and, for graphs quantized by onnxruntime's quantizer, bounded by ``LSB_LIMIT`` unless a kernel
amplifies one input LSB beyond it (``_lsb_gain``: then recorded, not judged).
Half the int8 graphs draw their quantization by hand (tests/fuzz/handqdq.py: weight scales 2^-20..2^4
per channel, multipliers > 1, zero points at -128/127), and half the rank-4 graphs get layers of the
newer ops (tests/fuzz/newops.py: Resize, ConvTranspose, PRelu, Slice, Split, Gather, Expand, Tile).
A third of the rank-4 graphs take a shape class where the SIMD kernels branch (graph_spec.simd_shapes:
[N, C, H, 1] and [N, C, 1, W] with Kx1 / 1xK kernels up to 7, one pixel, channels 1..67).

``--target cortex-m4`` (arm_dsp int8, arm_fpu float), ``cortex-m55`` (arm_mve) compiles for the Arm
target and builds on the host through simd_host.h (the portable stand-ins of the intrinsics): the int8
output must equal the numpy reference exactly, the float output onnxruntime within 1e-4 · max|ORT|,
and the LSB rule to onnxruntime holds as on the host; the per-kernel real-arithmetic oracle traces
host builds only. The summary counts the graphs whose kernels used a SIMD variant.

A graph is a *spec*: plain data (dicts and lists, JSON-able) that ``build_model`` turns into ONNX.
Layers name their operands relative to the values built so far (``src`` 1 = the latest), and a layer
whose operands do not fit (after minimisation removed a producer, say) is skipped, so every subset
of a spec's layers is still a valid graph. That is what ``minimise`` relies on: it drops layers and
shrinks shapes and attributes while the failure stays the same kind, and the result is pasted into
``tests/fuzz/test_regressions.py``.

    python -m tests.fuzz.generator --count 2000 --seed 1000        # what `make fuzz` runs
    python -m tests.fuzz.generator --seed 17 --count 1 --show       # one spec, its model and result
    python -m tests.fuzz.generator --count 1000 --target cortex-m55  # int8 and float graphs, arm_mve/arm_fpu
"""
from __future__ import annotations

import argparse
import copy
import json
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

from tests.fuzz.graph_build import build_model, quantize_qdq, spec_model  # noqa: F401  (the fuzzer's API)
from tests.fuzz.graph_check import (FLOAT_REL, LSB_LIMIT, Outcome, check_model, check_spec,  # noqa: F401
                                    ort_outputs, output_scales)
from tests.fuzz.graph_spec import ACTS, random_spec  # noqa: F401
from tests.fuzz.twin_run import SIMD

ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- minimisation

def minimise(spec: dict, still_fails=None, budget: int = 150, target: str = "host") -> dict:
    """A smaller spec that fails with the same status: drop layers, the extra output, shrink the
    input and simplify layer attributes, while ``still_fails(spec)`` holds (default: same status
    as ``spec`` compiled for ``target``). At most ``budget`` checks."""
    if still_fails is None:
        status = check_spec(spec, target=target).status
        still_fails = lambda s: check_spec(s, target=target).status == status  # noqa: E731
    best = copy.deepcopy(spec)
    tries = 0

    def attempt(candidate) -> bool:
        nonlocal best, tries
        if tries >= budget or candidate == best:
            return False
        tries += 1
        if still_fails(candidate):
            best = candidate
            return True
        return False

    changed = True
    while changed and tries < budget:
        changed = False
        for i in reversed(range(len(best["layers"]))):
            if i < len(best["layers"]):
                c = copy.deepcopy(best)
                del c["layers"][i]
                changed |= attempt(c)
        if best.get("extra_output"):
            changed |= attempt({**copy.deepcopy(best), "extra_output": False})
        for j, d in enumerate(best["input"]):
            for smaller in sorted({1, d // 2, d - 1}):
                if 1 <= smaller < d:
                    c = copy.deepcopy(best)
                    c["input"][j] = smaller
                    if attempt(c):
                        changed = True
                        break
        for i, layer in enumerate(best["layers"]):
            for key, simple in (("act", ""), ("bn", False), ("bias", False), ("stride", [1, 1]), ("dil", [1, 1]),
                                ("pads", [0, 0, 0, 0]), ("auto_pad", "NOTSET"), ("ceil", 0), ("softmax", False),
                                ("count_include_pad", 0), ("src", 1), ("out", 1), ("features", 1), ("mult", 1)):
                if key in layer and layer[key] != simple:
                    c = copy.deepcopy(best)
                    c["layers"][i][key] = simple
                    changed |= attempt(c)
        if best.get("quant") and best.get("per_channel"):
            changed |= attempt({**copy.deepcopy(best), "per_channel": False})
    return best


# --------------------------------------------------------------------------- campaign

def quiet() -> None:
    """Silence onnxruntime's and its quantizer's advice and legalize_qdq's float-fallback warnings
    (the fallback is handled in check_model); keeps a long campaign's progress bar readable."""
    import logging

    import onnxruntime
    onnxruntime.set_default_logger_severity(3)
    logging.getLogger().setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message="legalize_qdq")


def campaign(seeds, quant=None, minimise_failures=True, progress=True, log=None, target: str = "host") -> dict:
    """Run every seed (compiled for ``target``); returns counts, the failures (with minimised specs), the
    int8 LSB histogram and, per SIMD variant, the graphs whose kernels used it (``simd``: any)."""
    counts: dict[str, int] = {}
    simd: dict[str, int] = {}
    lsb_hist: dict[int, int] = {}
    hand_hist: dict[int, int] = {}    # hand-drawn QDQ graphs' LSB to onnxruntime (recorded, not judged)
    failures = []
    quiet()
    bar = None
    if progress:
        from tqdm import tqdm          # a tinyfuse dependency
        bar = tqdm(total=len(seeds), unit="graph", dynamic_ncols=True)
    work = Path(tempfile.mkdtemp(prefix="tf_fuzz_"))
    t0 = time.time()
    try:
        for k, seed in enumerate(seeds):
            spec = random_spec(seed, quant)
            out = check_spec(spec, work, target)
            counts[out.status] = counts.get(out.status, 0) + 1
            for v in [v for v in out.variants if v in SIMD] + (["any"] if set(out.variants) & set(SIMD) else []):
                simd[v] = simd.get(v, 0) + 1
            if out.lsb is not None:
                hist = hand_hist if spec.get("qdq") == "hand" else lsb_hist
                hist[out.lsb] = hist.get(out.lsb, 0) + 1
            if out.failed:
                entry = {"seed": seed, "status": out.status, "detail": out.detail, "target": target,
                         "variants": out.variants, "spec": spec}
                if minimise_failures:
                    entry["minimised"] = minimise(spec, target=target)
                    entry["minimised_outcome"] = check_spec(entry["minimised"], target=target).detail
                failures.append(entry)
                if log:
                    with open(log, "a") as f:
                        f.write(json.dumps(entry) + "\n")
            if bar is not None:
                bar.update(1)
                bar.set_postfix({s: n for s, n in sorted(counts.items())})
    finally:
        if bar is not None:
            bar.close()
        shutil.rmtree(work, ignore_errors=True)
    return {"counts": counts, "failures": failures, "lsb_hist": dict(sorted(lsb_hist.items())),
            "lsb_hist_hand": dict(sorted(hand_hist.items())), "simd": dict(sorted(simd.items())),
            "seconds": time.time() - t0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="differential fuzzing of tinyfuse against onnxruntime")
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1000, help="first seed (seeds are consecutive)")
    ap.add_argument("--quant", choices=["mixed", "float", "int8"], default="mixed")
    ap.add_argument("--no-minimise", action="store_true")
    ap.add_argument("--log", default=str(ROOT / "build" / "fuzz" / "failures.jsonl"),
                    help="append each failure (spec, minimised spec) as a JSON line")
    ap.add_argument("--show", action="store_true", help="print each spec and its outcome")
    ap.add_argument("--target", default="host", help="compile for this target; a Cortex-M target's SIMD kernels "
                    "run on the host through simd_host.h (cortex-m4: arm_dsp/arm_fpu, cortex-m55: arm_mve)")
    a = ap.parse_args(argv)
    from tinyfuse.targets import TARGETS
    if a.target not in TARGETS:
        ap.error(f"--target {a.target}: choose one of {', '.join(TARGETS)}")
    quant = {"mixed": None, "float": False, "int8": True}[a.quant]
    seeds = list(range(a.seed, a.seed + a.count))
    quiet()
    if a.show:
        for s in seeds:
            spec = random_spec(s, quant)
            print(json.dumps(spec))
            print(check_spec(spec, target=a.target))
        return 0
    Path(a.log).parent.mkdir(parents=True, exist_ok=True)
    r = campaign(seeds, quant, minimise_failures=not a.no_minimise, log=a.log, target=a.target)
    print(f"fuzz: {a.count} graphs (seeds {a.seed}..{a.seed + a.count - 1}, target {a.target}) in {r['seconds']:.0f}s: "
          f"{dict(sorted(r['counts'].items()))}")
    print(f"graphs whose kernels used a SIMD variant: {r['simd']}")
    print(f"int8 LSB difference to onnxruntime (LSB: graphs): {r['lsb_hist']}")
    print(f"  hand-drawn QDQ (recorded, not judged): {r['lsb_hist_hand']}")
    for f in r["failures"]:
        print(f"FAIL seed {f['seed']} {f['status']}: {f['detail'][:300]}")
        if "minimised" in f:
            print(f"  minimised: {json.dumps(f['minimised'])}")
    n_fail = len(r["failures"])
    print(f"fuzz: {a.count - n_fail} passed, {n_fail} failed")
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
