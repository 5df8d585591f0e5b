"""``tinyfuse compile --ram-limit X`` without tuning records: the fastest *predicted* build that fits.

Candidates: the default build, each single move of its search space (``tune.space``) and the
combinations "every in-place kernel out of place" and "every chain unfused" (the two ends of the
RAM / speed trade-off), each compiled (exact arena); with a learned model also those three with each
family of lowering knobs (every kernel's weights int16, ...: no arena change, so not one by one). RAM = arena + a stack estimate
(``STACK_ESTIMATE`` bytes: no measurement here; ``tinyfuse tune`` measures it). Instructions are
predicted per kernel by the learned cost model (``cost_model``: a ``<records>.model.json`` written by
``tinyfuse tune``) or else the analytical estimate (``cost.analytical`` through the kernel features).
The fastest prediction that fits wins (ties: smaller RAM, then the configuration key); without a
learned model the default build wins whenever it fits; none fits: TinyfuseError naming the smallest
arena reached.
"""
from __future__ import annotations

from pathlib import Path

from ..cost.features import analytical_instructions
from ..cost.knobs import normalize
from ..cost.learned import CostModel
from ..errors import TinyfuseError
from .measure import compile_candidate
from ..options import LOWERING_KNOBS as NAMES
from .space import apply_moves, families

STACK_ESTIMATE = 256       # bytes: the generated run() call's stack, a typical measured figure (KWS: 152 B)


def parse_bytes(text: str, flag: str = "--ram-limit") -> int:
    """'24K' -> 24576, '1M' -> 1048576, '8000' -> 8000 (1K = 1024). TinyfuseError (naming ``flag``)
    otherwise."""
    t = str(text).strip().upper().removesuffix("B")
    mult = {"K": 1024, "M": 1024 * 1024}.get(t[-1:], 1)
    try:
        n = int(float(t[:-1] if mult > 1 else t) * mult)
    except ValueError:
        raise TinyfuseError(f"{flag} {text}: give bytes, e.g. 24576, 24K or 1M") from None
    if n <= 0:
        raise TinyfuseError(f"{flag} {text}: must be positive")
    return n


def predicted_config(model, target: str, ram_limit: int, cost_model: str | Path | None = None,
                     options: dict | None = None) -> dict:
    """The configuration with the fewest predicted instructions whose arena + STACK_ESTIMATE fits
    ``ram_limit`` bytes (module doc). Returns {"config", "arena_bytes", "predicted", "changes"}.
    Without a learned ``cost_model`` the default build is kept whenever it fits: the analytical estimate
    misranks builds (KWS on cortex-m4: it predicts the out-of-place build faster; measured, it is 14% slower),
    so only a build that is needed to fit is chosen by it."""
    model = str(model)
    learned = CostModel.from_json(Path(cost_model).read_text()) if cost_model else None
    default = compile_candidate(model, target, normalize({}), options)
    lowering = [m for m in default["moves"] if m.knobs[0][0] in NAMES]     # no RAM change: as families only
    moves = [m for m in default["moves"] if m.knobs[0][0] not in NAMES]
    sets = [[]] + [[m] for m in moves]
    sets.append([m for m in moves if dict(m.knobs).get("inplace") is False])
    sets.append([m for m in moves if dict(m.knobs).get("fuse") is False])
    if learned is not None:           # the analytical estimate cannot rank lowering knobs: only a learned model
        sets += [ms + fam for fam in families(lowering).values() for ms in sets[:1] + sets[-2:]]
    found: dict[str, dict] = {}
    for ms in sets:
        try:
            c = default if not ms else compile_candidate(model, target, apply_moves(ms), options)
        except TinyfuseError:
            continue
        feats = [k["features"] for k in c["kernels"]]
        pred = float(sum(learned.predict(feats))) if learned is not None else \
            sum(analytical_instructions(f) for f in feats)
        found.setdefault(c["config_key"], {"config": c["config"], "arena_bytes": c["arena_bytes"],
                                           "predicted": round(pred), "changes": [m.label for m in ms]})
    fits = [c for c in found.values() if c["arena_bytes"] + STACK_ESTIMATE <= ram_limit]
    if not fits:
        small = min(c["arena_bytes"] for c in found.values())
        raise TinyfuseError(f"--ram-limit {ram_limit} B: no build fits; the smallest arena reachable is {small} B "
                            f"(+ {STACK_ESTIMATE} B estimated stack = {small + STACK_ESTIMATE} B)")
    kept = found.get(default["config_key"])
    if learned is None and kept in fits:
        return kept         # the analytical estimate does not rank builds reliably: keep the default when it fits
    return min(fits, key=lambda c: (c["predicted"], c["arena_bytes"], sorted(c["changes"])))


__all__ = ["STACK_ESTIMATE", "parse_bytes", "predicted_config"]
