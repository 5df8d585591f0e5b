"""The lowering registry: which function lowers a fused group.

LOWERINGS: the portable lowering of each anchor op (``elemwise`` for groups without an anchor),
``lower(fn, anchor, epi, pool, name) -> Kernel``; it is the ``<family>.ref`` implementation of the
family's strategy (``tinyfuse.strategy``).

IMPLEMENTATIONS: the lowering of every other implementation a strategy declares, by its name
(``@implements("conv2d.arm_dsp")``), ``lower(fn, ctx: LowerCtx) -> Kernel``. Which one runs is the
strategy's choice (``strategy.choose``: its ``accepts`` decided before any C is emitted); a lowering
that still raises :class:`Unsupported` disagrees with its strategy (logged, the next implementation
runs; tests/unit/test_strategy.py fails on it).

Both registries refuse a key registered twice. This module holds only the tables and decorators: the
families import it to register, and the package (``lower/__init__.py``) imports the families.
"""
from __future__ import annotations

LOWERINGS = {}
IMPLEMENTATIONS = {}


class Unsupported(Exception):
    """A lowering cannot build the group after all (its strategy accepted it: a disagreement)."""


def lowering(*ops: str):
    """Register the portable lowering of ``ops`` (anchor op names, or ``elemwise``)."""
    def deco(fn):
        for op in ops:
            assert op not in LOWERINGS, f"portable lowering of {op!r} registered twice"
            LOWERINGS[op] = fn
        return fn
    return deco


def implements(*names: str):
    """Register the lowering ``lower(fn, ctx)`` of the strategy implementations ``names``."""
    def deco(fn):
        for name in names:
            assert name not in IMPLEMENTATIONS, f"implementation {name!r} registered twice"
            IMPLEMENTATIONS[name] = fn
        return fn
    return deco


__all__ = ["IMPLEMENTATIONS", "LOWERINGS", "Unsupported", "implements", "lowering"]
