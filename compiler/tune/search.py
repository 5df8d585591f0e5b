"""The search loop of ``tinyfuse tune`` (Ansor / AutoTVM style): the cost model proposes, qemu measures.

Rounds, until the records hold ``trials`` measured builds of the model (a rerun resumes: builds whose
configuration key is in the records are not measured again):

1. Proposals: unmeasured configurations made of moves (``tune.space``): each family of moves at
   once (every in-place depthwise out of place, every kernel's weights int16, ...), every front build
   plus each change that paid on its own (fewer instructions or less RAM than the default: greedy
   combination, best first), the single moves (in the order the builds list them), then a measured
   build (half the time one of the front) plus one more move or family (seeded random choice) -- up
   to ``pool`` new candidates per round.
2. Each proposal is compiled (a Dask task, ``measure.compile_candidate``): its arena is exact; its
   instructions are predicted kernel by kernel -- a kernel (signature, in-place rule, variant)
   measured before counts its measured instructions, any other the learned model's prediction
   (``cost.learned``, refit on every kernel record after each round; the analytical estimate before
   there are records) -- plus the default build's measured glue (instructions outside kernels).
3. The ``topk`` proposals with the best predicted gain over the measured front at their RAM (arena
   + the default's measured stack; ``ram_limit`` drops those above it) are measured under qemu (Dask
   tasks, ``measure.measure_candidate``); each result is appended to the records as it arrives.
"""
from __future__ import annotations

import json
import random

from ..cost.features import analytical_instructions
from ..cost.learned import fit
from ..cost.records import BuildRecord, FailedRecord, KernelRecord
from .cluster import as_completed
from .space import Move, apply_moves, compatible, families


def move_dicts(moves) -> list[dict]:
    return [{"section": m.section, "key": m.key, "knobs": [list(k) for k in m.knobs], "label": m.label,
             "family": m.family} for m in moves]


def moves_from(dicts) -> list[Move]:
    return [Move(d["section"], d["key"], tuple(tuple(k) for k in d["knobs"]), d["label"], d.get("family", ""))
            for d in dicts]


class Predictor:
    """Instructions of a compiled candidate (module doc, step 2)."""

    def __init__(self, kernel_records: list[KernelRecord], glue: int):
        recs = sorted((r for r in kernel_records if r.instructions), key=lambda r: r.key)
        self.exact = {r.key: r.instructions for r in recs}
        self.model = fit([r.features for r in recs], [r.instructions for r in recs]) if len(recs) >= 2 \
            else None
        self.glue = glue

    def __call__(self, compiled: dict) -> float:
        miss = [k for k in compiled["kernels"] if k["key"] not in self.exact]
        pred = self.model.predict([k["features"] for k in miss]) if self.model is not None and miss else \
            [analytical_instructions(k["features"]) for k in miss]
        return self.glue + sum(self.exact[k["key"]] for k in compiled["kernels"] if k["key"] in self.exact) \
            + float(sum(pred))


def gain(ram: int, predicted: float, front_pts: list[BuildRecord]) -> float:
    """Predicted relative gain of a candidate over the measured front at its RAM (a new lowest-RAM point:
    1 + its relative RAM saving)."""
    at = [r.instructions for r in front_pts if r.ram <= ram]
    if not at:
        lo = min(r.ram for r in front_pts)
        return 1.0 + (lo - ram) / lo
    best = min(at)
    return (best - predicted) / best


