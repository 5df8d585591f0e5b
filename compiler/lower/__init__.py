"""Fused group (a Primitive Function) → Kernel: isl statements + jinja2 bodies → a C function.

Each kernel family registers a lowering for its anchor op in LOWERINGS; groups without an anchor
(element-wise chains) use ``elemwise``. That lowering is the portable one (``ref``, C99).

Faster variants for some targets register in VARIANTS (``@variant("arm_dsp", "qnn.conv2d")``), same
signature; each needs a target feature (FEATURES: arm_dsp → Target.dsp, arm_mve → Target.mve) and
raises :class:`Unsupported` with a reason for a group it does not handle (dtype, layout, epilogue
shape). lower_group tries the variants the target has, most capable first, and falls back to ``ref``,
logging why (logger ``tinyfuse.lower``). ``kernels="ref"`` forces the portable kernels everywhere.
"""
from __future__ import annotations

import logging

from ..codegen.templates import template
from ..errors import TinyfuseError
from ..ir import Function, Var
from .kernel import ConstPool, Epilogue, Kernel, split_group

log = logging.getLogger("tinyfuse.lower")

LOWERINGS = {}
VARIANTS: dict[str, list[tuple[str, object]]] = {}   # anchor op -> [(variant, lowering)]
FEATURES = {"arm_mve": "mve", "arm_dsp": "dsp"}      # variant -> Target flag, most capable first
KERNEL_CHOICES = ("auto", "ref", *FEATURES)


class Unsupported(Exception):
    """A kernel variant declines a group; the message says why (logged, then the next variant)."""


def lowering(*ops: str):
    def deco(fn):
        for op in ops:
            LOWERINGS[op] = fn
        return fn
    return deco


def variant(name: str, *ops: str):
    """Register a target-specific lowering of ``ops`` (same signature as a @lowering)."""
    assert name in FEATURES, name

    def deco(fn):
        for op in ops:
            VARIANTS.setdefault(op, []).append((name, fn))
            VARIANTS[op].sort(key=lambda v: list(FEATURES).index(v[0]))
        return fn
    return deco


def kernel_variants(target, kernels: str = "auto") -> tuple[str, ...]:
    """The variants lowering may use for ``target`` (a Target or None for host), best first.
    ``kernels``: auto (all the target has), ref (none) or one variant name."""
    if kernels not in KERNEL_CHOICES:
        raise TinyfuseError(f"--kernels {kernels}: choose one of {', '.join(KERNEL_CHOICES)}")
    have = tuple(v for v, flag in FEATURES.items() if target is not None and getattr(target, flag))
    if kernels in ("auto", "ref"):
        return have if kernels == "auto" else ()
    if kernels not in have:
        raise TinyfuseError(f"--kernels {kernels}: target {getattr(target, 'name', 'host')} has no "
                            f"{FEATURES[kernels]} feature")
    return (kernels,)


def lower_group(fn: Function, name: str, pool: ConstPool, target=None, kernels: str = "auto") -> Kernel:
    """Lower one fused group to a Kernel named ``name`` for ``target`` (a tinyfuse.target.Target; None
    = host). Raises TinyfuseError if no kernel exists."""
    anchor, epilogue_ops = split_group(fn)
    key = anchor.op if anchor is not None else "elemwise"
    if key not in LOWERINGS:
        raise TinyfuseError(f"node '{anchor.span}' ({anchor.op}): no C kernel for this op yet")
    if anchor is not None and anchor.op != "concatenate" and not isinstance(anchor.args[0], Var):
        raise TinyfuseError(f"node '{anchor.span}' ({anchor.op}): the data input must be a tensor")
    kernel = _try_variants(fn, anchor, epilogue_ops, pool, name, key, kernel_variants(target, kernels))
    if kernel is None:
        epi = Epilogue(fn, anchor, epilogue_ops, pool, fn.body.ty.ctype)
        kernel = LOWERINGS[key](fn, anchor, epi, pool, name)
    return _finish(kernel, fn, anchor, epilogue_ops, name)


def lower_simd_inplace(fn: Function, name: str, pool: ConstPool, target=None, kernels: str = "auto",
                       order: str = "ascending") -> Kernel | None:
    """The target's SIMD kernel for a conv group the memory plan runs in place through a pixel buffer
    (tinyfuse.memory.inplace ``pixel_buffer``: each output pixel stored over the input only after all
    of its reads, pixels in ``order``), or None: then the portable in-place kernel runs."""
    anchor, epilogue_ops = split_group(fn)
    if anchor is None or not isinstance(anchor.args[0], Var):
        return None
    kernel = _try_variants(fn, anchor, epilogue_ops, pool, name, anchor.op, kernel_variants(target, kernels),
                           order=order)
    return kernel and _finish(kernel, fn, anchor, epilogue_ops, name)


def _try_variants(fn, anchor, epilogue_ops, pool, name, key, allowed, **options) -> Kernel | None:
    """The first registered variant in ``allowed`` that takes the group (each decline is logged)."""
    for vname, lower in VARIANTS.get(key, []):
        if vname not in allowed:
            continue
        mark = pool.mark()
        try:
            kernel = lower(fn, anchor, Epilogue(fn, anchor, epilogue_ops, pool, fn.body.ty.ctype), pool, name,
                           **options)
            kernel.variant = vname
            return kernel
        except Unsupported as e:
            pool.rollback(mark)
            log.info("%s: %s kernel not used (%s); trying the next variant, then ref", name, vname, e)
    return None


def _finish(kernel: Kernel, fn: Function, anchor, epilogue_ops, name: str) -> Kernel:
    kernel.ops = kernel.ops or [c.op for c in ([anchor] if anchor is not None else []) + epilogue_ops]  # a lowering may list its own
    kernel.group = fn.attrs.get("name", name)
    kernel.code = template("expr/kernel.c.j2").render(
        name=name, group=kernel.group, ops=kernel.ops, macs=kernel.macs, params=[p.ctype for p in kernel.params],
        out_ctype=kernel.out.ctype, decls=kernel.decls, loops=kernel.loops, variant=kernel.variant,
        scratch=kernel.scratch_bytes)
    return kernel


from . import concat, conv2d, elemwise, matmul, pad, pool, qsoftmax, reduce, softmax  # noqa: E402,F401  (register the families)
from . import conv2d_arm, matmul_arm  # noqa: E402,F401  (SIMD variants)
from . import batch_matmul, horizontal, horizontal_arm, layer_norm, view  # noqa: E402,F401  (transformer ops, horizontal fusion)
