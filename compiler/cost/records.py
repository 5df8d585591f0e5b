"""Tuning records in memory: what ``tinyfuse tune`` measured (JSON lines, format in ``tinyfuse.tune``)
and the one lookup ``compile_model(tuning_records=...)`` needs: the configuration (``cost.knobs``) to
build. Kept apart from ``tinyfuse.tune`` (which compiles and measures candidates) so the driver does
not import the tuner.

Which configuration (:meth:`TuningRecords.config_for`), deterministic for given records:

- ``ram_limit`` given (bytes): among the measured builds (``kind: "model"``) of this model and target
  whose arena + measured stack fit, the fewest instructions (ties: the smaller arena, then the
  configuration key). None fits: TinyfuseError naming the smallest arena (+ stack) measured.
- else the last ``choice`` record of this model and target (``tune`` writes the fastest measured build
  at no more RAM than the default build); none: None (the defaults).

Records that do not apply (none for this model's hash and this target: tuned for another target or
another model) are not silent: one ``UserWarning`` (the CLI prints it as one ``warning:`` line) names
the records file, the model and target asked for and what the file holds, e.g. ``--tuning-records
kws.jsonl: no tuned choice for model kws (68fca8c67cee54f4) on cortex-m7; the file holds 40 builds
and a choice of kws for cortex-m4: building the default``. With ``ram_limit`` the same warning
precedes the TinyfuseError. A forced ``config`` (a tuning candidate) never warns.
"""
from __future__ import annotations

import json
import warnings
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import ClassVar

from ..errors import TinyfuseError
from .knobs import config_key, normalize


# the compile options that change a build (tinyfuse compile's, not the tuning knobs): a record measured
# under other options does not describe this build. Records written before carried none: the defaults.
BUILD_OPTION_DEFAULTS = {"kernels": "auto", "rounding": "double", "planner": "best", "disabled_passes": [],
                         "scratch_bytes": None, "weights_dtype": "float32", "io_buffers": "arena", "sparse": "auto",
                         "skip_zero_activations": False, "wcet": False, "max_step_instructions": 0}


def build_options(kernels=None, rounding="double", planner="best", disabled_passes=(), scratch_bytes=None,
                  weights_dtype="float32", io_buffers="arena", sparse=None, realtime=None, **_ignored) -> dict:
    """The build-changing compile options as a record stores them (``compile_model``'s arguments; the
    defaults filled in, poly_fuse left out of the disabled passes: it is a tuning knob)."""
    rt = realtime or {}
    return {"kernels": kernels or "auto", "rounding": rounding, "planner": planner,
            "disabled_passes": sorted(set(disabled_passes) - {"poly_fuse"}), "scratch_bytes": scratch_bytes,
            "weights_dtype": weights_dtype, "io_buffers": io_buffers, "sparse": sparse or "auto",
            "skip_zero_activations": bool(rt.get("skip_zero_activations")), "wcet": bool(rt.get("wcet")),
            "max_step_instructions": int(rt.get("max_step_instructions") or 0)}


def options_of(rec: dict) -> dict:
    """The build options a record was measured under (module doc; older records: the defaults)."""
    return {**BUILD_OPTION_DEFAULTS, **(rec.get("options") or {})}


def options_text(options: dict) -> str:
    """The options that differ from the defaults, as compile flags ("defaults" when none does)."""
    diff = [f"--{k.replace('_', '-')} {v}" for k, v in options.items() if BUILD_OPTION_DEFAULTS.get(k) != v]
    return ", ".join(diff) or "the default options"


def ram_of(rec) -> int:
    """Arena + measured stack bytes of a measured build (a BuildRecord, or its JSON dict; stack 0 when
    not measured)."""
    if isinstance(rec, BuildRecord):
        return rec.ram
    return int(rec["arena_bytes"]) + int(rec.get("ram_stack") or 0)


