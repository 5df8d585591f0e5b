"""In-place int8 depthwise 3x3 (stride 1 or 2, multiplier 1) for DSP cores, line-buffered
(codegen_templates/depthwise/arm_dsp_rows.c.j2): the memory plan's ``dw_plane`` in-place rule
(``tinyfuse.memory.inplace``) with a three-row int16 ring of one channel instead of a padded plane, so
the scratch shrinks (3 (W + pl + pr) int16) and the arena never grows; the MACs are two per SMLAD on
adjacent taps of one channel, and the requantize is the short exact one (``requant_arm``) where its
range conditions hold for every channel, else the group's Epilogue.

Exactness: the ring's border and out-of-image rows hold the input zero point and the start value is
bias + offset * sum(w) (QUANT.md): a padded tap adds (zp - zp) w = 0. In place: output row oh of channel
k is stored over X[oh', :, k] only after input rows up to oh + 2 - pt of channel k were copied into the
ring, and only channel k's bytes are written (the proof, ``poly.inplace_dw_rows``, checks it with isl).
"""
from __future__ import annotations

import numpy as np

from ...codegen.emit import REQUANT_ARM_HEADER
from ...codegen.templates import template
from ...ir import Function
from ...ops.conv_geom import conv_group
from ...strategy.conv import dw_rows_columns
from ..kernel import Kernel
from ..registry import Unsupported, implements
from ..requant_arm import c_store, short_requant
from ..simd import HEADERS


def _pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """int16 lane pairs (a low, b high) as int32 words."""
    lo = a.astype(np.int64) & 0xFFFF
    return (lo | ((b.astype(np.int64) & 0xFFFF) << 16)).astype(np.uint32).view(np.int32)


MAX_GROUPS = 1   # channel loops, one per shift value (each a copy of the kernel body, ~2 KB); more: e, hz per channel


def _table(w: np.ndarray, init: np.ndarray, sr) -> tuple[np.ndarray, np.ndarray, list[tuple]]:
    """Per channel, rows sorted by shift: the [K][9] int8 weights (kernel line by line; the kernel builds
    the int16 pairs W01, W12 of each line once per channel), and [K][words] int32: the start value,
    then (short requantize) m, and hz, e unless they are per-group constants; last the channel index.
    The groups [(first row, end row, e, hz)] (e, hz None: per channel)."""
    K = w.shape[0]
    cols = [init.astype(np.int32)]
    order, groups = np.arange(K), [(0, K, None, None)]
    if sr is not None:
        cols.append(sr.m)
        es = sorted(set(int(e) for e in sr.e))
        if len(es) <= MAX_GROUPS:
            order = np.argsort(sr.e, kind="stable")
            se = sr.e[order]
            groups = [(int(np.searchsorted(se, e)), int(np.searchsorted(se, e, side="right")), e,
                       int(sr.hz[order][np.searchsorted(se, e)])) for e in es]
        else:
            cols += [sr.hz, sr.e]
    cols.append(np.arange(K, dtype=np.int32))
    w8 = np.ascontiguousarray(w.reshape(K, 9).astype(np.int8)[order])
    return w8, np.stack(cols, axis=1).astype(np.int32)[order], groups


def lines_of(g, columns: bool) -> dict:
    """The template's line geometry (arm_dsp_rows.c.j2): lines are input rows, or columns."""
    C = g.C
    if columns:
        return dict(U=g.W, V=g.H, OU=g.OW, OV=g.OH, pu=g.pl, pv=g.pt, xu=C, xv=g.W * C, yu=g.K, yv=g.OW * g.K,
                    RS=g.H + g.pt + g.pb, stride=g.sh)
    return dict(U=g.H, V=g.W, OU=g.OH, OV=g.OW, pu=g.pt, pv=g.pl, xu=g.W * C, xv=C, yu=g.OW * g.K, yv=g.K,
                RS=g.W + g.pl + g.pr, stride=g.sh)


