"""Real-time figures of ``tinyfuse bench`` (README "Real-time mode").

``--wcet``: the per-kernel instructions of many inputs (20 seeded random ones and the bench input),
from one qemu run of the batch image (``target_batch_main.c.j2``: every sample's ``<name>_run``
ends at a ``tf_bench_end`` mark) under the instruction counter with the kernel marks of
``bench._marks``. A kernel whose instructions are the same for every input is reported with that
number as its bound (``data_dependent`` false); one that varies gets ``data_dependent`` true and its
largest measured figure (an observation, not a proof). ``--max-step-instructions``: ``steps.bench_steps``.
"""
from __future__ import annotations

import numpy as np

from ..errors import TinyfuseError
from .bench import _marks, _per_kernel, plugin_path, symbols
from .inputs import random_inputs
from .qemu import TargetBuild, _check_exit, _run, build_target, qemu_command
from .steps import bench_steps

WCET_RANDOM_INPUTS = 20


def realtime_figures(build: TargetBuild, wcet: bool, inputs: list[np.ndarray], seed: int) -> dict:
    """The bench keys of the real-time options ``build.result`` was compiled with: ``wcet`` (when
    ``wcet``) and the step keys (``max_step_instructions``, ``steps``, ...) when it has ``<name>_step``."""
    result, out = build.result, {}
    if result.options is not None and result.options.max_step_instructions:
        out |= bench_steps(build)
    if wcet:
        samples = [inputs] + [random_inputs(result.inputs, seed + 1 + k) for k in range(WCET_RANDOM_INPUTS)]
        out["wcet"] = bench_wcet(result, build.target, samples, build.workdir / "wcet")
    return out


def bench_wcet(result, target, samples: list[list[np.ndarray]], workdir) -> dict:
    """{inputs, instructions_min, instructions_max, kernels: [{name, min, max, bound, data_dependent}]}
    over ``samples`` (``[k][i]``: input i of sample k), one qemu run."""
    stacked = [np.stack([np.asarray(s[i]).astype(t.dtype).reshape(t.shape) for s in samples])
               for i, t in enumerate(result.inputs)]
    build = build_target(result, target, workdir, stacked, samples=len(samples))
    labels = _marks(build, symbols(build))
    per_sample = _count_segments(build, labels)
    if len(per_sample) != len(samples):
        raise TinyfuseError(f"--wcet: {len(per_sample)} runs measured for {len(samples)} inputs")
    kernels = []
    for s in result.steps:
        values = [k.get(s.kernel.name, 0) for k, _ in per_sample]
        kernels.append({"name": s.kernel.name, "min": min(values), "max": max(values), "bound": max(values),
                        "data_dependent": min(values) != max(values)})
    totals = [t for _, t in per_sample]
    return {"inputs": len(samples), "instructions_min": min(totals), "instructions_max": max(totals),
            "kernels": kernels}


def _count_segments(build: TargetBuild, labels: dict[int, str]) -> list[tuple[dict[str, int], int]]:
    """Run the batch image under the counter: per sample (instructions per kernel, whole call)."""
    run_dir = build.workdir / "bench"
    run_dir.mkdir(parents=True, exist_ok=True)
    out = run_dir / "insns.txt"
    arg = ",".join([str(plugin_path()), f"out={out}", *(f"mark={a:#x}" for a in sorted(labels))])
    proc = _run(qemu_command(build, ("-icount", "shift=0", "-plugin", arg)), "qemu with the instruction counter",
                cwd=run_dir, timeout=1800)
    _check_exit(build, proc)
    hits = [(labels[int(p[1], 16)], int(p[2])) for p in (line.split() for line in out.read_text().splitlines())
            if p[0] == "mark"]
    runs, current = [], []
    for label, count in hits:
        current.append((label, count))
        if label == "<end>":
            per_kernel, _ = _per_kernel(current)
            start = next(c for lab, c in current if lab == "<run>")
            runs.append((per_kernel, count - start))
            current = []
    return runs


def realtime_text(f: dict) -> list[str]:
    """Lines of the text report for the real-time keys of ``f`` (none when absent)."""
    lines = []
    if "steps" in f:
        lines += ["", f"steps: {f['steps']} calls of _step, largest {f['max_step_instructions']} instructions; "
                  f"total {f['steps_total_instructions']} vs _run {f['run_instructions']} "
                  f"(overhead {f['step_overhead']:+d}); outputs equal _run's"]
    if "wcet" in f:
        w = f["wcet"]
        lines += ["", f"wcet over {w['inputs']} inputs: whole call {w['instructions_min']}..{w['instructions_max']}",
                  f"{'kernel':<40} {'min':>10} {'max':>10} {'bound':>10}  data-dependent"]
        lines += [f"{k['name']:<40} {k['min']:>10} {k['max']:>10} {k['bound']:>10}  {'yes' if k['data_dependent'] else 'no'}"
                  for k in w["kernels"]]
    return lines


__all__ = ["bench_wcet", "realtime_figures", "realtime_text"]
