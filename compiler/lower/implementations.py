"""The lowering of each dense-family implementation (``tinyfuse.strategy.dense``: int8 and float fully
connected, the float conv, the int8 average pool), by name; horizontal groups register in
``horizontal_arm``, the conv family in ``conv/implementations``. Each entry is ``lower(fn, ctx:
LowerCtx) -> Kernel``."""
from __future__ import annotations

from .conv.fpu import conv2d_fpu, matmul_fpu
from .kernel import Kernel, split_group
from .matmul_arm import matmul_dsp, matmul_mve
from .pool_mve import avg_pool_mve
from .registry import implements


def _args(fn, ctx):
    """(anchor, epilogue, pool, name) as the anchor lowerings take them."""
    anchor, _ = split_group(fn)
    return anchor, ctx.epilogue(fn), ctx.pool, ctx.name


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
