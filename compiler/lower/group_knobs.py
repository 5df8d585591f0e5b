"""The tuning knobs of the one group being lowered, as its kernel family reads them.

Lowerings are called without the options (``lower/registry.py`` signature); the tuning configuration's
lowering knobs of a group (``cost.knobs``: ``options.group_knobs``, set by ``CompileOptions.for_group``)
reach them through ``current()``, set by ``lower.lower_for_arena`` around one group.
An empty dict (no tuning records, or a knob a family does not have) keeps every default, so the default
build is byte for byte the build without records.

The knobs a family reads (each documented where it is read; ``tune.space`` proposes them):

- ``weights``: ``"int16"`` stores the weights of an arm_dsp SMLAD kernel (conv2d, fully connected, a
  fused chain's conv stages) already sign-extended to int16 pairs in the order SXTB16 would produce
  (``simd.widen_weights``): twice the weight flash, one 8-byte aligned load (LDRD, ``tf_ld8a``)
  instead of a load and two SXTB16 per 4 taps of a channel. Default ``"int8"``.
- ``channels``: output channels per block of the arm_dsp conv / chain kernels (2, 3 or 4; default
  ``conv.dsp.CONV_CHANNELS`` = 3, a chain's conv stages ``conv.chain.CHAIN_CHANNELS`` = 2).
- ``unroll``: groups of 4 taps a main block unrolls fully (longer reductions loop over ``body``);
  ``body``: the loop body of such a loop, in groups of 4 taps.
"""
from __future__ import annotations

import contextlib
import contextvars

from ..options import LOWERING_KNOBS

KNOBS: contextvars.ContextVar = contextvars.ContextVar("tinyfuse_group_knobs", default={})
OFFERS: contextvars.ContextVar = contextvars.ContextVar("tinyfuse_group_offers", default=None)

NAMES = LOWERING_KNOBS                # every lowering knob a family may read
WEIGHTS = ("int8", "int16")
CHANNELS = (2, 3, 4)


@contextlib.contextmanager
def lowering(knobs: dict | None):
    """Lowerings inside see ``knobs`` (a group's lowering knobs; None or {}: defaults) via ``current()``;
    yields the dict the lowering's ``offer`` calls fill (knob name -> the values its family takes)."""
    offers: dict = {}
    token, token2 = KNOBS.set(dict(knobs or {})), OFFERS.set(offers)
    try:
        yield offers
    finally:
        KNOBS.reset(token)
        OFFERS.reset(token2)


def offer(name: str, values) -> None:
    """The family lowering this group takes knob ``name`` with these ``values`` (the first: its default);
    ``tune.space`` proposes the others. Outside ``lowering`` a no-op."""
    offers = OFFERS.get()
    if offers is not None:
        offers[name] = tuple(values)


def attach(kernel, offers: dict, knobs: dict | None):
    """Record on ``kernel`` the knobs its lowering offered and the values it was lowered with."""
    kernel.tunable = dict(offers)
    kernel.knobs = {k: v for k, v in (knobs or {}).items() if k in offers}
    return kernel


def current() -> dict:
    return KNOBS.get()


def get(name: str, default=None):
    """One knob of the group being lowered, or ``default``."""
    return KNOBS.get().get(name, default)


def widened() -> bool:
    """Whether the group's SMLAD kernels read int16 pre-widened weights (``weights: int16``)."""
    return get("weights", "int8") == "int16"


__all__ = ["CHANNELS", "KNOBS", "NAMES", "OFFERS", "WEIGHTS", "attach", "current", "get", "lowering", "offer", "widened"]
