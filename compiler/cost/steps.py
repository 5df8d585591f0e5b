"""Step fission plan (``--max-step-instructions N``): how many pieces each sliced kernel runs in, so
that no call of ``<name>_step`` executes more than N instructions.

The analytical model (``analytical.kernel_estimate``: MACs x instructions-per-MAC of the kernel's
family and variant, plus EPILOGUE_INSNS per output element) estimates each kernel's instructions; a
kernel sliced over ``[lo, hi)`` (``tinyfuse.lower.slicing``) costs about estimate / (hi - lo) per unit
of its split dimension, and a piece gets as many units as fit in ``MARGIN`` x N (the model is an
estimate: ``tinyfuse bench`` measures every step and reports the largest). Kernels that are not sliced
run whole in one step; a unit that alone exceeds the budget still runs whole (one unit per piece):
``bench`` shows it as a step over the bound.
"""
from __future__ import annotations

from ..ir import Function
from ..ir.group import split_group
from ..ops.conv_geom import ConvGeom
from .analytical import kernel_estimate

MARGIN = 0.7          # of the budget, for the model's error and the step function's own glue


def estimate_instructions(fn: Function, kernel, target) -> float:
    """Estimated instructions of one call of ``kernel`` (the lowering of group ``fn``) on ``target``."""
    anchor, _ = split_group(fn)
    family = "conv"
    if anchor is not None and anchor.op in ("nn.conv2d", "qnn.conv2d"):
        family = ConvGeom.of_call(anchor).family
    elif anchor is not None and anchor.op in ("nn.matmul", "qnn.matmul"):
        family = "pw"
    return kernel_estimate(family, kernel.macs, 0, kernel.out.size, target, kind=kernel.kind).instructions


def per_unit(kernel, estimate: float) -> float:
    """Estimated instructions of one unit of ``kernel``'s slice: one value of its split dimension, or
    (deep slices) one of the values its linearised time takes."""
    lo, hi = kernel.slice_range
    return max(estimate, 1.0) / (len(kernel.slice_points) if kernel.slice_points else hi - lo)


def too_coarse(kernel, estimate: float, budget: int) -> bool:
    """Whether one unit of ``kernel``'s slice alone exceeds MARGIN x ``budget``."""
    return kernel.slice_range is not None and per_unit(kernel, estimate) > MARGIN * budget


def over_budget(kernel, estimate: float, budget: int) -> float:
    """The estimated instructions of ``kernel``'s smallest possible step when they exceed ``budget``
    (a kernel that is not sliced, or one unit of its slice), else 0."""
    smallest = estimate if kernel.slice_range is None else per_unit(kernel, estimate)
    return smallest if smallest > budget else 0.0


def pieces(kernel, estimate: float, budget: int) -> list[tuple[int, int]]:
    """The [tf_lo, tf_hi) ranges ``kernel`` runs in, one per step; [] for a kernel that is not sliced
    (one step, whole). Deep slices: each piece holds the same number of used values."""
    if kernel.slice_range is None:
        return []
    lo, hi = kernel.slice_range
    units = max(1, int(MARGIN * budget // per_unit(kernel, estimate)))
    if kernel.slice_points:
        starts = kernel.slice_points[::units]
        return list(zip(starts, starts[1:] + [hi]))
    return [(a, min(a + units, hi)) for a in range(lo, hi, units)]


__all__ = ["MARGIN", "estimate_instructions", "over_budget", "per_unit", "pieces", "too_coarse"]
