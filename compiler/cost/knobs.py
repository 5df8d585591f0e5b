"""The tuning knobs a configuration sets, and the lookups the phases that own them ask.

A *configuration* is a JSON-able dict (what ``tinyfuse tune`` measures and records)::

    {"global":  {"poly_fuse": true, "scratch_bytes": null, "order": "memory"},
     "kernels": {<group signature>: {"variant": "ref", "inplace": false, ...}},
     "chains":  {<chain signature>: {"fuse": false} | {"tile_w": 8}}}

Who reads which knob (each phase asks ``options.knobs``, a :class:`Knobs`, or None: no records):

- per graph: ``poly_fuse`` on/off and ``scratch_bytes`` (the line-buffer budget) are applied by the
  driver (disabled passes, the budget); ``order`` by ``memory.arena.plan_arena``: ``"memory"`` (the
  default: ``schedule.best_schedule``, smallest peak then fewest estimated instructions) or ``"ir"``
  (the IR's topological order, in-place options taken greedily);
- per kernel, keyed by ``group_signature(fn, target)`` (no in-place rule: the knob chooses it):
  ``variant`` (``ref`` / ``arm_dsp`` / ``arm_mve``: the driver's per-group ``--kernels``),
  ``inplace`` False (``memory.arena.kernel_graph`` offers no in-place option for the group, so it
  runs its normal, possibly SIMD, kernel out of place), and lowering knobs (``options.LOWERING_KNOBS``:
  ``weights`` int8/int16, ``channels`` per block, ``unroll``, ``body``) handed to the lowering as
  ``options.group_knobs`` (``lower.group_knobs``: a kernel family reads, and offers, those it has);
- per chain, keyed by :func:`chain_signature` of its member groups: ``fuse`` False (poly_fuse does not
  fuse that member set) and ``tile_w`` (the widest column tile poly_fuse may use; full width = line
  buffers, narrower = overlapped column tiles).

Absent knobs keep the compiler's defaults, so an empty configuration compiles the default build
byte for byte. :func:`config_key` is the configuration's stable hash (sha256 of its sorted JSON,
16 hex digits): the records' resume key.
"""
from __future__ import annotations

import hashlib
import json

from ..ir import Function
from ..options import KNOBS
from .features import group_signature

DEFAULT_GLOBAL = {k.name: k.default for k in KNOBS.values() if k.scope == "global"}
ORDERS = KNOBS["order"].values


def normalize(config: dict | None) -> dict:
    """The configuration with every section present and the global defaults filled in; empty kernel
    and chain entries dropped (so equal builds hash equal)."""
    config = config or {}
    glob = {**DEFAULT_GLOBAL, **config.get("global", {})}
    kernels = {s: dict(sorted(k.items())) for s, k in sorted(config.get("kernels", {}).items()) if k}
    chains = {s: dict(sorted(k.items())) for s, k in sorted(config.get("chains", {}).items()) if k}
    return {"global": glob, "kernels": kernels, "chains": chains}


def config_key(config: dict) -> str:
    """Stable hash of a configuration (normalized first): 16 hex digits."""
    text = json.dumps(normalize(config), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def chain_signature(member_fns, target: str) -> str:
    """Hash of a poly-fuse candidate: the sorted group signatures of its member groups (16 hex digits)."""
    sigs = sorted(group_signature(fn, target) for fn in member_fns)
    return hashlib.sha256(json.dumps(sigs).encode()).hexdigest()[:16]


def chain_members(fn: Function) -> list[Function]:
    """The member groups of a poly-fused Function (its body calls them), in post order."""
    from ..ir import Call, post_order
    return [n.op for n in post_order(fn.body) if isinstance(n, Call) and isinstance(n.op, Function)]


def group_ops(fn: Function) -> set[str]:
    """The op names a group calls."""
    from ..ir import Call, post_order
    return {n.op for n in post_order(fn.body) if isinstance(n, Call) and isinstance(n.op, str)}


class Knobs:
    """One configuration's lookups for the compiler phases (module doc). ``target``: the target name
    (part of every signature)."""

    def __init__(self, config: dict | None, target: str):
        self.config = normalize(config)
        self.target = target
        self._sigs: dict[int, tuple[Function, str]] = {}

    def signature(self, fn: Function) -> str:
        """group_signature(fn, target), cached per Function (the Function is kept: ids are not reused)."""
        hit = self._sigs.get(id(fn))
        if hit is None or hit[0] is not fn:
            hit = (fn, group_signature(fn, self.target))
            self._sigs[id(fn)] = hit
        return hit[1]

    @property
    def glob(self) -> dict:
        return self.config["global"]

    @property
    def order(self) -> str:
        return self.glob.get("order", "memory")

    def kernel(self, fn: Function) -> dict:
        """The knobs of one group (empty: defaults)."""
        if not self.config["kernels"]:
            return {}
        return self.config["kernels"].get(self.signature(fn), {})

    def allows_inplace(self, fn: Function) -> bool:
        return self.kernel(fn).get("inplace", True) is not False

    def chain(self, member_fns) -> dict:
        """The knobs of a poly-fuse candidate (its member groups), empty: defaults."""
        if not self.config["chains"]:
            return {}
        return self.config["chains"].get(chain_signature(member_fns, self.target), {})


__all__ = ["DEFAULT_GLOBAL", "Knobs", "ORDERS", "chain_members", "chain_signature", "config_key", "group_ops",
           "normalize"]
