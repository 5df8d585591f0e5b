"""Tuning records in memory: what ``tinyfuse tune`` measured (JSON lines, format in ``tinyfuse.tune``)
and the lookups ``compile_model(tuning_records=...)`` applies: the model's global knobs (poly_fuse on/off,
scratch budget) and, per kernel signature (``cost.features.group_signature``), the variant with the
fewest measured instructions. Kept apart from ``tinyfuse.tune`` (which compiles and runs trials) so
the driver does not import the tuner.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import TinyfuseError
from .features import group_signature


class TuningRecords:
    """Records in memory (module doc): lookups for the driver, plus forced choices for trials."""

    def __init__(self, records: list[dict] | None = None, forced_global: dict | None = None,
                 forced_variants: dict | None = None, default_variant: str | None = None):
        self.records = list(records or [])
        self.forced_global = forced_global
        self.forced_variants = forced_variants or {}
        self.default_variant = default_variant
        self._best: dict | None = None

    def best_variants(self) -> dict[tuple[str, str], str]:
        """(signature, target) -> the variant knob with the fewest measured instructions."""
        if self._best is None:
            cand: dict = {}
            for r in self.records:
                if r.get("kind") == "kernel" and r.get("instructions") is not None:
                    k = (r["sig"], r["target"])
                    item = (r["instructions"], r["knobs"]["variant"])
                    cand[k] = min(cand.get(k, item), item)
            self._best = {k: v[1] for k, v in cand.items()}
        return self._best

    def apply_global(self, model_hash: str, target: str, disabled, scratch_bytes):
        """(disabled passes, scratch budget) with the recorded global choice of this model applied."""
        knobs = self.forced_global
        if knobs is None:
            for r in self.records:
                if r.get("kind") == "choice" and r["model_hash"] == model_hash and r["target"] == target:
                    knobs = r["knobs"]
        if knobs is None:
            return disabled, scratch_bytes
        disabled = tuple(d for d in disabled if d != "poly_fuse") + (() if knobs["poly_fuse"] else ("poly_fuse",))
        return disabled, knobs.get("scratch_bytes") if knobs.get("scratch_bytes") is not None else scratch_bytes

    def chooser(self, target: str):
        """``choose(fn, option)`` for the driver: a variant name for the group, or None (default)."""
        best = self.best_variants()

        def choose(fn, option):
            sig = group_signature(fn, target, option.rule if option is not None else None)
            return self.forced_variants.get(sig) or (None if self.forced_variants else best.get((sig, target))) \
                or self.default_variant
        return choose


def load_records(src) -> TuningRecords:
    """A TuningRecords from a JSON-lines path, a list of dicts, or itself."""
    if isinstance(src, TuningRecords):
        return src
    if isinstance(src, (list, tuple)):
        return TuningRecords(list(src))
    p = Path(src)
    if not p.is_file():
        raise TinyfuseError(f"--tuning-records {src}: no such file")
    recs = []
    for i, line in enumerate(p.read_text().splitlines(), 1):
        if line.strip():
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise TinyfuseError(f"--tuning-records {src}:{i}: not JSON ({e.msg})") from None
    return TuningRecords(recs)


__all__ = ["TuningRecords", "load_records"]
