"""Producer-consumer fusion of conv stages with rolling line buffers and overlapped column tiles
(ISLPY.md §3b, §4, ex5b_overlap, ex5c_linebuf), all in isl.

A chain is a list of :class:`Stage` in topological order; the last one is the *final* stage, whose
output is the fused kernel's output. Every other stage is read by exactly one later stage, either
as its conv input or as a same-index epilogue operand (a residual add of a shortcut conv). Stage
inputs that are not stages are kernel parameters (tensors in the arena).

Schedule (isl, no automatic scheduler): the final output is cut into column tiles of ``tile_w``
columns (``tile_w`` = width: one tile, no recompute) and computed row by row; a step ``t`` of tile
``j`` produces final row ``t``. A producer row is computed at the first step that reads it
(``lexmin`` of the reverse read relation composed with the consumer's steps), i.e. as late as
possible, counting virtual rows above the image (steps < 0: the warm-up computes about one row per
stage and step instead of, at step 0, every row the first output row needs), and kept in a ring of
``rows`` rows, slot ``row mod rows``; its columns are those its consumer's tile needs (the tile's
halo is recomputed by the next tile: the recompute factor). A final pooling stage (``Stage.pool``,
an int8 pool over the whole image) is an identity 1x1 step per input pixel that accumulates into
int32 [K] accumulators after the line buffers (``ChainPlan.acc_offset``), one tile. Pixel groups
(one tile): a stage read as the conv input of a pointwise stage (1x1, stride 1, unpadded, or the
pool) is computed pixel pair by pixel pair just before its reader, in the reader's slot of the step,
so its ring is 2 pixels, not a row (a depthwise stage feeding its pointwise projection, MCUNetV2's
per-patch inverted bottleneck).

Sizes from isl: ``rows`` = max over steps of the live rows (produced at or before the step, still
read at or after it); LB columns = max over tiles of the footprint's extent from the tile's column
origin. Proof (``prove``): ``compute_flow`` on the line buffers equals the intended producer of
every read (no slot reused too early; tiles do not see each other's rows), and, when the output is
written over a parameter, no read of that parameter sees the kernel's own write
(``deps.clobbered_reads``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from ..ops.conv_geom import ConvGeom
from .deps import Layout, Model, clobbered_reads, flow_mismatch


@dataclass(frozen=True)
class Stage:
    """One conv of the chain. ``src``: ("param", q) = kernel parameter q, or ("stage", i);
    ``extras``: stages read by the epilogue at this stage's output index (residual operands);
    ``param_reads``: kernel parameters read the same way (a residual skip tensor)."""

    geo: ConvGeom
    src: tuple
    extras: tuple[int, ...] = ()
    param_reads: tuple[int, ...] = ()    # parameters the epilogue reads at the output index
    pool: str = ""                       # final pooling stage: "avg" / "max" over the whole image


@dataclass
class ChainPlan:
    stages: list[Stage]
    tile_w: int
    ntiles: int
    pixels: list[isl.Set] = field(default_factory=list)   # Q<i>[j, a, b]: outputs computed per tile
    step: list[isl.Map] = field(default_factory=list)     # R<i>[j, a] -> Tm[j, t]
    rows: list[int] = field(default_factory=list)         # ring rows (0: final stage)
    width: list[int] = field(default_factory=list)        # line-buffer columns
    origin: list[tuple[int, int]] = field(default_factory=list)   # column origin alpha * j + beta
    lb_offset: list[int] = field(default_factory=list)    # byte offset of each line buffer in scratch
    scratch_bytes: int = 0
    evaluations: list[int] = field(default_factory=list)  # output elements computed, all tiles
    macs: int = 0                                          # MACs of the fused kernel (recompute included)
    macs_unfused: int = 0
    acc_offset: int = -1                                   # pooling stage: its int32 [K] accumulators
    slot: list[int] = field(default_factory=list)          # stage position in a step (pixel groups share one)
    paired: list[bool] = field(default_factory=list)       # in a pixel group: pixels ordered by pairs
    pixel: list[bool] = field(default_factory=list)        # ring of 2 pixels (pixel-fused into its consumer)

    @property
    def final(self) -> int:
        return len(self.stages) - 1

    @property
    def recompute(self) -> float:
        return self.macs / self.macs_unfused if self.macs_unfused else 1.0

    def lb_bytes(self, i: int) -> int:
        return self.rows[i] * self.width[i] * self.stages[i].geo.K


def consumers(stages: list[Stage]) -> dict[int, tuple[int, str]]:
    """producer stage -> (consumer stage, 'conv' | 'extra'); raises ValueError unless a tree."""
    out: dict[int, tuple[int, str]] = {}
    for c, st in enumerate(stages):
        reads = ([(st.src[1], "conv")] if st.src[0] == "stage" else []) + [(e, "extra") for e in st.extras]
        for p, how in reads:
            if p in out or p >= c:
                raise ValueError(f"stage {p} is read twice or not before its reader {c}")
            out[p] = (c, how)
    missing = set(range(len(stages) - 1)) - set(out)
    if missing:
        raise ValueError(f"stages {sorted(missing)} are never read")
    return out


def _read_rel(c: int, p: int, how: str, st: Stage, prod: Stage, rows_only: bool, above: int = 0) -> isl.Map:
    """Q<c>[j, a(, b)] -> Q<p>[j, a2(, b2)] of one tile (same j); ``above``: rows above the image
    (a2 >= -above) are read too (the virtual rows of the step computation)."""
    g = st.geo
    OH, OW = prod.geo.OH, prod.geo.OW
    if how == "extra":
        if rows_only:
            return isl.Map(f"{{ R{c}[j, a] -> R{p}[j, a] : a < {OH} }}")
        return isl.Map(f"{{ Q{c}[j, a, b] -> Q{p}[j, a, b] }}")
    rows = f"exists r: a2 = {g.sh}a + {g.dh}r - {g.pt} and 0 <= r < {g.KH} and {-above} <= a2 < {OH}"
    if rows_only:
        return isl.Map(f"{{ R{c}[j, a] -> R{p}[j, a2] : {rows} }}")
    cols = f"exists s: b2 = {g.sw}b + {g.dw}s - {g.pl} and 0 <= s < {g.KW} and 0 <= b2 < {OW}"
    return isl.Map(f"{{ Q{c}[j, a, b] -> Q{p}[j, a2, b2] : ({rows}) and ({cols}) }}")


def analyze(stages: list[Stage], tile_w: int | None = None) -> ChainPlan:
    """Pixels, steps, ring rows and line-buffer sizes of a chain at one tile width (module doc)."""
    cons = consumers(stages)
    F = len(stages) - 1
    gF = stages[F].geo
    tw = gF.OW if stages[F].pool else min(tile_w or gF.OW, gF.OW)
    nt = -(-gF.OW // tw)
    n = len(stages)
    plan = ChainPlan(stages, tw, nt, [None] * n, [None] * n, [0] * n, [0] * n, [(0, 0)] * n, [0] * n)
    plan.pixels[F] = isl.Set(f"{{ Q{F}[j, a, b] : 0 <= j < {nt} and 0 <= a < {gF.OH} and "
                             f"{tw}j <= b < {tw}j + {tw} and b < {gF.OW} }}")
    plan.step[F] = isl.Map(f"{{ R{F}[j, a] -> Tm[j, a] : 0 <= j < {nt} and 0 <= a < {gF.OH} }}")
    above = _rows_above(stages)
    virtual = {F: isl.Map(f"{{ R{F}[j, a] -> Tm[j, a] : 0 <= j < {nt} and {-above} <= a < {gF.OH} }}")}
    plan.origin[F] = (tw, 0) if nt > 1 else (0, 0)
    for p in range(F - 1, -1, -1):
        c, how = cons[p]
        st, prod = stages[c], stages[p]
        plan.pixels[p] = plan.pixels[c].apply(_read_rel(c, p, how, st, prod, False)).coalesce()
        rows_c = plan.pixels[c].project_out(isl.dim_type.set, 2, 1).set_tuple_name(f"R{c}")
        rows_p = plan.pixels[p].project_out(isl.dim_type.set, 2, 1).set_tuple_name(f"R{p}")
        rel = _read_rel(c, p, how, st, prod, True).intersect_domain(rows_c)
        reach = rel.reverse().apply_range(plan.step[c])
        # a row is computed at the first step that reads it, counting the virtual rows above the
        # image (steps < 0): the warm-up computes one row per stage and step, not every row the
        # first output row needs at step 0 (rings of the rows a step needs, no burst)
        vrel = _read_rel(c, p, how, st, prod, True, above).intersect_domain(virtual[c].domain())
        virtual[p] = vrel.reverse().apply_range(virtual[c]).lexmin().coalesce()
        plan.step[p] = virtual[p].intersect_domain(rows_p).coalesce()
        last = reach.lexmax().coalesce()
        born = plan.step[p].apply_range(isl.Map("{ Tm[j, t1] -> Tm[j, t] : t >= t1 }"))
        dead = last.apply_range(isl.Map("{ Tm[j, t2] -> Tm[j, t] : t <= t2 }"))
        live = born.intersect(dead).reverse()                      # Tm[j, t] -> R<p>[j, a]
        plan.rows[p] = (live.dim_max(1) - live.dim_min(1)).max_val().to_python() + 1
        a_c, b_c = plan.origin[c]
        g = st.geo
        plan.origin[p] = (a_c, b_c) if how == "extra" else (g.sw * a_c, g.sw * b_c - g.pl)
        cols = _columns(plan.pixels[p])
        alpha, beta = plan.origin[p]
        if nt == 1:                                  # one tile (j = 0): the footprint's first column
            alpha, beta = 0, cols.dim_min(0).min_val().to_python()
            plan.origin[p] = (alpha, beta)
        span = cols.dim_max(0) - isl.PwAff(f"{{ [j] -> [({alpha}j + {beta})] }}").intersect_domain(cols.domain())
        plan.width[p] = span.max_val().to_python() + 1
    _pixel_groups(plan, cons)
    off = 0
    for p in range(F):
        plan.lb_offset[p] = off
        off += -(-plan.lb_bytes(p) // 4) * 4
    if stages[F].pool:
        plan.acc_offset = off
        off += 4 * gF.K
    plan.scratch_bytes = off
    plan.evaluations = [plan.pixels[i].count_val().to_python() * stages[i].geo.K for i in range(n)]
    per_out = [s.geo.KH * s.geo.KW * s.geo.Cg for s in stages]
    plan.macs = sum(e * m for e, m in zip(plan.evaluations, per_out))
    plan.macs_unfused = sum(s.geo.macs for s in stages)
    return plan


def rows_by_step(plan: ChainPlan, p: int) -> dict[int, list[int]]:
    """Step t -> the rows of stage ``p`` computed at step t (``plan.step[p]``; one tile, j = 0), steps
    of the warm-up (t < 0) included."""
    out: dict[int, list[int]] = {}

    def add(point) -> None:
        a = point.get_coordinate_val(isl.dim_type.set, 1).to_python()
        t = point.get_coordinate_val(isl.dim_type.set, 3).to_python()
        out.setdefault(t, []).append(a)
    plan.step[p].wrap().foreach_point(add)
    return out


def _pixel_groups(plan: ChainPlan, cons: dict[int, tuple[int, str]]) -> None:
    """Pixel fusion (one tile only): a stage whose consumer is pointwise (1x1, stride 1, unpadded: a
    pooling stage too) and reads it as its conv input computes each pixel pair just before the
    consumer's, in the consumer's slot of the step (``slot``), so its ring holds 2 pixels, not rows
    (``pixel``; ``paired``: the group orders pixels by pairs, b = 2 floor(b / 2) first)."""
    n = len(plan.stages)
    plan.slot, plan.paired, plan.pixel = list(range(n)), [False] * n, [False] * n
    if plan.ntiles != 1:
        return
    for p in range(n - 2, -1, -1):
        c, how = cons[p]
        if how == "conv" and plan.stages[c].geo.is_pointwise and plan.rows[p] == 1:
            plan.slot[p], plan.pixel[p] = plan.slot[c], True
            plan.paired[p] = plan.paired[c] = True
            plan.width[p], plan.origin[p] = min(2, plan.stages[p].geo.OW), (0, 0)


def _rows_above(stages: list[Stage]) -> int:
    """Virtual rows above the image of the step computation: the sum of the window heights (a
    stage's halo counts at most its height in final rows, strides only shrink it), so that the first
    reader of every real row may be a virtual row."""
    return sum(st.geo.KH * st.geo.dh for st in stages) + 1


def _columns(pixels: isl.Set) -> isl.Map:
    """{ [j] -> [b] }: the columns of a pixel set Q[j, a, b] per tile."""
    cols = pixels.project_out(isl.dim_type.set, 1, 1)
    return isl.Map.from_range(cols).move_dims(isl.dim_type.in_, 0, isl.dim_type.out, 0, 1)


def lift(pixels: isl.Set, name: str, extra: str) -> isl.Set:
    """The instances of one statement over a stage's pixels: Q<i>[j, a, b] -> name[j, a, b, <dims>].

    ``extra``: ``"d1, d2 : <isl constraints over j, a, b and the dims>"`` (the statement's own loop
    dims, e.g. the taps of a mac), or ``""`` for none."""
    dims, _, cons = extra.partition(":")
    n = len([d for d in dims.split(",") if d.strip()])
    if n == 0:
        return pixels.set_tuple_name(name)
    s = pixels.insert_dims(isl.dim_type.set, 3, n).set_tuple_name(name)
    for i, d in enumerate(d.strip() for d in dims.split(",") if d.strip()):
        s = s.set_dim_name(isl.dim_type.set, 3 + i, d)
    return s.intersect(isl.Set(f"{{ {name}[j, a, b, {dims}] : {cons} }}")).coalesce()


def pixel_pairs(pixels: isl.Set) -> dict[str, isl.Set]:
    """Split a stage's pixels Q[j, a, b] for 2-pixel blocking: ``all`` = every pixel, ``pix2`` = the
    first pixel of each pair (b even, b + 1 also in the set), ``pix1`` = the pixels in no pair."""
    name = pixels.get_tuple_name()
    nxt = pixels.apply(isl.Map(f"{{ {name}[j, a, b] -> {name}[j, a, b - 1] }}"))
    p2 = pixels.intersect(nxt).intersect(isl.Set(f"{{ {name}[j, a, b] : b mod 2 = 0 }}")).coalesce()
    p1 = pixels.subtract(p2).subtract(p2.apply(isl.Map(f"{{ {name}[j, a, b] -> {name}[j, a, b + 1] }}"))).coalesce()
    return {"all": pixels, "pix2": p2, "pix1": p1}


def statement_schedule(plan: ChainPlan, i: int, name: str, dims: tuple[str, ...], extra: str,
                       tail: tuple[str, ...], pixels: isl.Set | None = None) -> isl.UnionMap:
    """Schedule of one statement of stage ``i`` restricted to its instances: ``stage_schedule`` over
    ``lift(pixels, name, extra)`` (``pixels``: the stage's, ``plan.pixels[i]``, unless given)."""
    dom = lift(plan.pixels[i] if pixels is None else pixels, name, extra)
    return isl.UnionMap(stage_schedule(plan, i, name, dims, tail).intersect_domain(dom))


def stage_schedule(plan: ChainPlan, i: int, name: str, dims: tuple[str, ...], tail: tuple[str, ...]) -> isl.Map:
    """{ name[j, a, b, dims...] -> [j, t, slot, a, b', i, b'', tail...] } with t the row step of stage
    i, slot its place in the step (its pixel group's last stage, else i); in a pixel group b' = 2 floor(b / 2)
    (the pair) and b'' = b, else b' = b and b'' = 0. A chain without pixel groups has neither i nor
    b'': [j, t, i, a, b, tail...]."""
    d = ", ".join(("j", "a", "b") + dims)
    proj = isl.Map(f"{{ {name}[{d}] -> R{i}[j, a] }}")
    slot, paired = (plan.slot[i], plan.paired[i]) if plan.slot else (i, False)
    pix = "2 * floor(b / 2), " + f"{i}, b" if paired else f"b, {i}, 0"
    if not any(plan.paired):        # no pixel group: [j, t, i, a, b, tail...]
        pix = "b"
    rest = isl.Map(f"{{ {name}[{d}] -> [{slot}, a, {pix}, {', '.join(tail)}] }}")
    return proj.apply_range(plan.step[i]).flat_range_product(rest)


def _ring(plan: ChainPlan, p: int, a: str, b: str) -> str:
    """Constraints placing element (a, b, .) of stage p in its ring: LB<p>[x0, x1, .]."""
    if plan.pixel and plan.pixel[p]:
        return f"x0 = 0 and x1 = ({b}) mod {plan.width[p]}"
    alpha, beta = plan.origin[p]
    return f"x0 = ({a}) mod {plan.rows[p]} and x1 = {b} - ({alpha}j + {beta})"


def proof_model(plan: ChainPlan, param_shapes: dict[int, tuple[int, int, int]]):
    """The coarse model (one instance per output element of each stage, P<i>[j, a, b, k]): isl
    Model over LB<p> / X<q> / Y, plus the semantic reads and writes (E<p>[j, a2, b2, c]) that define
    the intended producer of every line-buffer read."""
    dom = sch = rd = wr = rsem = wsem = None
    F = plan.final

    def acc(u, m):
        return m if u is None else u.union(m)

    for i, st in enumerate(plan.stages):
        g = st.geo
        name = f"P{i}"
        d = isl.UnionSet(lift(plan.pixels[i], name, f"k : 0 <= k < {g.K}"))
        dom = acc(dom, d)
        sch = acc(sch, isl.UnionMap(stage_schedule(plan, i, name, ("k",), ("k",))))
        head = f"{name}[j, a, b, k]"
        win = (f"k = {g.M}q + m and 0 <= m < {g.M} and ci = {g.Cg}q + c and "
               f"0 <= c < {g.Cg} and a2 = {g.sh}a + {g.dh}r - {g.pt} and b2 = {g.sw}b + {g.dw}s - {g.pl} "
               f"and 0 <= r < {g.KH} and 0 <= s < {g.KW} and 0 <= a2 < {g.H} and 0 <= b2 < {g.W}")
        if st.src[0] == "param":
            x = "[ci, a2, b2]" if g.nchw_input else "[a2, b2, ci]"     # param_shapes: its stored (C, H, W)
            rd = acc(rd, isl.UnionMap(f"{{ {head} -> X{st.src[1]}{x} : exists r, s, c, q, m: {win} }}"))
        else:
            p = st.src[1]
            rd = acc(rd, isl.UnionMap(f"{{ {head} -> LB{p}[x0, x1, ci] : exists a2, b2, r, s, c, q, m: "
                                      f"{_ring(plan, p, 'a2', 'b2')} and {win} }}"))
            rsem = acc(rsem, isl.UnionMap(f"{{ {head} -> E{p}[j, a2, b2, ci] : exists r, s, c, q, m: {win} }}"))
        for e in st.extras:
            rd = acc(rd, isl.UnionMap(f"{{ {head} -> LB{e}[x0, x1, k] : {_ring(plan, e, 'a', 'b')} }}"))
            rsem = acc(rsem, isl.UnionMap(f"{{ {head} -> E{e}[j, a, b, k] }}"))
        for q in st.param_reads:
            rd = acc(rd, isl.UnionMap(f"{{ {head} -> X{q}[a, b, k] }}"))
        if i == F:
            y = "ACC[k]" if st.pool else "Y[a, b, k]"
            wr = acc(wr, isl.UnionMap(f"{{ {head} -> {y} }}"))
        else:
            wr = acc(wr, isl.UnionMap(f"{{ {head} -> LB{i}[x0, x1, k] : {_ring(plan, i, 'a', 'b')} }}"))
            wsem = acc(wsem, isl.UnionMap(f"{{ {head} -> E{i}[j, a, b, k] }}"))
    model = Model(domain=dom, schedule=sch, reads=rd, writes=wr)
    intended = wsem.intersect_domain(dom).apply_range(rsem.intersect_domain(dom).reverse()) \
        if wsem is not None else isl.UnionMap("{ }")
    return model, intended.coalesce()


def prove(plan: ChainPlan, param_shapes: dict[int, tuple[int, int, int]], inplace: int | None = None) -> str | None:
    """None when the fused schedule is proven (line-buffer flow intended; the output over parameter
    ``inplace`` clobbers no read of it), else the reason it is not."""
    model, intended = proof_model(plan, param_shapes)
    lbs = tuple((f"LB{p}", 3) for p in range(plan.final))
    if lbs:
        bad = flow_mismatch(model, lbs, intended)
        if not bad.is_empty():
            return f"line-buffer flow differs from the intended producers: {str(bad)[:300]}"
    if inplace is not None and plan.stages[plan.final].pool:
        return "a pooling chain writes its output after its last row: no in-place option"
    if inplace is not None:
        gF = plan.stages[plan.final].geo
        layout = Layout({f"X{inplace}": (param_shapes[inplace], 1, 0), "Y": ((gF.OH, gF.OW, gF.K), 1, 0)})
        bad = clobbered_reads(model, layout, (f"X{inplace}",))
        if not bad.is_empty():
            return f"the output over parameter {inplace} clobbers reads: {str(bad)[:300]}"
    return None


__all__ = ["ChainPlan", "Stage", "analyze", "consumers", "lift", "pixel_pairs", "proof_model", "prove",
           "stage_schedule", "statement_schedule"]
