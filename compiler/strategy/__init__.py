"""Which kernel implements a fused group: one strategy per kernel family (TVM's op strategies, without
their priority levels: the order of declaration is the preference).

Each family (the anchor op of a group) declares its named implementations in order (``core.Impl``:
what it needs, the modes it serves, a cheap ``accepts`` that gives the reason when it declines).
``choose(fn, options, mode)`` is the one answer to "which kernel runs here", asked by every phase:
the lowering dispatch (``lower``), the chain stages (``lower/fused_chain``), the cost model
(``cost.analytical``), the passes that weigh a kernel (``fold_input_transpose``, ``sparse_weights``),
the memory plan (step fission), ``tune`` and ``report``. The chosen name is ``Kernel.kind``.

Families: ``conv`` (``qnn.conv2d``: normal, pixel_buffer, dw_plane and chain_stage modes), ``dense``
(``qnn.matmul``, the float conv / matmul FPU kernels, ``horizontal``, ``qnn.avg_pool2d``); every
other family has one portable implementation, ``<family>.ref``.
"""
from __future__ import annotations

from . import conv, dense  # noqa: F401  (importing a family declares its implementations)
from .core import (MODES, STRATEGIES, Choice, Group, Impl, accepted, by_name, choose, choose_isa, choose_op, family_of,
                   impls, needs_met)

__all__ = ["Choice", "Group", "Impl", "MODES", "STRATEGIES", "accepted", "by_name", "choose", "choose_isa", "choose_op", "family_of",
           "impls",
           "needs_met"]
