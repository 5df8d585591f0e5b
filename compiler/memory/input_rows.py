"""Input fed by rows (``--input-rows N``): the row windows of the first kernel and its ring.

A camera or microphone delivers the rows of an NHWC input ``[1, H, W, C]`` a few at a time
(``<name>_push_rows``). The kernel reading the input (the *first kernel*: an int8 conv / depthwise
conv, or a poly-fused line-buffered chain of them whose first stage reads the input) is lowered
with a slice of its outermost loop (``poly.slices``, depth 1), so each call runs the *units* of that
loop whose input rows have arrived. A unit is an output row of the first kernel (the portable
conv), an output pixel pair (the SIMD blocked convs) or a step of a fused chain (its final rows
and the warm-up steps before them, ``poly.linebuf``); the loop's range tells which (``units``).

Unit u reads input rows ``[first[u], last[u]]`` (both clamped to ``[0, H)``): for one conv stage
the rows of its window, ``r * sh - pt`` to ``r * sh - pt + (KH - 1) * dh``; for a line-buffered chain
the window of the first-stage rows its step computes (``linebuf.rows_by_step``: each row at the
step isl scheduled it, warm-up steps included). The ring keeps rows ``[first[next unit], newest]``; its size is the largest
``last[u] - first[u] + 1`` over the units, in rows, plus 16 bytes so that the ring's base keeps the
byte alignment the input had in the arena (kernels read word-aligned pixels).

Errors (TinyfuseError, one line): a model whose input is not read by exactly one kernel of those
kinds (the message names the first consumer), more than one input, a stateful model.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import TinyfuseError
from ..ir import Call, Function, post_order
from ..ops.conv_geom import ConvGeom, conv_group

RING_ALIGN = 16


@dataclass(frozen=True)
class RowPlan:
    """What ``<name>_push_rows`` needs: ``H`` input rows of ``row_bytes`` bytes; per input row r the
    units done once rows 0..r have arrived (``done[r]``) and the first row to keep (``keep[r]``);
    the ring (``ring_rows`` rows, ``ring_bytes`` with the alignment slack); ``lo``: the first value
    of the kernel's loop (unit u runs at lo + u); ``unit``: 'row' or 'pixel pair'."""

    H: int
    row_bytes: int
    done: tuple[int, ...]
    keep: tuple[int, ...]
    ring_rows: int
    ring_bytes: int
    lo: int
    units: int
    unit: str


def first_consumer(func: Function) -> Call:
    """The one kernel call reading the model's single input; TinyfuseError otherwise."""
    if len(func.params) != 1:
        raise TinyfuseError(f"--input-rows: the model has {len(func.params)} inputs; rows feed a single NHWC image input")
    x = func.params[0]
    readers = [n for n in post_order(func.body) if isinstance(n, Call) and any(a is x for a in n.args)]
    if len(readers) != 1 or not isinstance(readers[0].op, Function):
        names = ", ".join(_name(r) for r in readers) or "none"
        raise TinyfuseError(f"--input-rows: input '{x.name}' must be read by one row-windowed kernel "
                            f"(conv, depthwise conv or a fused chain of them); read by {names}")
    return readers[0]


def _name(c: Call) -> str:
    if isinstance(c.op, Function):
        return f"'{c.op.attrs.get('name', '?')}'"
    return f"'{c.span}' ({c.op})"


def stages(call: Call) -> list[ConvGeom]:
    """The conv geometries from the input to the first kernel's output: one for a conv group, one per
    stage of a linear line-buffered chain. TinyfuseError naming the kernel otherwise."""
    fn = call.op
    poly = fn.attrs.get("poly")
    if poly:
        from ..poly.chain import Unfusable, chain_of
        try:
            chain = chain_of(fn)
        except Unfusable as e:
            raise TinyfuseError(f"--input-rows: first kernel {_name(call)}: {e}") from None
        linear = all(s.src == ("stage", i - 1) for i, s in enumerate(chain.stages) if i) and \
            chain.stages[0].src[0] == "param" and not any(s.param_reads or s.extras for s in chain.stages)
        if poly.get("ntiles", 1) != 1 or not linear:
            raise TinyfuseError(f"--input-rows: first kernel {_name(call)} is a fused chain in overlapped tiles or "
                                "with a branch; rows feed a linear line-buffered chain only")
        return [s.geo for s in chain.stages]
    got = conv_group(fn)
    if got is None or got[2].nchw_input:
        raise TinyfuseError(f"--input-rows: input is read first by {_name(call)}, not an int8 NHWC conv, "
                            "depthwise conv or fused chain of them: it has no row window")
    return [got[2]]


