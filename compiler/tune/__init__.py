"""tinyfuse tune: search the knobs (``cost.knobs``) for the fastest build per RAM, measured under qemu on Dask.

Search space (``tune.space``): per kernel in-place or not and its variant, per poly-fused chain fuse
or not and its tile width, per graph poly_fuse, the scratch budget and the kernel order. The learned
cost model proposes, qemu measures the top-k of each round, the model is refit (``tune.search``).
Candidates are Dask tasks (``tune.cluster``: a LocalCluster of ``workers`` processes, or an existing
cluster at ``scheduler``). Records (JSON lines, appended as results arrive; a rerun skips the
configurations already measured)::

    {"kind": "kernel", "key": record_key(sig, knobs), "sig": group_signature(fn, target, rule),
     "target": "cortex-m4", "knobs": {"variant": "arm_dsp", "rule": null}, "instructions": 1591831,
     "features": {...}, ...}
    {"kind": "model", "model_hash": ..., "target": ..., "config": {...}, "config_key": ..., "changes": [...],
     "moves": [...], "instructions": ..., "arena_bytes": ..., "ram_stack": ..., "seconds": ..., "worker": ...}
    {"kind": "choice", "model_hash": ..., "target": ..., "config": {...}, "config_key": ...}
    {"kind": "failed", "config_key": ..., "error": "..."}

The choice is the fastest measured build whose arena + stack is at most the default build's (memory
first); ``compile --tuning-records F`` builds it, ``--ram-limit X`` the fastest measured that fits
(``cost.records``). The learned model is written beside the records (``<records>.model.json``); the
Pareto front (RAM vs instructions, and in RAM, flash and instructions) as ``front.md`` and
``front.svg`` into ``out_dir``.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from ..cost.knobs import normalize
from ..cost.learned import fit
from ..cost.records import BuildRecord, ChoiceRecord, KernelRecord, TuningRecords, build_options, load_records, select
from ..errors import TinyfuseError
from ..userdir import check_claim, claim, replaceable, write_atomic
from .pareto import front, front_table, plot_front
from .search import Predictor, Search, compile_round, dumps, measure_round, moves_from, safe_task
from .search import select as select_candidates


def tune(model, target: str, trials: int = 16, records_path=None, workers: int | None = None,
         scheduler: str | None = None, seed: int = 0, topk: int | None = None, pool: int | None = None,
         ram_limit: int | None = None, out_dir=None, progress: bool = True, timeout: float = 600,
         options: dict | None = None) -> dict:
    """Search until the records hold ``trials`` measured builds of ``model`` on ``target`` (module doc).
    Returns a summary: default and chosen builds, the front, candidates measured now and skipped
    (already in the records), seconds, candidates per second. TinyfuseError for a host target, a
    missing Dask, or (``ram_limit``) no measured build that fits. ``options``: compile_model's build
    options (``command.compile_options``), every candidate compiled and recorded under them."""
    from ..targets import get_target
    from .cluster import dask_client
    from .measure import compile_candidate
    tgt = get_target(target)
    if tgt.is_host:
        raise TinyfuseError("tune measures instructions under qemu: choose a Cortex-M or RISC-V --target")
    model = str(Path(model).resolve())
    old = load_records(records_path).records if records_path and Path(records_path).is_file() else []
    _check_outputs(records_path, out_dir)
    default = compile_candidate(model, tgt.name, normalize({}), options)
    search = Search(model, tgt.name, default, seed, options)
    for r in TuningRecords(old).builds(default["model_hash"], tgt.name, build_options(**(options or {}))):
        search.measured[r.config_key] = r
        search.changes[r.config_key] = moves_from(r.moves)
        search.add_moves(search.changes[r.config_key])
    skipped = len(search.measured)
    kernel_recs = [r for r in old if isinstance(r, KernelRecord)]
    writer = _writer(records_path)
    with dask_client(workers, scheduler) as (client, n), \
            _progress(trials, f"tune {default['model']}", skipped, progress) as bar:   # closed on Ctrl-C too
        t0 = time.perf_counter()                # the search, without starting the cluster
        topk = topk or 2 * n
        pool = pool or 2 * topk
        if search.default_key not in search.measured:
            search.compiled[search.default_key] = default
            kernel_recs += measure_round(client, search, [(search.default_key, 0.0)], writer, bar, safe_task,
                                         timeout)
        if search.default_key not in search.measured:
            raise TinyfuseError(f"tune: the default build of {default['model']} could not be measured")
        for _ in range(10 * trials):             # rounds whose proposals all repeat a measured build measure none
            if len(search.measured) >= trials:
                break
            base = search.measured[search.default_key]
            pts = front(list(search.measured.values()))
            props = search.proposals(pool, pts)
            compile_round(client, search, props, safe_task)
            glue = base.instructions - sum(k.instructions or 0 for k in _default_kernels(kernel_recs, default))
            chosen = select_candidates(search, Predictor(kernel_recs, glue), pts, min(topk, trials - len(search.measured)),
                            base.ram_stack, ram_limit)
            if not chosen and not props:         # the space is exhausted
                break
            if chosen:
                kernel_recs += measure_round(client, search, chosen, writer, bar, safe_task, timeout)
            bar.set_postfix(best=min(r.instructions for r in search.measured.values()),
                            front=len(front(list(search.measured.values()))))
    seconds = time.perf_counter() - t0
    return _finish(search, default, records_path, writer, out_dir, ram_limit, skipped, seconds, n, kernel_recs)


def _finish(search, default, records_path, writer, out_dir, ram_limit, skipped, seconds, n, kernel_recs) -> dict:
    builds = sorted(search.measured.values(), key=lambda r: r.config_key)
    base = search.measured[search.default_key]
    pts = front(builds)
    best = select(builds, base.ram)        # cost.records.select: compile's --tuning-records choice alike
    writer(ChoiceRecord(model_hash=base.model_hash, model=base.model, target=base.target, options=base.options,
                        config=best.config, config_key=best.config_key, changes=list(best.changes)).to_json())
    recs = sorted((r for r in kernel_recs if r.instructions), key=lambda r: r.key)
    if records_path and len(recs) >= 2:
        model = fit([r.features for r in recs], [r.instructions for r in recs])
        write_atomic(Path(str(records_path) + ".model.json"), model.to_json())
    table = front_table(pts, base)
    pts3 = front(builds, flash=True)
    table3 = front_table(pts3, base)
    if out_dir:
        claim(out_dir, OUT_FILES, "--out DIR")
        write_atomic(Path(out_dir) / "front.md", f"{table}\n\nIn RAM, model flash and instructions:\n\n{table3}\n")
        plot_front(builds, pts, Path(out_dir) / "front.svg", f"{base.model} on {base.target}")
    measured_now = len(builds) - skipped
    out = {"model": base.model, "target": base.target, "default": _brief(base), "chosen": _brief(best),
           "front": [_brief(r) for r in pts], "front_table": table,
           "front_flash": [_brief(r) for r in pts3], "front_flash_table": table3, "measured": measured_now, "skipped": skipped,
           "failed": len(search.failed), "seconds": round(seconds, 1), "workers": n,
           "candidates_per_second": round(measured_now / seconds, 3) if seconds > 0 else None,
           "gain_at_default_ram": round(1 - best.instructions / base.instructions, 4)}
    if ram_limit is not None:
        out["ram_limit"] = _brief(select(builds, ram_limit))
    return out


OUT_FILES = ("front.md", "front.svg")
MODEL_KEYS = {"weights", "bias", "mean", "scale", "alpha"}      # cost.learned.CostModel.to_json


def _check_outputs(records_path, out_dir) -> None:
    """Before the search: TinyfuseError when tune would write into a file it did not write. The records
    were read as tuning records (``load_records`` refuses a line of another kind: tune appends to them),
    ``<records>.model.json`` must be tune's learned model, and ``out_dir`` may take OUT_FILES
    (``tinyfuse.userdir``; claimed when they are written)."""
    if records_path:
        model_json = Path(str(records_path) + ".model.json")
        replaceable(model_json, lambda v: isinstance(v, dict) and MODEL_KEYS <= set(v), "--records FILE")
    if out_dir is not None:
        check_claim(out_dir, OUT_FILES, "--out DIR")


def _brief(r: BuildRecord) -> dict:
    return {k: getattr(r, k) for k in ("config_key", "arena_bytes", "ram_stack", "instructions", "flash_bytes", "changes")}


def _default_kernels(kernel_recs: list[KernelRecord], default) -> list[KernelRecord]:
    keys = {k["key"] for k in default["kernels"]}
    by = {r.key: r for r in kernel_recs if r.key in keys}
    return list(by.values())


def _writer(records_path):
    """Append records (JSON lines) to ``records_path`` as they arrive (flushed: a killed run resumes).
    An unfinished last line an earlier killed run left is cut once, here: this writer ends every line."""
    if records_path:
        _drop_unfinished(Path(records_path))

    def write(*recs):
        if records_path:
            with open(records_path, "a") as f:
                for r in recs:
                    f.write(dumps(r) + "\n")
    return write


def _drop_unfinished(path: Path) -> None:
    """Cut the unfinished last record a killed run left (no newline at the end) from a records file, so
    appending goes on from whole lines. Only a file whose first line is a tuning record is touched."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    try:
        first = json.loads(data.split(b"\n", 1)[0])
    except ValueError:
        return
    if isinstance(first, dict) and "kind" in first and b"\n" in data:
        with open(path, "r+b") as f:
            f.truncate(data.rindex(b"\n") + 1)


def _progress(total: int, desc: str, initial: int, enabled: bool):
    from tqdm import tqdm
    return tqdm(total=total, initial=initial, desc=desc, unit="cand", file=sys.stderr, disable=not enabled)


__all__ = ["TuningRecords", "load_records", "tune"]
