"""Measured step fission (``--max-step-instructions N``, ``tinyfuse bench``): the instructions of every
``<name>_step`` call of one inference, and their total against ``<name>_run``.

The qemu test main (``target_main.c.j2`` with ``step_api``) runs the input once through ``<name>_run``
(between the bench marks) and once more through ``while (!<name>_step(arena));`` between
``tf_steps_begin`` and ``tf_steps_end``, writing the outputs of both. The instruction counter
(``bench.count_instructions``) marks the entry of ``<name>_step``: a step's figure runs from its
entry to the next one (the last to ``tf_steps_end``), so it includes the two or three instructions of
the loop that calls it. The step outputs must equal the ``<name>_run`` outputs byte for byte.
"""
from __future__ import annotations

from ..errors import TinyfuseError
from .bench import count_instructions, symbols
from .qemu import TargetBuild


def bench_steps(build: TargetBuild, timeout: float = 600) -> dict:
    """{steps, max_step_instructions, step_instructions (list), steps_total_instructions,
    run_instructions, step_overhead (total - run, instructions), steps_match_run} of ``build``.
    TinyfuseError when the model has no ``<name>_step`` or the steps' outputs differ from the run's."""
    name = build.result.name
    syms = symbols(build)
    wanted = {f"{name}_step": "step", "tf_steps_end": "end", f"{name}_run": "run", "tf_bench_end": "run_end"}
    missing = [s for s in wanted if s not in syms]
    if missing:
        raise TinyfuseError(f"bench of the steps: symbols {', '.join(missing)} missing from {build.elf} "
                            "(compile with --max-step-instructions N)")
    labels = {syms[s][0]: label for s, label in wanted.items()}
    _, log = count_instructions(build, sorted(labels), None, timeout)
    hits = [(labels[a], c) for a, c, _ in log]
    run = next(c for lab, c in hits if lab == "run")
    run_end = next(c for lab, c in hits if lab == "run_end")
    first = next(i for i, (lab, _) in enumerate(hits) if lab == "step")
    step_counts = [c for lab, c in hits[first:] if lab == "step"]
    end = next(c for lab, c in hits[first:] if lab == "end")
    per_step = [b - a for a, b in zip(step_counts, step_counts[1:] + [end])]
    bench_dir = build.workdir / "bench"
    match = all((bench_dir / f"out{i}.bin").read_bytes() == (bench_dir / f"step_out{i}.bin").read_bytes()
                for i in range(len(build.result.outputs)))
    if not match:
        raise TinyfuseError(f"model {name}: the outputs of {name}_step differ from those of {name}_run")
    total = end - step_counts[0]
    return {"steps": len(per_step), "max_step_instructions": max(per_step), "step_instructions": per_step,
            "steps_total_instructions": total, "run_instructions": run_end - run,
            "step_overhead": total - (run_end - run), "steps_match_run": match}


__all__ = ["bench_steps"]