# ---------------------------------------------------------------------------------------------- record types
# One JSON line per record (format: tinyfuse.tune's module doc), told apart by "kind". Each type reads
# the lines earlier versions wrote: absent fields take their defaults (no options: the default build
# options; a choice with only global "knobs": that configuration), fields it does not know are kept in
# ``extra`` and written back unchanged.
@dataclass
class _Record:
    extra: dict = field(default_factory=dict, repr=False)
    KIND: ClassVar[str] = ""

    @classmethod
    def from_json(cls, d: dict):
        """The record of one JSON object (its "kind" must be ``cls.KIND``)."""
        names = {f.name for f in fields(cls)} - {"extra"}
        known = {k: v for k, v in d.items() if k in names}
        rec = cls(**cls._upgrade(d, known), extra={k: v for k, v in d.items() if k not in names and k != "kind"})
        return rec

    @classmethod
    def _upgrade(cls, d: dict, known: dict) -> dict:
        return known

    def to_json(self) -> dict:
        """The JSON object written to the records file (what ``from_json`` reads back)."""
        out = {"kind": self.KIND}
        out.update({f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"})
        return out | self.extra


def _with_config(d: dict, known: dict) -> dict:
    """``known`` with the configuration, its key and the build options of a build or choice record."""
    config = _config(d)
    return known | {"config": config, "config_key": d.get("config_key") or config_key(config), "options": options_of(d)}


@dataclass
class BuildRecord(_Record):
    """One measured build (kind "model"): instruction count, arena, measured stack and model flash
    (code + weights, bytes; None in records older than that field) of a configuration under qemu."""
    model_hash: str = ""
    target: str = ""
    config: dict = field(default_factory=dict)
    config_key: str = ""
    instructions: int = 0
    arena_bytes: int = 0
    ram_stack: int = 0
    flash_bytes: int | None = None
    model: str | None = None
    options: dict = field(default_factory=lambda: dict(BUILD_OPTION_DEFAULTS))
    changes: list = field(default_factory=list)
    moves: list = field(default_factory=list)
    build_hash: str | None = None
    KIND: ClassVar[str] = "model"

    @classmethod
    def _upgrade(cls, d: dict, known: dict) -> dict:
        return _with_config(d, known) | {"ram_stack": int(d.get("ram_stack") or 0)}

    @property
    def ram(self) -> int:
        """Arena + measured stack bytes."""
        return int(self.arena_bytes) + int(self.ram_stack or 0)


@dataclass
class ChoiceRecord(_Record):
    """The build ``tune`` chose for a model and target (kind "choice"): what ``compile
    --tuning-records`` builds without a limit."""
    model_hash: str = ""
    target: str = ""
    config: dict = field(default_factory=dict)
    config_key: str = ""
    model: str | None = None
    options: dict = field(default_factory=lambda: dict(BUILD_OPTION_DEFAULTS))
    changes: list = field(default_factory=list)
    KIND: ClassVar[str] = "choice"

    @classmethod
    def _upgrade(cls, d: dict, known: dict) -> dict:
        return _with_config(d, known)


@dataclass
class KernelRecord(_Record):
    """One kernel of a measured build (kind "kernel"): its signature, knobs, implementation (``kind`` of
    ``strategy.choose``, e.g. conv2d.arm_dsp), features (``cost.features``) and exact instructions."""
    key: str = ""
    sig: str = ""
    target: str = ""
    knobs: dict = field(default_factory=dict)
    implementation: str = ""
    features: dict = field(default_factory=dict)
    instructions: int | None = None
    KIND: ClassVar[str] = "kernel"


@dataclass
class FailedRecord(_Record):
    """A configuration that could not be compiled or measured (kind "failed")."""
    config_key: str = ""
    target: str = ""
    error: str = ""
    KIND: ClassVar[str] = "failed"


RECORD_TYPES = {t.KIND: t for t in (BuildRecord, ChoiceRecord, KernelRecord, FailedRecord)}


def parse_record(d) -> _Record:
    """The typed record of a JSON object (a record passes through); TinyfuseError for an object without a
    known "kind"."""
    if isinstance(d, _Record):
        return d
    kind = d.get("kind") if isinstance(d, dict) else None
    if kind not in RECORD_TYPES:
        raise TinyfuseError(f"not a tuning record (\"kind\" {kind!r}; tinyfuse tune writes "
                            f"{', '.join(RECORD_TYPES)})")
    return RECORD_TYPES[kind].from_json(d)


class TuningRecords:
    """Records in memory (module doc); ``config``: a forced configuration (a tuning candidate);
    ``source``: where they were read (the file named in warnings; None: given in memory)."""

    def __init__(self, records: list | None = None, config: dict | None = None, source: str | None = None):
        self.records = [parse_record(r) for r in records or []]      # typed records (JSON objects are read)
        self.config = config
        self.source = source

    def _check_options(self, model_hash: str, target: str, options: dict | None) -> None:
        """TinyfuseError when the records of this model and target were all measured under other build
        options than ``options`` (one line: what they were measured under, what this compile asks)."""
        if options is None:
            return
        mine = [r for r in self.records if isinstance(r, (BuildRecord, ChoiceRecord)) and r.model_hash == model_hash
                and r.target == target]
        if mine and not any(r.options == options for r in mine):
            src = f"--tuning-records {self.source}" if self.source else "tuning records"
            raise TinyfuseError(f"{src}: measured under {options_text(mine[-1].options)}, this compile asks for "
                                f"{options_text(options)}: its knobs would apply to other kernels; tune with the same "
                                "options (tinyfuse tune takes compile's)")

    def builds(self, model_hash: str, target: str, options: dict | None = None) -> list[BuildRecord]:
        """The measured builds of one model and target (and, given, build ``options``), one per
        configuration key."""
        out = {}
        for r in self.records:
            if isinstance(r, BuildRecord) and r.model_hash == model_hash and r.target == target \
                    and r.instructions and (options is None or r.options == options):
                out[r.config_key] = r
        return [out[k] for k in sorted(out)]

    def config_for(self, model_hash: str, target: str, ram_limit: int | None = None,
                   model: str | None = None, flash_limit: int | None = None, options: dict | None = None) -> dict | None:
        """The configuration to build (module doc); None: the defaults. ``model``: the model's name, for
        the warning when no record applies (UserWarning; TinyfuseError as well with a limit).
        ``flash_limit``: bytes of model flash (code + weights, ``flash_bytes``) the build may take; with
        no ``ram_limit`` the RAM stays at most the default build's, as for the choice. ``options``: this
        compile's build options (``build_options``): records measured under others are refused."""
        if self.config is not None:
            return normalize(self.config)
        self._check_options(model_hash, target, options)
        if ram_limit is not None or flash_limit is not None:
            what = f"--ram-limit {ram_limit}" if ram_limit is not None else f"--flash-limit {flash_limit}"
            builds = self.builds(model_hash, target, options)
            if not builds:
                self._warn_unused("no measured build", model_hash, target, model, "")
                raise TinyfuseError(f"{what}: the tuning records hold no measured build of this "
                                    f"model on {target}; run tinyfuse tune first")
            return normalize(select(builds, ram_limit, flash_limit).config)
        chosen = None
        for r in self.records:
            if isinstance(r, ChoiceRecord) and r.model_hash == model_hash and r.target == target \
                    and (options is None or r.options == options):
                chosen = r.config
        if chosen is None:
            self._warn_unused("no tuned choice", model_hash, target, model, ": building the default")
        return normalize(chosen) if chosen is not None else None

    def holdings(self) -> str:
        """What the records hold, per (model, target): e.g. "40 builds and a choice of kws for
        cortex-m4; 3 builds of vww for cortex-m7" (at most 4 groups named, then "and N more")."""
        builds, choices, names = Counter(), Counter(), {}
        for r in self.records:
            if isinstance(r, (BuildRecord, ChoiceRecord)):
                key = (str(r.model_hash), str(r.target))
                names.setdefault(key, r.model or f"model {key[0]}")
                (builds if isinstance(r, BuildRecord) else choices)[key] += 1
        if not names:
            kernels = sum(isinstance(r, KernelRecord) for r in self.records)
            return f"{kernels} kernel measurements and no build or choice" if kernels else "no build or choice"
        groups = [f"{_what(builds[k], choices[k])} of {names[k]} for {k[1]}"
                  for k in sorted(names, key=lambda k: (names[k], k[1]))]
        more = f" and {len(groups) - 4} more" if len(groups) > 4 else ""
        return "; ".join(groups[:4]) + more

    def _warn_unused(self, what: str, model_hash: str, target: str, model: str | None, then: str) -> None:
        """One UserWarning: no record of this model and target (module doc)."""
        src, holds = (f"--tuning-records {self.source}", "the file holds") if self.source else \
            (f"tuning records ({len(self.records)})", "they hold")
        asked = f"{model} ({model_hash})" if model else model_hash
        warnings.warn(f"{src}: {what} for model {asked} on {target}; {holds} {self.holdings()}{then}", stacklevel=3)


def select(builds: list, ram_limit: int | None = None, flash_limit: int | None = None) -> BuildRecord:
    """The one selection among measured builds (``model`` records of one model, target and set of build
    options), for compile's choice, ``--ram-limit``, ``--flash-limit`` and tune's choice alike: the
    fastest within ``ram_limit`` bytes of arena + measured stack (None: the default build's RAM) and
    ``flash_limit`` bytes of model flash (None: any); ties: less RAM, then no change from the default,
    then the configuration key. TinyfuseError naming the smallest RAM (or flash) reachable when none fits.
    ``builds``: BuildRecords (or their JSON objects)."""
    builds = [parse_record(r) for r in builds]
    if ram_limit is None:                 # --flash-limit alone: no more RAM than the default build
        default = [r for r in builds if r.config_key == config_key({})]
        ram_limit = default[0].ram if default else max(r.ram for r in builds)
    fits = [r for r in builds if r.ram <= ram_limit]
    if not fits:
        small = min(builds, key=lambda r: (r.ram, r.instructions))
        raise TinyfuseError(f"--ram-limit {ram_limit} B: no measured build fits; the smallest reachable is "
                            f"arena {small.arena_bytes} B + stack {small.ram_stack} B = {small.ram} B")
    if flash_limit is not None:
        known = [r for r in fits if r.flash_bytes]
        fits = [r for r in known if r.flash_bytes <= flash_limit]
        if not fits:
            least = f"{min(r.flash_bytes for r in known)} B" if known else "unknown (records without flash_bytes)"
            raise TinyfuseError(f"--flash-limit {flash_limit} B: no measured build within {ram_limit} B of RAM fits; "
                                f"the least model flash reachable there is {least}")
    return min(fits, key=lambda r: (r.instructions, r.ram, bool(r.changes), r.config_key))


def _what(builds: int, choices: int) -> str:
    """'3 builds and a choice', '1 build', 'a choice'."""
    parts = [f"{builds} build{'' if builds == 1 else 's'}"] if builds else []
    return " and ".join(parts + (["a choice"] if choices else []))


def _config(rec: dict) -> dict:
    """The configuration of a record; records of the earlier format carry ``knobs`` (global knobs only)."""
    if "config" in rec:
        return rec["config"]
    knobs = rec.get("knobs") or {}
    return {"global": {k: v for k, v in knobs.items() if k in ("poly_fuse", "scratch_bytes")}}


def apply_global(config: dict, disabled, scratch_bytes):
    """(disabled passes, scratch budget) with a configuration's global knobs applied."""
    glob = normalize(config)["global"]
    disabled = tuple(d for d in disabled if d != "poly_fuse") + (() if glob["poly_fuse"] else ("poly_fuse",))
    return disabled, glob["scratch_bytes"] if glob.get("scratch_bytes") is not None else scratch_bytes


def load_records(src) -> TuningRecords:
    """A TuningRecords from a JSON-lines path, a list of dicts, or itself."""
    if isinstance(src, TuningRecords):
        return src
    if isinstance(src, (list, tuple)):
        return TuningRecords(list(src))
    p = Path(src)
    if not p.is_file():
        raise TinyfuseError(f"{src}: no such tuning-records file")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TinyfuseError(f"{src}: not a tuning-records file (JSON lines from tinyfuse tune): {e}") from None
    lines = text.splitlines()
    recs = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            if i == len(lines) and not text.endswith("\n"):   # a run killed mid-write: resumable
                warnings.warn(f"{src}:{i}: an unfinished last record (a run stopped while writing it) is ignored")
                break
            raise TinyfuseError(f"{src}:{i}: not JSON ({e.msg}): not a tuning-records file?") from None
        try:
            recs.append(parse_record(rec))
        except TinyfuseError as e:
            raise TinyfuseError(f"{src}:{i}: {e}: not a tuning-records file?") from None
    return TuningRecords(recs, source=str(src))


__all__ = ["BUILD_OPTION_DEFAULTS", "BuildRecord", "ChoiceRecord", "FailedRecord", "KernelRecord", "RECORD_TYPES",
           "TuningRecords", "apply_global", "build_options", "load_records", "options_of", "options_text", "parse_record",
           "ram_of", "select"]