class Search:
    """State of one search (module doc): moves, measured builds, compiled proposals."""

    def __init__(self, model: str, target: str, default: dict, seed: int, options: dict | None = None):
        self.model, self.target, self.rng = model, target, random.Random(seed)
        self.options = dict(options or {})        # the build options every candidate is compiled under
        self.moves: dict[str, Move] = {}
        self.measured: dict[str, BuildRecord] = {}   # config key -> measured build
        self.failed: set[str] = set()
        self.compiled: dict[str, dict] = {}       # config key -> compile_candidate result
        self.changes: dict[str, list[Move]] = {}  # config key -> the moves that make it
        self.add_moves(default["moves"])
        self.default_key = default["config_key"]
        self.changes[self.default_key] = []

    def add_moves(self, moves) -> None:
        for m in moves:
            self.moves.setdefault(m.ident, m)

    def proposals(self, pool: int, front_pts: list[dict]) -> list[tuple[str, dict, list[Move]]]:
        """Up to ``pool`` new (key, config, moves) candidates (module doc, step 1)."""
        from ..cost.knobs import config_key
        seen = set(self.measured) | set(self.compiled) | self.failed
        out: list = []

        def offer(moves):
            moves = list({m.ident: m for m in moves}.values())
            if not compatible(moves):
                return
            cfg = apply_moves(moves)
            key = config_key(cfg)
            if key not in seen and len(out) < pool:
                seen.add(key)
                self.changes[key] = list(moves)
                out.append((key, cfg, list(moves)))
        all_moves = list(self.moves.values())
        groups = families(all_moves)
        for fam in sorted(groups):                 # whole families first: the structural trade-offs
            offer(groups[fam])
        for base, extra in self._combinations(front_pts):
            offer(base + extra)
        for m in all_moves:
            offer([m])
        measured = sorted(self.measured.values(), key=lambda r: r.config_key)
        bases = [self.changes.get(r.config_key, []) for r in front_pts] + \
            [self.changes.get(r.config_key, []) for r in measured]
        extras = [[m] for m in all_moves] + [groups[f] for f in sorted(groups)]
        for _ in range(pool * 8):
            if len(out) >= pool or not bases:
                break
            base = bases[self.rng.randrange(len(bases))] if self.rng.random() < 0.5 else \
                bases[self.rng.randrange(len(front_pts))] if front_pts else []
            extra = extras[self.rng.randrange(len(extras))]
            offer(base + extra)
        return out

    def _combinations(self, front_pts: list[dict]) -> list[tuple[list[Move], list[Move]]]:
        """(a front build's moves, a measured change that paid on its own) pairs, the best-paying
        changes first: a change (one move or a family) paid when its build, measured against the
        default, ran fewer instructions or used less RAM. Greedy combination of what worked
        (coordinate descent from every front point) before the random walk."""
        base = self.measured.get(self.default_key)
        if base is None:
            return []
        paid = []
        for key, r in sorted(self.measured.items()):
            moves = self.changes.get(key, [])
            if moves and (r.instructions < base.instructions or r.ram < base.ram):
                paid.append((r.instructions / base.instructions, key, moves))
        paid.sort(key=lambda p: (p[0], p[1]))
        return [(self.changes.get(f.config_key, []), moves) for f in front_pts for _, _, moves in paid]


def compile_round(client, search: Search, props, safe_task) -> None:
    """Compile the proposals on the cluster (Dask tasks); keep their arena, kernels and moves."""
    from .measure import compile_candidate
    futs = {client.submit(safe_task, compile_candidate, search.model, search.target, cfg, search.options,
                          pure=False): key
            for key, cfg, _ in props}
    done = {futs[fut]: fut.result() for fut in as_completed(list(futs))}
    for key in sorted(done):                  # arrival order must not change the search (determinism)
        if "error" in done[key]:
            search.failed.add(key)
            continue
        search.compiled[key] = done[key]
        search.add_moves(done[key]["moves"])


def select(search: Search, predictor: Predictor, front_pts, topk: int, stack: int,
           ram_limit: int | None) -> list[tuple[str, float]]:
    """The ``topk`` compiled candidates with the best predicted gain (module doc, step 3); candidates
    that generate the same C as a measured build are not measured again."""
    scored = []
    same = {r.build_hash for r in search.measured.values()}
    for key, c in sorted(search.compiled.items()):
        if c.get("build_hash") in same:       # the same C as a measured build: nothing to learn
            continue
        ram = c["arena_bytes"] + stack
        if ram_limit is not None and ram > ram_limit:
            continue
        pred = predictor(c)
        scored.append((-gain(ram, pred, front_pts), key, pred))
    scored.sort()
    return [(key, pred) for _, key, pred in scored[:topk]]


def measure_round(client, search: Search, chosen, writer, bar, safe_task, timeout: float) -> list[KernelRecord]:
    """Measure the chosen candidates (Dask tasks); stream each result to ``writer`` as it arrives.
    Returns the new kernel records."""
    from .measure import measure_candidate
    futs = {}
    for key, _ in chosen:
        cfg = search.compiled.pop(key)["config"]
        labels = [m.label for m in search.changes.get(key, [])]
        futs[client.submit(safe_task, measure_candidate, search.model, search.target, cfg, labels, timeout, 0,
                           search.options, pure=False)] = key
    out, found = [], {}
    for fut in as_completed(list(futs)):
        res = fut.result()
        if "error" in res:
            search.failed.add(futs[fut])
            writer(FailedRecord(config_key=futs[fut], target=search.target, error=res["error"]).to_json())
            continue
        found[res["config_key"]] = res.pop("moves")
        kernels = res.pop("kernels")
        res["moves"] = move_dicts(search.changes.get(res["config_key"], []))
        writer(*kernels, res)
        search.measured[res["config_key"]] = BuildRecord.from_json(res)
        out += [KernelRecord.from_json(k) for k in kernels]
        bar.update(1)
    for key in sorted(found):                 # in key order, not arrival order (determinism)
        search.add_moves(found[key])
    return out


def safe_task(fn, *args):
    """Run a task; a TinyfuseError (e.g. a configuration that does not fit the board) is a result."""
    from ..errors import TinyfuseError
    try:
        return fn(*args)
    except TinyfuseError as e:
        return {"error": str(e)}


def dumps(rec: dict) -> str:
    return json.dumps(rec, sort_keys=True)


__all__ = ["Predictor", "Search", "compile_round", "gain", "measure_round", "moves_from", "safe_task", "select"]
