"""Fused group (a Primitive Function) → Kernel: isl statements + jinja2 bodies → a C function.

The tables live in ``lower/registry.py`` (LOWERINGS: the portable ``ref`` lowering per anchor op,
``elemwise`` for groups without an anchor; VARIANTS: target-specific lowerings, each needing a target
feature (``tinyfuse.options.FEATURES``: arm_dsp → Target.dsp, arm_mve → Target.mve;
``CompileOptions.variants`` is the resolved set) and raising :class:`Unsupported` with a reason for a
group it does not handle). Importing this package imports every kernel family, which registers itself
there. lower_group tries the allowed variants, most capable first, and falls back to ``ref``, logging
why (logger ``tinyfuse.lower``). ``--kernels ref`` (no variants) forces the portable kernels.
"""
from __future__ import annotations

import logging

from ..codegen.templates import template
from ..errors import TinyfuseError
from ..ir import Function, Var
from .realtime import WCET_HEADER
from ..options import FEATURES, KERNEL_CHOICES, WEIGHT_VARIANTS, CompileOptions  # noqa: F401  (re-exported)
from . import conv_transpose  # noqa: F401  (transposed convolution)
from . import batch_matmul, concat, conv2d, elemwise, horizontal, layer_norm, matmul, pad, qsoftmax  # noqa: F401
from . import reduce, softmax, view  # noqa: F401  (importing a kernel family registers its lowering)
from . import movement  # noqa: F401
from . import resize  # noqa: F401  (nn.resize2d)
from . import pool_indices  # noqa: F401  (nn.max_pool2d_indices: MaxPool's Indices)
from . import recurrent, svdf  # noqa: F401  (nn.lstm, nn.gru, qnn.lstm, nn.svdf, qnn.svdf)
from . import conv2d_arm, horizontal_arm, matmul_arm  # noqa: F401  (the SIMD variants)
from . import conv2d_fpu  # noqa: F401  (the float VFMA variants, arm_fpu)
from . import sparse_conv  # noqa: F401  (the sparse variant: int8 weights without their zeros)
from . import conv2d_mve  # noqa: F401  (arm_mve qnn.conv2d: vector requantization)
from . import pool_mve  # noqa: F401  (arm_mve qnn.avg_pool2d)
from . import pool as _pool_family  # noqa: F401  (aliased: ``pool`` is the ConstPool parameter below)
from .kernel import ConstPool, Epilogue, Kernel, split_group
from .slicing import found_slice
from .registry import LOWERINGS, VARIANTS, Unsupported, lowering, variant  # noqa: F401  (re-exported)

log = logging.getLogger("tinyfuse.lower")


def lower_group(fn: Function, name: str, pool: ConstPool, options: CompileOptions) -> Kernel:
    """Lower one fused group to a Kernel named ``name``, trying ``options.variants`` (best first) before
    the portable kernel. Raises TinyfuseError if no kernel exists."""
    anchor, epilogue_ops = split_group(fn)
    key = anchor.op if anchor is not None else "elemwise"
    if key not in LOWERINGS:
        raise TinyfuseError(f"node '{anchor.span}' ({anchor.op}): no C kernel for this op yet")
    if anchor is not None and anchor.op != "concatenate" and not isinstance(anchor.args[0], Var):
        raise TinyfuseError(f"node '{anchor.span}' ({anchor.op}): the data input must be a tensor")
    kernel = _try_variants(fn, anchor, epilogue_ops, pool, name, key, options)
    if kernel is None:
        epi = Epilogue(fn, anchor, epilogue_ops, pool, fn.body.ty.ctype)
        kernel = LOWERINGS[key](fn, anchor, epi, pool, name)
    return _finish(kernel, fn, anchor, epilogue_ops, name)


def lower_simd_inplace(fn: Function, name: str, pool: ConstPool, options: CompileOptions,
                       order: str = "ascending") -> Kernel | None:
    """The target's SIMD kernel for a conv group the memory plan runs in place through a pixel buffer
    (tinyfuse.memory.inplace ``pixel_buffer``: each output pixel stored over the input only after all
    of its reads, pixels in ``order``), or None: then the portable in-place kernel runs."""
    anchor, epilogue_ops = split_group(fn)
    if anchor is None or not isinstance(anchor.args[0], Var):
        return None
    kernel = _try_variants(fn, anchor, epilogue_ops, pool, name, anchor.op, options, order=order)
    return kernel and _finish(kernel, fn, anchor, epilogue_ops, name)


def _try_variants(fn, anchor, epilogue_ops, pool, name, key, options, **kw) -> Kernel | None:
    """The first registered variant ``options`` allows that takes the group (each decline is logged);
    a weight variant (sparse) is asked with the compilation's ``context`` (its cost decisions)."""
    for vname, lower in VARIANTS.get(key, []):
        weight = vname in WEIGHT_VARIANTS
        if not (weight or options.allows(vname)):
            continue
        mark = pool.mark()
        try:
            kernel = lower(fn, anchor, Epilogue(fn, anchor, epilogue_ops, pool, fn.body.ty.ctype), pool, name,
                           **kw, **({"context": options.context} if weight else {}))
            kernel.variant = vname
            return kernel
        except Unsupported as e:
            pool.rollback(mark)
            log.info("%s: %s kernel not used (%s); trying the next variant, then ref", name, vname, e)
    return None


def _finish(kernel: Kernel, fn: Function, anchor, epilogue_ops, name: str) -> Kernel:
    kernel.ops = kernel.ops or [c.op for c in ([anchor] if anchor is not None else []) + epilogue_ops]  # a lowering may list its own
    if "_ct(" in kernel.loops and WCET_HEADER not in kernel.headers:     # an epilogue's --wcet form
        kernel.headers = [*kernel.headers, WCET_HEADER]
    kernel.group = fn.attrs.get("name", name)
    found = found_slice(kernel)
    kernel.slice_range, kernel.slice_points = ((found.lo, found.hi), found.points) if found else (None, None)
    kernel.code = template("expr/kernel.c.j2").render(
        name=name, group=kernel.group, ops=kernel.ops, macs=kernel.macs, params=[p.ctype for p in kernel.params],
        out_ctype=kernel.out.ctype, decls=kernel.decls, loops=kernel.loops, variant=kernel.variant,
        scratch=kernel.scratch_bytes, slice=kernel.slice_range)
    return kernel

