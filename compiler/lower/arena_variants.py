"""The kernel the memory plan asked for: a poly-fused group (``tinyfuse.lower.fused_chain``), an
in-place conv (``tinyfuse.lower.inplace_conv``), or the group's normal kernel (``lower_group``; the
elementwise and residual-add in-place rules run that same code with aliased pointers)."""
from __future__ import annotations

from ..ir import Function
from . import group_knobs, lower_group, lower_simd_inplace
from .depthwise_rows_arm import lower_dw_rows
from .depthwise_mve import lower_dw_plane_mve
from .inplace_conv import lower_dw_plane, lower_pixel_buffer
from .sparse_conv import dw_plane_sparse


def lower_for_arena(fn: Function, name: str, pool, options, option=None):
    """Lower ``fn`` to a Kernel named ``name`` with the variants ``options`` (a CompileOptions) allows
    and its lowering knobs (``options.group_knobs``: ``lower.group_knobs``); ``option`` is the InPlace
    the plan chose, or None."""
    with group_knobs.lowering(options.group_knobs) as offers:
        kernel = _lower(fn, name, pool, options, option)
    return group_knobs.attach(kernel, offers, options.group_knobs)


def _lower(fn: Function, name: str, pool, options, option):
    if fn.attrs.get("poly"):
        from .fused_chain import lower_fused_chain
        return lower_fused_chain(fn, name, pool, options)
    if option is not None and option.rule == "dw_plane":   # sparse weights, Helium, the DSP row-buffered kernel
        return dw_plane_sparse(fn, name, pool, options.context) or lower_dw_plane_mve(fn, name, pool, options) \
            or lower_dw_rows(fn, name, pool, options) or lower_dw_plane(fn, name, pool)
    if option is not None and option.rule == "pixel_buffer":   # the target's SIMD conv, same pixel order, if any
        return lower_simd_inplace(fn, name, pool, options, option.order) \
            or lower_pixel_buffer(fn, name, pool, option.order)
    return lower_group(fn, name, pool, options)
