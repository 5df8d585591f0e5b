"""The lowering of each conv-family implementation (``tinyfuse.strategy.conv``), by name: the table
that ties the strategy's choice to the module that builds it (as TVM's strategy functions name their
compute and schedule). The portable ``conv2d.ref`` is the LOWERINGS entry of ``ref``. Each entry is
``lower(fn, ctx: LowerCtx) -> Kernel``."""
from __future__ import annotations

from ...ops.conv_geom import ConvGeom, conv_group
from ..kernel import Kernel, split_group
from ..matmul_arm import matmul_dsp, matmul_mve  # noqa: F401
from ..registry import Unsupported, implements
from .depthwise_dsp import depthwise_dsp
from .depthwise_mve import depthwise_mve, lower_dw_plane_mve
from .depthwise_rows import lower_dw_rows
from .dsp import conv2d_dsp
from .inplace import lower_dw_plane, lower_pixel_buffer
from .mve import conv2d_mve, conv2d_mve_quads
from .skip_zero import lower_skip_zero
from .sparse import conv2d_sparse, dw_plane_sparse, matmul_sparse


def _args(fn, ctx):
    """(anchor, epilogue, pool, name) as the anchor lowerings take them."""
    anchor, _ = split_group(fn)
    return anchor, ctx.epilogue(fn), ctx.pool, ctx.name


def _some(kernel: Kernel | None, why: str) -> Kernel:
    if kernel is None:
        raise Unsupported(why)
    return kernel


@implements("conv2d.skip_zero_dsp", "matmul.skip_zero_dsp")
def _skip_zero_dsp(fn, ctx) -> Kernel:
    return _some(lower_skip_zero(fn, ctx.name, ctx.pool, True, ctx.order), "skip-zero kernel declined")


@implements("conv2d.skip_zero", "matmul.skip_zero")
def _skip_zero(fn, ctx) -> Kernel:
    return _some(lower_skip_zero(fn, ctx.name, ctx.pool, False, ctx.order), "skip-zero kernel declined")


@implements("conv2d.sparse_pairs", "conv2d.sparse")
def _conv_sparse(fn, ctx) -> Kernel:
    return conv2d_sparse(fn, *_args(fn, ctx), order=ctx.order, context=ctx.options.context)


@implements("matmul.sparse_pairs", "matmul.sparse")
def _fc_sparse(fn, ctx) -> Kernel:
    return matmul_sparse(fn, *_args(fn, ctx), context=ctx.options.context)


@implements("conv2d.arm_mve_quads")
def _conv_mve_quads(fn, ctx) -> Kernel:
    anchor, epi, pool, name = _args(fn, ctx)
    return _some(conv2d_mve_quads(fn, anchor, epi, pool, name, ConvGeom.of_call(anchor), ctx.order),
                 "Helium quad kernel declined")


@implements("conv2d.arm_mve")
def _conv_mve(fn, ctx) -> Kernel:
    return conv2d_mve(fn, *_args(fn, ctx), order=ctx.order)


@implements("depthwise.arm_mve")
def _dw_mve(fn, ctx) -> Kernel:
    anchor, epi, pool, name = _args(fn, ctx)
    return _some(depthwise_mve(fn, anchor, epi, pool, name, ConvGeom.of_call(anchor), ctx.order),
                 "Helium depthwise declined")


@implements("conv2d.arm_dsp")
def _conv_dsp(fn, ctx) -> Kernel:
    return conv2d_dsp(fn, *_args(fn, ctx), order=ctx.order)


@implements("depthwise.arm_dsp")
def _dw_dsp(fn, ctx) -> Kernel:
    anchor, epi, pool, name = _args(fn, ctx)
    return depthwise_dsp(fn, anchor, epi, pool, name, ConvGeom.of_call(anchor), ctx.order)


@implements("conv2d.pixel_buffer")
def _pixel_buffer(fn, ctx) -> Kernel:
    return lower_pixel_buffer(fn, ctx.name, ctx.pool, ctx.order)


@implements("depthwise.dw_plane_sparse")
def _dw_plane_sparse(fn, ctx) -> Kernel:
    return _some(dw_plane_sparse(fn, ctx.name, ctx.pool, ctx.options.context), "sparse dw_plane declined")


@implements("depthwise.dw_plane_arm_mve")
def _dw_plane_mve(fn, ctx) -> Kernel:
    return _some(lower_dw_plane_mve(fn, ctx.name, ctx.pool, ctx.options), "Helium dw_plane declined")


@implements("depthwise.dw_rows_arm_dsp")
def _dw_rows(fn, ctx) -> Kernel:
    return _some(lower_dw_rows(fn, ctx.name, ctx.pool, ctx.options), "DSP row kernel declined")


@implements("depthwise.dw_plane")
def _dw_plane(fn, ctx) -> Kernel:
    assert conv_group(fn) is not None, "dw_plane: an int8 batch-1 NHWC depthwise group"
    return lower_dw_plane(fn, ctx.name, ctx.pool)


__all__: list[str] = []
