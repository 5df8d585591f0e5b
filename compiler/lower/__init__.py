"""Fused group (a Primitive Function) → Kernel: isl statements + jinja2 bodies → a C function.

Each kernel family registers a lowering for its anchor op in LOWERINGS; groups without an anchor
(element-wise chains) use ``elemwise``.
"""
from __future__ import annotations

from ..codegen.templates import template
from ..errors import TinyfuseError
from ..ir import Function, Var
from .kernel import ConstPool, Epilogue, Kernel, split_group

LOWERINGS = {}


def lowering(*ops: str):
    def deco(fn):
        for op in ops:
            LOWERINGS[op] = fn
        return fn
    return deco


def lower_group(fn: Function, name: str, pool: ConstPool) -> Kernel:
    """Lower one fused group to a Kernel named ``name``. Raises TinyfuseError if no kernel exists."""
    anchor, epilogue_ops = split_group(fn)
    key = anchor.op if anchor is not None else "elemwise"
    if key not in LOWERINGS:
        raise TinyfuseError(f"node '{anchor.span}' ({anchor.op}): no C kernel for this op yet")
    if anchor is not None and anchor.op != "concatenate" and not isinstance(anchor.args[0], Var):
        raise TinyfuseError(f"node '{anchor.span}' ({anchor.op}): the data input must be a tensor")
    epi = Epilogue(fn, anchor, epilogue_ops, pool, fn.body.ty.ctype)
    kernel = LOWERINGS[key](fn, anchor, epi, pool, name)
    kernel.ops = [c.op for c in ([anchor] if anchor is not None else []) + epilogue_ops]
    kernel.group = fn.attrs.get("name", name)
    kernel.code = template("kernel.c.j2").render(
        name=name, group=kernel.group, ops=kernel.ops, macs=kernel.macs, params=[p.ctype for p in kernel.params],
        out_ctype=kernel.out.ctype, decls=kernel.decls, loops=kernel.loops)
    return kernel


from . import concat, conv2d, elemwise, matmul, pad, pool, qsoftmax, reduce, softmax  # noqa: E402,F401  (register the families)
