"""tinyfuse tune: measure candidate schedules under qemu, keep tuning records, train the cost model.

Knobs the compiler exposes today (and that a tuning trial sets):
  - per kernel: its variant (``ref`` or one of the target's SIMD variants: arm_dsp, arm_mve), applied
    per fused group through ``compile_model(tuning_records=...)``;
  - per model: poly_fuse on/off (the pass decides each candidate chain itself; no per-chain hook) and
    the scratch budget that bounds its line buffers / tile widths (default, x2, x1/2).
In-place choices and kernel order stay with the memory plan (memory first).

Trials (each a compile + qemu bench with exact per-kernel instruction counts), ``--trials N``:
the default schedule, all-ref, poly_fuse off (auto and ref), scratch x2 and x1/2, then random
per-kernel variant mixes (seeded). Every kernel of every trial becomes a record (JSON lines)::

    {"kind": "kernel", "key": record_key(sig, knobs), "sig": group_signature, "target": "cortex-m4",
     "knobs": {"variant": "arm_dsp"}, "variant": "arm_dsp", "instructions": 1591831, "features": {...}}
    {"kind": "model", "model_hash": ..., "target": ..., "knobs": {"poly_fuse": true, "scratch_bytes": null},
     "instructions": ..., "arena_bytes": ...}
    {"kind": "choice", "model_hash": ..., "target": ..., "knobs": {...}}     # the global knobs chosen

The choice keeps the arena: among measured global configurations whose arena is at most
``(1 + max_arena_growth)`` x the default's (default growth 0: memory first, as poly_fuse's policy),
the fewest instructions. Compiling with the records is deterministic: the last matching choice
record sets the global knobs, and each kernel gets the variant with the fewest measured
instructions for its signature (ties: the variant name). The learned model (``cost.learned``) is
trained on all kernel records and written beside the records (``<records>.model.json``).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from .cost.features import group_signature, kernel_features, record_key
from .cost.records import TuningRecords, load_records
from .errors import TinyfuseError
from .options import resolve_variants


def _default_variant(target) -> str:
    have = resolve_variants(target, "auto")
    return have[0] if have else "ref"


def measure(model, target: str, knobs: dict, variants: dict | None, default: str, timeout: float = 600,
            seed: int = 0, io_buffers: str = "arena") -> dict:
    """One trial: compile with forced knobs (and ``io_buffers``, --io-buffers), build, count instructions
    under qemu. Returns the model figures and one record per kernel (signature, knob, measured
    instructions, features)."""
    from .harness.inputs import load_inputs
    from .driver import compile_model
    from .harness.bench import bench_target
    from .harness.qemu import build_target
    recs = TuningRecords(forced_global=knobs, forced_variants=variants or {}, default_variant=default)
    t0 = time.perf_counter()
    result = compile_model(model, target=target, tuning_records=recs, io_buffers=io_buffers)
    tgt = result.options.target
    inputs = load_inputs(None, result.inputs, seed)
    with tempfile.TemporaryDirectory(prefix="tinyfuse_tune_") as tmp:
        figures = bench_target(build_target(result, tgt, tmp, inputs), timeout=timeout)
    kernels = []
    for i, (step, kf) in enumerate(zip(result.steps, figures["kernels"])):
        opt = result.memory.inplace.get(i)
        sig = group_signature(step.call.op, tgt.name, opt.rule if opt is not None else None)
        knob = {"variant": (variants or {}).get(sig, default)}
        kernels.append({"kind": "kernel", "key": record_key(sig, knob), "sig": sig, "target": tgt.name,
                        "knobs": knob, "variant": step.kernel.variant, "name": step.kernel.name,
                        "instructions": kf["instructions"], "macs": step.kernel.macs,
                        "features": kernel_features(step.call.op, step.kernel, result.options)})
    return {"kind": "model", "model_hash": result.model_hash, "model": result.name, "target": tgt.name,
            "knobs": knobs, "instructions": figures["instructions"], "arena_bytes": result.arena_bytes,
            "seconds": round(time.perf_counter() - t0, 2), "kernels": kernels}


def _measure_args(args):
    return measure(*args)


def _progress(total: int, desc: str):
    """A tqdm progress bar on stderr (tqdm is a dependency)."""
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit="trial", file=sys.stderr)


def _run_trials(model, target, specs, default, jobs, bar, io_buffers: str = "arena") -> list[dict]:
    args = [(str(model), target, k, v, default, 600, 0, io_buffers) for k, v in specs]
    out = []
    if jobs <= 1:
        for a in args:
            out.append(measure(*a))
            bar.update(1)
        return out
    with ProcessPoolExecutor(max_workers=jobs) as ex:
        for r in ex.map(_measure_args, args):
            out.append(r)
            bar.update(1)
    return out


def tune(model, target: str, trials: int = 8, records_path: str | Path | None = None, jobs: int | None = None,
         seed: int = 0, max_arena_growth: float = 0.0, progress: bool = True, io_buffers: str = "arena") -> dict:
    """Measure up to ``trials`` schedules of ``model`` on ``target`` (module doc), append the records to
    ``records_path``, train the cost model. Returns a summary (before/after instructions, time).
    ``io_buffers``: where every trial keeps the model inputs and outputs (``--io-buffers``)."""
    from .targets import get_target
    tgt = get_target(target)
    if tgt.is_host:
        raise TinyfuseError("tune measures instructions under qemu: choose a Cortex-M or RISC-V --target")
    jobs = jobs or os.cpu_count() or 1
    default = _default_variant(tgt)
    choices = tuple(dict.fromkeys([*resolve_variants(tgt, "auto"), "ref"]))
    t0 = time.perf_counter()
    structured = _structured_trials(trials, len(choices) > 1, tgt.scratch_bytes)
    bar = _progress(max(trials, len(structured) + 1), f"tune {Path(model).name}") if progress else _NoBar()
    results = _run_trials(model, tgt.name, [(k, None) for k, _ in structured if _ is None], default, jobs, bar,
                          io_buffers)
    # all-ref trials force every kernel signature seen so far to "ref"
    sigs = {r["sig"] for m in results for r in m["kernels"]}
    ref_specs = [(k, {s: "ref" for s in sigs}) for k, v in structured if v == "ref"]
    results += _run_trials(model, tgt.name, ref_specs, default, jobs, bar, io_buffers)
    # random per-kernel mixes over the global configurations measured so far
    rng = np.random.default_rng(seed)
    mixes = []
    for _ in range(max(trials - len(results) - 1, 0)):
        base = results[int(rng.integers(len(results)))]
        ksigs = sorted({r["sig"] for r in base["kernels"]})
        mixes.append((base["knobs"], {s: str(rng.choice(choices)) for s in ksigs}))
    results += _run_trials(model, tgt.name, mixes, default, jobs, bar, io_buffers)

    base = results[0]
    allowed = [r for r in results if r["arena_bytes"] <= base["arena_bytes"] * (1 + max_arena_growth)]
    best_global = min(allowed, key=lambda r: (r["instructions"], json.dumps(r["knobs"], sort_keys=True)))["knobs"]
    new = [r for m in results for r in m["kernels"]] + [{k: v for k, v in m.items() if k != "kernels"} for m in results]
    new.append({"kind": "choice", "model_hash": base["model_hash"], "model": base["model"], "target": tgt.name,
                "knobs": best_global, "max_arena_growth": max_arena_growth})
    old = load_records(records_path).records if records_path and Path(records_path).is_file() else []
    records = TuningRecords(old + new)
    # the tuned schedule: the recorded choice, each kernel's best measured variant; verified on qemu
    best = records.best_variants()
    tuned_variants = {s: v for (s, t), v in best.items() if t == tgt.name}
    final = _run_trials(model, tgt.name, [(best_global, tuned_variants)], default, 1, bar, io_buffers)[0]
    bar.close()
    new += [r for r in final["kernels"]] + [{k: v for k, v in final.items() if k != "kernels"}]
    kernel_recs = _save_and_fit(records_path, old, new)
    return {"model": base["model"], "target": tgt.name, "trials": len(results) + 1,
            "before": base["instructions"], "after": final["instructions"],
            "arena_before": base["arena_bytes"], "arena_after": final["arena_bytes"],
            "best_measured": min(r["instructions"] for r in results + [final]),
            "global": best_global, "seconds": round(time.perf_counter() - t0, 1), "jobs": jobs,
            "kernel_records": len(kernel_recs)}


def _structured_trials(trials: int, has_variants: bool, budget: int) -> list[tuple[dict, str | None]]:
    """The global configurations tried first (knobs, None) and, with SIMD variants, their all-ref twins
    (knobs, "ref"): default, poly_fuse off, twice and half the scratch budget; at most trials - 1."""
    structured = [({"poly_fuse": True, "scratch_bytes": None}, None)]
    if has_variants:
        structured.append(({"poly_fuse": True, "scratch_bytes": None}, "ref"))
    structured += [({"poly_fuse": False, "scratch_bytes": None}, None),
                   ({"poly_fuse": True, "scratch_bytes": budget * 2}, None),
                   ({"poly_fuse": True, "scratch_bytes": max(budget // 2, 256)}, None)]
    if has_variants:
        structured.append(({"poly_fuse": False, "scratch_bytes": None}, "ref"))
    return structured[:max(trials - 1, 1)]


def _save_and_fit(records_path, old: list[dict], new: list[dict]) -> list[dict]:
    """Append ``new`` to the records file (JSON lines), fit the learned cost model on every kernel
    record (old and new) and write it beside the records (``.model.json``); the kernel records."""
    from .cost.learned import fit
    if records_path:
        with open(records_path, "a") as f:
            for r in new:
                f.write(json.dumps(r, sort_keys=True) + "\n")
    kernel_recs = [r for r in old + new if r.get("kind") == "kernel" and r.get("instructions")]
    model = fit([r["features"] for r in kernel_recs], [r["instructions"] for r in kernel_recs])
    if records_path:
        Path(str(records_path) + ".model.json").write_text(model.to_json())
    return kernel_recs


class _NoBar:
    def update(self, k=1):
        pass

    def close(self):
        pass


__all__ = ["TuningRecords", "load_records", "measure", "tune"]
