"""The tuning knobs of the one group being lowered, as its kernel family reads them.

The tuning configuration's lowering knobs of a group (``cost.knobs``: ``options.group_knobs``, set by
``CompileOptions.for_group``) reach its lowering as ``LowerCtx.knobs`` (``ctx.knob(name, default)``);
the family records what it takes with ``ctx.offer(name, values)``.
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

from ..options import KNOBS, LOWERING_KNOBS

NAMES = LOWERING_KNOBS                # every lowering knob a family may read (options.KNOBS declares each)
WEIGHTS = KNOBS["weights"].values
CHANNELS = KNOBS["channels"].values


def attach(kernel, offers: dict, knobs: dict | None):
    """Record on ``kernel`` the knobs its lowering offered (``LowerCtx.offer``) and the values it was
    lowered with."""
    kernel.tunable = dict(offers)
    kernel.knobs = {k: v for k, v in (knobs or {}).items() if k in offers}
    return kernel


__all__ = ["CHANNELS", "NAMES", "WEIGHTS", "attach"]
