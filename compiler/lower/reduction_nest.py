"""The loop nest every portable reduction kernel shares (conv2d, matmul, batch_matmul, horizontal):
a register accumulator ``acc`` per output element, as three isl statements

    S_init  acc = init                                  over the output box
    S_mac   acc += a · b                                 over the output box x the reduction domain
    S_out   out[...] = epilogue(acc)                     over the output box (or one per store)

scheduled ``(dims..., 0 | 1 | 2, reduction dims or 0...)``: for each output element the init, the whole
reduction, then the store(s). The statement bodies come from the op's template (S_init / S_mac / S_out).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..poly import Statement
from .kernel import Kernel, flat_index


def reduction_statements(dims: tuple[str, ...], out_box: str, reduction: tuple[tuple[str, ...], str],
                         init: Callable[..., str], mac: Callable[..., str],
                         stores: list[tuple[str, str, Callable[..., str]]]) -> list[Statement]:
    """S_init, S_mac and the stores over output dims ``dims`` (isl domain ``out_box``).

    ``reduction``: (reduction dims, their isl constraints, which may use ``dims``); ``init`` /
    ``mac`` / each store body: C text of one instance from its coordinates (keyword arguments, C
    expressions). ``stores``: (statement name, extra isl constraints or "", body) per store.
    """
    rdims, rdom = reduction
    zeros = ("0",) * len(rdims)
    stmts = [Statement("S_init", dims, out_box, dims + ("0",) + zeros, init),
             Statement("S_mac", dims + rdims, f"{out_box} and {rdom}", dims + ("1",) + rdims, mac)]
    for sname, extra, body in stores:
        dom = f"{out_box} and {extra}" if extra else out_box
        stmts.append(Statement(sname, dims, dom, dims + ("2",) + zeros, body))
    return stmts


@dataclass(frozen=True)
class Reduction:
    """What ``reduction_kernel`` builds: the output loop ``dims`` over ``out_box`` (an isl set), the
    ``reduction`` (its dims, its domain), ``mac(**point)``: C of one S_mac instance, ``out_index(**point)``:
    the output index of a point, and ``macs``: the nominal multiply-accumulate count."""

    dims: tuple[str, ...]
    out_box: str
    reduction: tuple[tuple[str, ...], str]
    mac: Callable[..., str]
    out_index: Callable[..., list[str]]
    macs: int


def reduction_kernel(fn, ctx, anchor, epi, t, spec: Reduction) -> Kernel:
    """The kernel of a group whose anchor reduces into ``acc`` (type of the anchor's output, starting
    at 0 through ``t.S_init(ctype)``), then runs the group's epilogue ``epi`` and stores
    ``out[flat(anchor shape, spec.out_index(**point))]`` (``t.S_out(lines, value, dst)``); ``t``: the
    op's template module."""
    ctype = anchor.ty.ctype

    def store(**c):
        idx = spec.out_index(**c)
        lines, value = epi.code(idx)
        return t.S_out(lines, value, f"out[{flat_index(anchor.ty.shape, idx)}]")

    stmts = reduction_statements(spec.dims, spec.out_box, spec.reduction, lambda **c: t.S_init(ctype), spec.mac,
                                 [("S_out", "", store)])
    macros, loops = ctx.loops_to_c(stmts)
    return Kernel(ctx.name, [p.ty for p in fn.params], fn.body.ty, loops, [f"{ctype} acc;"], macros, macs=spec.macs)
