"""The lowering registry: which function lowers a fused group, per anchor op and kernel variant.

Each kernel family (``lower/<family>.py``) registers a lowering for its anchor op in LOWERINGS;
groups without an anchor (element-wise chains) use the key ``elemwise``. That lowering is the
portable one (``ref``, C99).

Faster variants for some targets register in VARIANTS (``@variant("arm_dsp", "qnn.conv2d")``), same
signature; each needs a target feature (``tinyfuse.options.FEATURES``: arm_dsp → Target.dsp, arm_mve →
Target.mve; ``CompileOptions.variants`` is the resolved set for one compilation) and
raises :class:`Unsupported` with a reason for a group it does not handle (dtype, layout, epilogue
shape). The weight variants (``options.WEIGHT_VARIANTS``: ``sparse``) need no target feature; they are
tried first and take a group only when the compilation's cost decision chose them
(``CompileContext.sparse_kernels``).

This module holds only the tables and decorators: the families import it to register, and the
package (``lower/__init__.py``) imports the families, so no module imports one that imports it back.
"""
from __future__ import annotations

from ..options import FEATURES, VARIANT_ANCHORS, WEIGHT_VARIANTS

LOWERINGS = {}
VARIANTS: dict[str, list[tuple[str, object]]] = {}   # anchor op -> [(variant, lowering)]


class Unsupported(Exception):
    """A kernel variant declines a group; the message says why (logged, then the next variant)."""


def lowering(*ops: str):
    """Register the portable lowering of ``ops`` (anchor op names, or ``elemwise``)."""
    def deco(fn):
        for op in ops:
            LOWERINGS[op] = fn
        return fn
    return deco


def variant(name: str, *ops: str):
    """Register a target-specific lowering of ``ops`` (same signature as a @lowering)."""
    assert name in FEATURES or name in WEIGHT_VARIANTS, name
    assert all(name in VARIANT_ANCHORS.get(op, ()) for op in ops), f"declare {ops} {name} in VARIANT_ANCHORS"

    def deco(fn):
        for op in ops:
            VARIANTS.setdefault(op, []).append((name, fn))
            VARIANTS[op].sort(key=lambda v: [*WEIGHT_VARIANTS, *FEATURES].index(v[0]))
        return fn
    return deco
