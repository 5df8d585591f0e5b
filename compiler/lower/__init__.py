"""Fused group (a Primitive Function) → Kernel: isl statements + jinja2 bodies → a C function.

Which kernel a group gets is its family's strategy's choice (``tinyfuse.strategy.choose``, for the
mode the memory plan asks: normal, in place through a pixel buffer, in-place depthwise plane); the
lowering of that choice comes from ``lower/registry.py`` (IMPLEMENTATIONS by name, LOWERINGS for the
portable ``<family>.ref``). Importing this package imports every kernel family, which registers
itself there. The chosen name is ``Kernel.kind``; each implementation that declined is logged with
its reason (logger ``tinyfuse.lower``). ``--kernels ref`` (no variants) leaves the portable kernels.
"""
from __future__ import annotations

import importlib
import logging
import pkgutil

from ..codegen.templates import template
from ..errors import TinyfuseError
from ..ir import Function, Var
from ..strategy import accepted, choose
from ..codegen.emit import QELEM_HEADER
from .realtime import WCET_HEADER
from ..options import FEATURES, KERNEL_CHOICES, CompileOptions  # noqa: F401  (re-exported)
from . import group_knobs
from .kernel import ConstPool, Kernel, LowerCtx, split_group
from .slicing import found_slice
from .registry import IMPLEMENTATIONS, LOWERINGS, Unsupported, implements, lowering  # noqa: F401  (re-exported)

log = logging.getLogger("tinyfuse.lower")
# anchors whose lowering reads a constant first operand from flash (an embedding table, a gathered constant,
# the learned queries of an attention pooling)
CONSTANT_OPERANDS = ("concatenate", "gather_index", "nn.batch_matmul")

for _m in pkgutil.walk_packages(__path__, __name__ + "."):     # every kernel family registers itself
    importlib.import_module(_m.name)


def lower_for_arena(fn: Function, name: str, pool: ConstPool, options: CompileOptions, option=None,
                    slice=None) -> Kernel:
    """Lower ``fn`` to a Kernel named ``name`` under ``options`` (a CompileOptions: variants, lowering
    knobs ``options.group_knobs``) in the mode of ``option``, the memory plan's InPlace (or None):
    ``dw_plane`` and ``pixel_buffer`` have kernels of their own, every other rule runs the normal one
    with aliased pointers. A poly-fused group becomes one line-buffered kernel. ``slice``: step
    fission's request (``poly.slices.SliceRequest``) or None."""
    rule = option.rule if option is not None else None
    mode = rule if rule in ("dw_plane", "pixel_buffer") else "normal"
    ctx = LowerCtx(options, pool, name, mode, option.order if mode == "pixel_buffer" else None,
                   knobs=dict(options.group_knobs or {}), slice=slice)
    if fn.attrs.get("poly"):
        from .conv.chain import lower_fused_chain
        kernel = lower_fused_chain(fn, ctx)
    else:
        kernel = lower_group(fn, ctx)
    return group_knobs.attach(kernel, ctx.offers, ctx.knobs)


def lower_group(fn: Function, ctx: LowerCtx) -> Kernel:
    """Lower one fused group to a Kernel: the strategy's choice for ``ctx.mode``. Raises TinyfuseError
    if no kernel exists."""
    anchor, epilogue_ops = split_group(fn)
    key = anchor.op if anchor is not None else "elemwise"
    if key not in LOWERINGS:
        raise TinyfuseError(f"node '{anchor.span}' ({anchor.op}): no C kernel for this op yet")
    if anchor is not None and anchor.op not in CONSTANT_OPERANDS and not isinstance(anchor.args[0], Var):
        raise TinyfuseError(f"node '{anchor.span}' ({anchor.op}): the data input must be a tensor")
    options, name = ctx.options, ctx.name
    choice = choose(fn, options, ctx.mode, ctx.order)
    assert choice is not None, f"{name}: no implementation of {key} serves mode {ctx.mode}"
    for reason in choice.declined:
        log.info("%s: %s not used (%s)", name, *reason)
    tried = []
    for impl in [choice.impl, *accepted(fn, options, ctx.mode, ctx.order)]:
        if impl in tried:
            continue
        tried.append(impl)
        mark = ctx.pool.mark()
        try:
            kernel = (IMPLEMENTATIONS.get(impl.name) or LOWERINGS[key])(fn, ctx)
        except Unsupported as e:      # the strategy accepted what the lowering cannot build: a defect
            ctx.pool.rollback(mark)
            log.warning("%s: %s accepted the group but its lowering declined (%s); trying the next", name, impl.name, e)
            continue
        kernel.kind, kernel.declined = impl.name, list(choice.declined)
        if kernel.variant == "ref" and impl.isa not in ("ref", "skip_zero"):
            kernel.variant = impl.isa
        return kernel if kernel.code else _finish(kernel, fn, anchor, epilogue_ops, ctx)
    raise TinyfuseError(f"{name}: no kernel of {key} could be built")


def _finish(kernel: Kernel, fn: Function, anchor, epilogue_ops, ctx: LowerCtx) -> Kernel:
    name = ctx.name
    kernel.ops = kernel.ops or [c.op for c in ([anchor] if anchor is not None else []) + epilogue_ops]  # a lowering may list its own
    if "_ct(" in kernel.loops and WCET_HEADER not in kernel.headers:     # an epilogue's --wcet form
        kernel.headers = [*kernel.headers, WCET_HEADER]
    if "tf_qdiv(" in kernel.loops and QELEM_HEADER not in kernel.headers:   # TFLM's int8 DIV
        kernel.headers = [*kernel.headers, QELEM_HEADER]
    kernel.group = fn.attrs.get("name", name)
    found = found_slice(kernel, ctx.slice)
    kernel.slice_range, kernel.slice_points = ((found.lo, found.hi), found.points) if found else (None, None)
    kernel.code = template("expr/kernel.c.j2").render(
        name=name, group=kernel.group, ops=kernel.ops, macs=kernel.macs, params=[p.ctype for p in kernel.params],
        out_ctype=kernel.out.ctype, decls=kernel.decls, loops=kernel.loops, variant=kernel.variant,
        scratch=kernel.scratch_bytes, slice=kernel.slice_range)
    return kernel
