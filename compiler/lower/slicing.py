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
When one unit of the split dimension is too coarse for the budget (``too_coarse``), the SIMD blocked
conv / matmul kernels (state only inside a block or in the arena scratch) and the portable conv
(accumulator inside one output point) are sliced on the linearised time of the dimensions below it
too (DEEP, ``poly.slices``); so are those whose only varying dimension orders their statements (one
output point), which depth 1 never splits.
"""
from __future__ import annotations

from typing import Callable

from ..ir import Function
from ..poly.slices import SliceRequest
from .kernel import Kernel, split_group

SLICEABLE = frozenset({"nn.conv2d", "qnn.conv2d", "nn.matmul", "qnn.matmul", "elemwise", "nn.max_pool2d",
                       "nn.avg_pool2d", "qnn.avg_pool2d", "nn.pad"})
SLICE_VARIANTS = frozenset({"ref", "arm_dsp", "arm_mve"})
# (anchor op, variant) -> (depth, time-dimension limit) of the deeper slices (poly.slices.SliceRequest):
# the SIMD blocked kernels over (pixel pair, statement position, channel pair) (conv.blocks.blocked_
# statements; groups 1 only, depthwise has its own nest), the portable conv over its output
# dimensions (n, h, w, g, m) of conv2d.lower_conv2d, whose accumulator lives inside one output point
DEEP = {("qnn.conv2d", "arm_dsp"): (3, 1 << 30), ("qnn.conv2d", "arm_mve"): (3, 1 << 30),
        ("qnn.matmul", "arm_dsp"): (3, 1 << 30), ("qnn.matmul", "arm_mve"): (3, 1 << 30),
        ("qnn.conv2d", "ref"): (2, 5), ("nn.conv2d", "ref"): (2, 5)}


def found_slice(kernel: Kernel, request: SliceRequest | None):
    """The ``poly.slices.Slice`` of ``kernel`` when it is being lowered for step fission (``request``)
    and its body is one sliceable loop nest of a SLICE_VARIANTS variant, else None (``lower._finish``)."""
    if request is None or len(request.found) != 1 or request.found[0] is None:
        return None
    return request.found[0] if kernel.variant in SLICE_VARIANTS else None


def lower_sliced(fn: Function, pool, lower: Callable[..., Kernel], too_coarse: Callable[[Kernel], bool]) -> Kernel:
    """``lower(slice)`` (a lowering of group ``fn`` into ``pool`` under a slice request, or None) with step fission: a kernel of a SLICEABLE
    family whose body is one loop nest comes back with ``slice_range`` set (sliced deeper when
    ``too_coarse(kernel)`` and the kernel is DEEP); any other is lowered again as usual (the constants
    of a discarded attempt rolled back)."""
    anchor, _ = split_group(fn)
    op = anchor.op if anchor is not None else "elemwise"
    if fn.attrs.get("poly") or op not in SLICEABLE:
        return lower(None)
    mark = pool.mark()
    kernel = _attempt(pool, lower, SliceRequest())
    if kernel is None:               # nothing to split at depth 1 (e.g. one output point): deeper, if it has it
        kernel = lower(None)
        deep = _deep(op, kernel.variant, anchor)
        if deep is None:
            return kernel
        pool.rollback(mark)
        return _attempt(pool, lower, SliceRequest(*deep)) or lower(None)
    deep = _deep(op, kernel.variant, anchor)
    if deep and too_coarse(kernel):
        pool.rollback(mark)
        kernel = _attempt(pool, lower, SliceRequest(*deep)) or _attempt(pool, lower, SliceRequest())
    return kernel or lower(None)


def _deep(op: str, variant: str, anchor) -> tuple[int, int] | None:
    """The deeper slice request (depth, limit) of a kernel family, or None (DEEP; SIMD groups 1 only)."""
    deep = DEEP.get((op, variant))
    return None if deep and variant != "ref" and anchor.attrs.get("groups", 1) != 1 else deep


def _attempt(pool, lower: Callable[..., Kernel], request: SliceRequest) -> Kernel | None:
    """The kernel lowered under ``request``, or None (nothing added to ``pool``) when it has no slice."""
    mark = pool.mark()
    kernel = lower(request)
    if kernel.slice_range is None:
        pool.rollback(mark)
        return None
    return kernel


__all__ = ["SLICEABLE", "found_slice", "lower_sliced"]
