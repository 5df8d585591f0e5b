"""The lowering of each implementation the strategies declare (``tinyfuse.strategy``), by name: the
table that ties a strategy's choice to the kernel family that builds it (as TVM's strategy functions
name their compute and schedule). Portable ``<family>.ref`` implementations are the LOWERINGS of
their anchor op; horizontal groups register in ``horizontal_arm``; poly-fused chains in
``fused_chain``. Each entry is ``lower(fn, ctx: LowerCtx) -> Kernel`` (kernel.LowerCtx)."""
from __future__ import annotations

from ..ops.conv_geom import ConvGeom, conv_group
from .conv2d_arm import conv2d_dsp, conv2d_mve
from .conv2d_fpu import conv2d_fpu, matmul_fpu
from .conv2d_mve import conv2d_mve_quads
from .depthwise_arm import depthwise_dsp
from .depthwise_mve import depthwise_mve, lower_dw_plane_mve
from .depthwise_rows_arm import lower_dw_rows
from .inplace_conv import lower_dw_plane, lower_pixel_buffer
from .kernel import Kernel, split_group
from .matmul_arm import matmul_dsp, matmul_mve
from .pool_mve import avg_pool_mve
from .registry import Unsupported, implements
from .skip_zero import lower_skip_zero
from .sparse_conv import conv2d_sparse, dw_plane_sparse, matmul_sparse


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


@implements("matmul.arm_mve")
def _fc_mve(fn, ctx) -> Kernel:
    return matmul_mve(fn, *_args(fn, ctx))


@implements("matmul.arm_dsp")
def _fc_dsp(fn, ctx) -> Kernel:
    return matmul_dsp(fn, *_args(fn, ctx))


@implements("conv2d_f32.arm_fpu")
def _conv_fpu(fn, ctx) -> Kernel:
    return conv2d_fpu(fn, *_args(fn, ctx))


@implements("matmul_f32.arm_fpu")
def _fc_fpu(fn, ctx) -> Kernel:
    return matmul_fpu(fn, *_args(fn, ctx))


@implements("avg_pool.arm_mve")
def _avg_pool_mve(fn, ctx) -> Kernel:
    return avg_pool_mve(fn, *_args(fn, ctx))


__all__: list[str] = []
