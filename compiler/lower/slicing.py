"""Step fission (``--max-step-instructions N``): kernels that run a slice of their outer loop.

A sliceable kernel is generated with two more parameters, ``int tf_lo, int tf_hi``: its isl loop nest
(one ``loops_to_c`` call) runs only the statement instances whose time on the split dimension
(``poly.isl_helpers.split_dimension``: the first dimension that takes more than one value, i.e. the
output pixel pair of the SIMD conv, the output row of the portable one) lies in ``[tf_lo, tf_hi)``.
The earlier time dimensions are constant, so consecutive slices run the instances in the original
order: ``<name>_run`` calls the kernel once with the whole range, ``<name>_step`` once per piece.

Only families whose loop nests keep no state across the split dimension are sliced (SLICEABLE: every
value a piece needs is in the arena or its scratch slot, written within the same outer iteration);
poly-fused chains (line buffers), reductions, softmax and recurrent kernels stay whole (one step).
"""
from __future__ import annotations

from typing import Callable

from ..ir import Function
from ..poly.isl_helpers import SLICES
from .kernel import Kernel, split_group

SLICEABLE = frozenset({"nn.conv2d", "qnn.conv2d", "nn.matmul", "qnn.matmul", "elemwise", "nn.max_pool2d",
                       "nn.avg_pool2d", "qnn.avg_pool2d", "nn.pad"})
SLICE_VARIANTS = frozenset({"ref", "arm_dsp", "arm_mve"})


def found_slice(kernel: Kernel) -> tuple[int, int] | None:
    """The slice range of ``kernel`` when it is being lowered for step fission and its body is one
    sliceable loop nest of a SLICE_VARIANTS variant, else None (called by ``lower._finish``)."""
    found = SLICES.get()
    if found is None or len(found) != 1 or found[0] is None or kernel.variant not in SLICE_VARIANTS:
        return None
    return found[0]


def lower_sliced(fn: Function, pool, lower: Callable[[], Kernel]) -> Kernel:
    """``lower()`` (a lowering of group ``fn`` into ``pool``) with step fission: a kernel of a SLICEABLE
    family whose body is one loop nest comes back with ``slice_range`` set; any other is lowered again
    as usual (its constants added by the first attempt rolled back)."""
    anchor, _ = split_group(fn)
    if fn.attrs.get("poly") or (anchor.op if anchor is not None else "elemwise") not in SLICEABLE:
        return lower()
    mark = pool.mark()
    token = SLICES.set([])
    try:
        kernel = lower()
    finally:
        SLICES.reset(token)
    if kernel.slice_range is not None:
        return kernel
    pool.rollback(mark)
    return lower()


__all__ = ["SLICEABLE", "found_slice", "lower_sliced"]