def _last(g: ConvGeom, r: int) -> int:
    return min(g.H - 1, r * g.sh - g.pt + (g.KH - 1) * g.dh)


def _first(g: ConvGeom, r: int) -> int:
    return max(0, r * g.sh - g.pt)


def row_windows(geos: list[ConvGeom]) -> list[tuple[int, int]]:
    """(first, last) input row read while computing output row r of the last stage, per r (module
    doc); (1, 0) when a row reads no input row (its lines were computed earlier)."""
    g0, rest = geos[0], geos[1:]
    out, done1 = [], -1
    for r in range(geos[-1].OH):
        need = r
        for g in reversed(rest):          # the last stage-1 row that final rows <= r need
            need = _last(g, need)
        if need <= done1:
            out.append((1, 0))
            continue
        out.append((_first(g0, done1 + 1), _last(g0, need)))
        done1 = need
    return out


def plan_rows(call: Call, kernel) -> RowPlan:
    """The RowPlan of the first kernel ``call`` lowered as ``kernel`` (its ``slice_range`` set)."""
    geos = stages(call)
    g0, gF = geos[0], geos[-1]
    if kernel.slice_range is None:
        raise TinyfuseError(f"--input-rows: first kernel {_name(call)} ({kernel.kind}) has no row loop to slice")
    lo, hi = kernel.slice_range
    rows = row_windows(geos)
    pixels = gF.OH * gF.OW
    chain_plan = getattr(kernel, "plan", None)
    if chain_plan is not None and len(geos) > 1 and hi - lo != gF.OH:
        unit, windows = "step", step_windows(chain_plan, lo, hi)
    elif hi - lo == gF.OH:
        unit, windows = "row", rows
    elif hi - lo == -(-pixels // 2) and len(geos) == 1:
        unit = "pixel pair"
        windows = [_span(rows[(2 * q) // gF.OW], rows[min(2 * q + 1, pixels - 1) // gF.OW]) for q in range(hi - lo)]
    else:
        raise TinyfuseError(f"--input-rows: first kernel {_name(call)} ({kernel.kind}) loops over {hi - lo} "
                            f"units, neither its {gF.OH} output rows nor its output pixel pairs")
    return _tables(g0, windows, lo, unit)


def step_windows(plan, lo: int, hi: int) -> list[tuple[int, int]]:
    """(first, last) input row read by the steps ``lo`` .. ``hi - 1`` of a line-buffered chain whose
    step loop includes its warm-up steps (``linebuf``: steps < 0 compute rows before the first final
    row): the input window of the first stage's rows computed at each step (``plan.step[0]``), (1, 0)
    for a step that computes none."""
    from ..poly.linebuf import rows_by_step
    g0 = plan.stages[0].geo
    at = rows_by_step(plan, 0)
    out = []
    for t in range(lo, hi):
        rows = at.get(t)
        out.append((_first(g0, min(rows)), _last(g0, max(rows))) if rows else (1, 0))
    return out


def _span(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return min(a[0], b[0]), max(a[1], b[1])


def _tables(g0: ConvGeom, windows: list[tuple[int, int]], lo: int, unit: str) -> RowPlan:
    H, row_bytes = g0.H, g0.W * g0.C
    last_needed = [w[1] for w in windows]
    done, keep, u = [], [], 0
    for r in range(H):
        while u < len(windows) and last_needed[u] <= r:
            u += 1
        done.append(u)
        nxt = [w[0] for w in windows[u:] if w[0] <= w[1]]
        keep.append(min(nxt[0], r + 1) if nxt else r + 1)
    ring_rows = max(1, max(b - a + 1 for a, b in windows if a <= b))
    ring_bytes = -(-(ring_rows * row_bytes + RING_ALIGN) // RING_ALIGN) * RING_ALIGN
    return RowPlan(H, row_bytes, tuple(done), tuple(keep), ring_rows, ring_bytes, lo, len(windows), unit)


__all__ = ["RowPlan", "first_consumer", "plan_rows", "row_windows", "stages", "step_windows"]