def _stores(epi, sr, L: dict, columns: bool) -> tuple[str, str, str]:
    """C of the four stores of a stride-1 quad step (accumulators a, b, c, d at positions v .. v + 3),
    of the pair's two (a, b) and of the odd last one (a)."""
    offs = [(acc, "v" if i == 0 else f"v + {i}", "v * %d" % L["yv"] if i == 0 else "(v + %d) * %d" % (i, L["yv"]))
            for i, acc in enumerate("abcd")]
    if sr is not None:
        lines = [f"o[{off}] = {c_store(sr, acc, 'mq', 'hz', 'e')};" for acc, _, off in offs]
        return "\n".join(lines), "\n".join(lines[:2]), lines[0]
    t = template("_macros.c.j2").module
    outs = [(*epi.code(["0", v, "uo", "k"] if columns else ["0", "uo", v, "k"], acc=acc), f"o[{off}]")
            for acc, v, off in offs]
    return tuple(t.stores(outs[:n]).rstrip("\n") for n in (4, 2, 1))


@implements("depthwise.dw_rows_arm_dsp")
def lower_dw_rows(fn: Function, ctx) -> Kernel:
    """The in-place kernel (the strategy checked the geometry and the isl proof: ``strategy.conv``).
    Lines run along the longer output axis where the proof allows."""
    pool, name = ctx.pool, ctx.name
    anchor, epi_ops, g = conv_group(fn)
    columns = dw_rows_columns(g)
    kernel = build_dw_rows(fn, anchor, ctx.epilogue(fn), pool, name, g, columns) if columns is not None else None
    if kernel is None:
        raise Unsupported("the ring's proof or requantize does not apply")
    kernel.ops = [c.op for c in [anchor, *epi_ops]]
    kernel.group = fn.attrs.get("name", name)
    kernel.variant = "inplace_dw_rows"
    kernel.code = template("expr/kernel.c.j2").render(
        name=name, group=kernel.group, ops=kernel.ops, macs=kernel.macs, params=[p.ctype for p in kernel.params],
        out_ctype=kernel.out.ctype, decls=kernel.decls, loops=kernel.loops, variant=kernel.variant,
        scratch=kernel.scratch_bytes)
    return kernel


def build_dw_rows(fn: Function, anchor, epi, pool, name: str, g, columns: bool) -> Kernel | None:
    """The line-buffered kernel (in place or not: it reads X only through the ring copies, each before
    the output line that could overwrite it) with lines along columns or rows; None when neither the
    short requantize nor an int32 offset fold applies. ``anchor.args[0]`` must be a param of ``fn``."""
    w = anchor.args[1].value.reshape(g.K, 3, 3).astype(np.int64)
    fold = np.int64(g.offset) * w.sum(axis=(1, 2))
    lo = np.minimum(w * -128, w * 127).sum(axis=(1, 2))
    hi = np.maximum(w * -128, w * 127).sum(axis=(1, 2))
    sr = short_requant(epi.ops, anchor, lo, hi, fold)
    wl = w.transpose(0, 2, 1) if columns else w          # [k][kernel line][tap along the line]
    if sr is None and np.any(np.abs(fold) >= 2 ** 31):
        return None
    w8, table, groups = _table(wl, sr.bias2, sr) if sr is not None else _table(wl, fold, None)
    L = {**lines_of(g, columns), "src": epi.param_names[id(anchor.args[0])]}
    outs = _stores(epi, sr, L, columns)
    tname = pool.ref(table, key=("dw_rows", id(anchor)))
    wname = pool.ref(w8, key=("dw_rows_w8", id(anchor)))
    body = template("depthwise/arm_dsp_rows.c.j2").module.body(
        L, tname, g.zp, table.shape[1], groups, outs, wname, 2 if sr is not None else 1)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, body, ["int16_t *ring = (int16_t *)scratch;"],
                  macs=g.macs, scratch_bytes=3 * L["RS"] * 2, headers=[*HEADERS, REQUANT_ARM_HEADER])


__all__ = ["build_dw_rows", "lines_of", "lower_dw_rows"]
