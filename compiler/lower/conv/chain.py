"""A poly-fused group (several conv groups joined by ``passes/poly_fuse``) → one C kernel with line
buffers (``tinyfuse.poly.linebuf``).

The merged Function's body calls its member groups (each an anchor conv + epilogue, as ``fuse_ops``
made them); ``poly.chain.chain_of`` reads the stages back from it. Every stage becomes three isl statements,
as in ``lower/conv/ref.py`` (init, mac over the taps, epilogue + store), with the chain's schedule
``[j, t, stage, a, b, g, m, phase, r, s, c]``: tile, step, then the stage's rows due at that step.
Non-final stages store into their ring ``lb<i>[(a mod rows) * width + b - origin(j)][k]`` in the
kernel's scratch; the final stage stores the output (possibly over a dying parameter: the plan's
in-place option, proven by ``linebuf.prove``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from ...codegen.templates import template
from ...ir import Call, Function, Var
from ...ops.conv_geom import ConvGeom, conv_group
from ...poly.chain import chain_of
from ...poly.linebuf import ChainPlan, analyze, pixel_pairs, statement_schedule
from .. import group_knobs
from .depthwise_common import quad_weights, tap_pointers
from .chain_mve import mve_conv
from .chain_pool import pool_statements
from .im2col_rows import gather_rows, row_form, row_order, row_weights
from .inplace import finish
from ...strategy import choose
from .blocks import mac_bounds, short_output
from .dsp import wide_unroll
from ..kernel import Epilogue, Kernel, LowerCtx, affine, split_group
from ..simd import HEADERS, widen_weights


class _ChainEpilogue(Epilogue):
    """Epilogue whose parameters are the merged kernel's parameters (p<q>) or other stages' rings."""

    def __init__(self, member: Call, chain_fn: Function, rings: dict[int, object], pool, wcet: bool = False):
        anchor, ops = split_group(member.op)
        super().__init__(member.op, anchor, ops, pool, member.op.body.ty.ctype, wcet)
        self.rings = {}
        for v, a in zip(member.op.params, member.args):
            if isinstance(a, Var) and a in chain_fn.params:
                self.param_names[id(v)] = f"p{chain_fn.params.index(a)}"
            else:
                self.rings[id(v)] = rings[id(a)]

    j = "j"        # the tile coordinate of the instance being printed (set by the out body)

    def operand(self, e, out_shape, idx, values) -> str:
        if isinstance(e, Var) and id(e) in self.rings:
            return self.rings[id(e)](idx[1], idx[2], idx[3], self.j)
        return super().operand(e, out_shape, idx, values)


def _ring_expr(plan: ChainPlan, p: int):
    rows, width, K = plan.rows[p], plan.width[p], plan.stages[p].geo.K
    alpha, beta = plan.origin[p]
    pow2 = rows & (rows - 1) == 0
    if plan.pixel[p]:                 # pixel-fused into its consumer: 2 pixels, column b mod 2
        def at(a: str, b: str, c: str, j: str = "j") -> str:
            col = "0" if width == 1 else f"(({b}) & 1)"
            return f"lb{p}[{col} * {K} + {c}]"
        return at

    def at(a: str, b: str, c: str, j: str = "j") -> str:
        slot = "0" if rows == 1 else f"({a}) & {rows - 1}" if pow2 else f"({a}) % {rows}"
        col = affine((b, 1), (j, -alpha), (str(-beta), 1))
        return f"lb{p}[(({slot}) * {width} + {col}) * {K} + {c}]"
    return at


@dataclass
class _Build:
    """One chain kernel under construction: the lowering context, the chain, its line-buffer plan,
    ``rings`` (id(member call) -> the C expression of its line buffer's element), the kernel's local
    declarations and the runtime headers its stages' short requantize needs."""

    ctx: LowerCtx
    chain: object
    plan: ChainPlan
    rings: dict
    decls: list = field(default_factory=list)
    headers: list = field(default_factory=list)


def _stage_bodies(b: _Build, i: int, st, mc, anchor, epi, t) -> dict:
    """C bodies of S<i>_init / _mac / _out (keyword coordinates as isl names them)."""
    geo, pool, plan, rings, chain = st.geo, b.ctx.pool, b.plan, b.rings, b.chain
    wname = pool.ref(anchor.args[1])
    offset = -geo.zp
    fold = None
    if geo.is_1x1 and geo.unpadded and offset:   # every tap real: the input offset folds into the start value
        w2 = anchor.args[1].value.reshape(geo.K, -1).astype(np.int64)
        fold = pool.ref((offset * w2.sum(axis=1)).astype(np.int32), key=("chain_fold", id(anchor)))
    src_ring = rings.get(id(mc.args[mc.op.params.index(anchor.args[0])]))

    def k_of(c):
        return affine((c["g"], geo.M), (c["m"], 1))

    def init(**c):
        return t.S_init(f"{fold}[{k_of(c)}]" if fold else "0")

    def mac(**c):
        a2 = affine((c["a"], geo.sh), (c["r"], geo.dh), (str(-geo.pt), 1))
        b2 = affine((c["b"], geo.sw), (c["s"], geo.dw), (str(-geo.pl), 1))
        ci = affine((c["g"], geo.Cg), (c["c"], 1))
        xi = affine((ci, geo.H * geo.W), (a2, geo.W), (b2, 1)) if geo.nchw_input else \
            affine((a2, geo.W * geo.C), (b2, geo.C), (ci, 1))
        x = src_ring(a2, b2, ci, c["j"]) if src_ring else f"p{st.src[1]}[{xi}]"
        wi = affine((k_of(c), geo.KH * geo.KW * geo.Cg), (c["r"], geo.KW * geo.Cg), (c["s"], geo.Cg), (c["c"], 1))
        return t.S_mac(x, f"{wname}[{wi}]", 0 if fold else offset)

    def out(**c):
        k = k_of(c)
        epi.j = c["j"]
        lines, value = epi.code(["0", c["a"], c["b"], k])
        dst = rings[id(chain.members[i])](c["a"], c["b"], k, c["j"]) if i < plan.final else \
            f"out[{affine((c['a'], geo.OW * geo.K), (c['b'], geo.K), (k, 1))}]"
        return t.S_out(lines, value, dst)

    return {f"S{i}_init": init, f"S{i}_mac": mac, f"S{i}_out": out}


@dataclass
class _DspStage:
    """A chain stage as its DSP statement bodies see it: ``src(a2, b2, j)`` is the C pointer to the
    channels of input pixel (a2, b2) in tile j (a ring or a kernel parameter), ``dst(c, k)`` the C
    lvalue of output channel k at the instance coordinates ``c``; ``off2`` names the packed input
    offset."""

    i: int
    ctx: LowerCtx
    geo: ConvGeom
    anchor: Call
    epi: _ChainEpilogue
    t: object                     # the fused_chain/arm_dsp.c.j2 module
    src: Callable[[str, str, str], str]
    dst: Callable[[dict, str], str]
    off2: str
    short: Callable[[str, str], str] | None = None   # conv.blocks.short_output's value, or None

    def taps(self, c: dict, b: str) -> list[tuple[str, str]]:
        """Tap table of output pixel (c['a'], b) of tile c['j']."""
        return tap_pointers(self.geo, c["a"], b, lambda a2, b2: self.src(a2, b2, c["j"]))

    def outs(self, c: dict, accs, named: bool = False) -> list[tuple]:
        """(accumulator, epilogue lines, value, destination) per (accumulator, column b, channel k);
        ``named``: the values read the accumulator by its name, else as ``acc`` (declared by the store)."""
        res = []
        self.epi.j = c["j"]
        for acc, b, k in accs:
            a = acc if named else "acc"
            lines, value = ([], self.short(a, k)) if self.short else \
                self.epi.code(["0", c["a"], b, k], acc=a)
            res.append((acc, lines, value, self.dst(dict(c, b=b), k)))
        return res


def _dsp_stage(b: _Build, i: int, kind: str, st, mc, anchor, epi, col_off: int) -> tuple[list, int]:
    """(name, dims, extra constraints, tail, body, pixel set) of a stage's DSP or Helium statements
    (``kind``: the stage's implementation, strategy.conv), and the im2col bytes it needs in the scratch
    after ``col_off``. The DSP outputs take the short exact requantize where it applies (its header
    added to ``b.headers``): the accumulators start at 0 and sum (x - zp) w over the taps, a padded tap
    adding 0."""
    geo, pool, plan, rings, chain, decls = st.geo, b.ctx.pool, b.plan, b.rings, b.chain, b.decls
    t = template("fused_chain/arm_dsp.c.j2").module
    src_ring = rings.get(id(mc.args[mc.op.params.index(anchor.args[0])]))

    def src(a2, b2, j):
        if src_ring:
            return "&" + src_ring(a2, b2, "0", j)
        return f"p{st.src[1]} + {affine((a2, geo.W * geo.C), (b2, geo.C))}"

    def dst(c, k):
        if i < plan.final:
            return rings[id(chain.members[i])](c["a"], c["b"], k, c["j"])
        return f"out[{affine((c['a'], geo.OW * geo.K), (c['b'], geo.K), (k, 1))}]"

    short = None
    if kind != "chain.conv_arm_mve":     # the Helium stage requantizes its own way (chain_mve)
        w2 = anchor.args[1].value.reshape(geo.K, -1)
        short, extra = short_output(epi, anchor, pool, lambda o: "0", mac_bounds(w2, -128 - geo.zp, 127 - geo.zp))
        b.headers += [h for h in extra if h not in b.headers]
    stage = _DspStage(i, b.ctx, geo, anchor, epi, t, src, dst, f"off2_{i}", short)
    if kind == "chain.conv_arm_mve":
        return mve_conv(stage, pool, col_off)
    if kind == "chain.dw_arm_dsp" or geo.C % 4 == 0:
        decls.append(f"const int32_t {stage.off2} = tf_pack_offset({-geo.zp});")
    if kind == "chain.conv_arm_dsp":
        return _dsp_conv(stage, pool, col_off)
    return _dsp_depthwise(stage, pool, decls), 0


def _conv_weights(anchor, geo: ConvGeom, pool, w16: bool = False) -> tuple[str, int]:
    """(C name of the [K][k4] int8 weights, k4): the KH*KW*C reduction zero-padded to whole words;
    ``w16``: pre-widened to int16 instead (simd.widen_weights, the ``weights: int16`` knob)."""
    n = geo.KH * geo.KW * geo.C
    k4 = -(-n // 4) * 4
    if k4 == n and not w16:
        return pool.ref(anchor.args[1]), k4
    w2 = np.pad(anchor.args[1].value.reshape(geo.K, n), ((0, 0), (0, k4 - n)))
    if w16:
        return pool.ref(widen_weights(w2), key=("chain_w16", id(anchor))), k4
    return pool.ref(np.ascontiguousarray(w2), key=("chain_wpad", id(anchor))), k4


# The loop body (groups of 4 terms) of a chain conv block whose reduction exceeds WIDE_STEPS groups: the
# first of CHAIN_BODIES dividing it. Measured on ResNet-8 (cortex-m4, chain reductions of 36 and 72
# groups): bodies (12, ...) 1.515 instr/MAC, 37.2 KB code; (9, ...) 1.519, 34.7 KB; (8, 4, ...) 1.596,
# 30.4 KB; (18, ...) 1.581, 42.9 KB (spills).
CHAIN_BODIES = (12, 9, 8, 6, 4, 2, 1)


# Output channels per SMLAD block of a chain's conv stage (the ``channels`` tuning knob's default): 2,
# not the unfused conv's conv.dsp.CONV_CHANNELS = 3 -- a chain body keeps its line-buffer and column pointers live,
# and 2 x 3 accumulators spill. Found by ``tinyfuse tune`` on ResNet-8 (cortex-m4): chains 7,575,323 ->
# 6,906,225 and 5,177,883 -> 4,896,068 instructions, stack 464 -> 200 B, 8 KB less code; cortex-m7 alike.
CHAIN_CHANNELS = 2


def _steps_body(steps: int) -> int:
    """The loop body of a main block of ``steps`` groups of 4 terms (CHAIN_BODIES)."""
    return next(b for b in CHAIN_BODIES if steps % b == 0)


def _dsp_conv(stage: _DspStage, pool, col_off: int) -> tuple[list, int]:
    """A groups = 1 stage: im2col of a pixel pair into int16 columns, then SMLAD blocks of 2 pixels x
    CHAIN_CHANNELS channels (the ``channels`` knob; conv2d/arm_dsp.c.j2 wide_block, col mode, as the
    unfused conv) and the K % channels tail."""
    g, t, i = stage.geo, stage.t, stage.i
    tw = template("conv2d/arm_dsp.c.j2").module
    col = f"(int32_t *)(void *)((int8_t *)scratch + {col_off})"   # col_off: a multiple of 4
    rows = row_form(g)
    stage.ctx.offer("weights", group_knobs.WEIGHTS)
    stage.ctx.offer("channels", (CHAIN_CHANNELS, *(c for c in group_knobs.CHANNELS if c != CHAIN_CHANNELS)))
    w16 = stage.ctx.widened           # tuning knob: int16 pre-widened weights (twice the flash)
    och = stage.ctx.knob("channels", CHAIN_CHANNELS)
    if rows:                          # C % 4 != 0: window rows a word at a time (im2col_rows)
        wr = row_weights(stage.anchor.args[1].value.reshape(g.K, -1), g)
        wname = pool.ref(widen_weights(wr) if w16 else wr, key=("chain_wrows", w16, id(stage.anchor)))
        row = len(row_order(g))
    else:
        wname, row = _conv_weights(stage.anchor, g, pool, w16)
    nq = row // 4
    any_c = {} if g.C % 4 == 0 else {"C": g.C, "k4": row, "offset": -g.zp}
    body = _steps_body(nq)

    def b1(c):
        return affine((c["b"], 1), ("1", 1))

    def S_col(npix, **c):
        if rows:
            return "\n".join(gather_rows(g, c["a"], b, lambda a2, b2: stage.src(a2, b2, c["j"]), -g.zp,
                                          f"{col} + {2 * n}") for n, b in enumerate((c["b"], b1(c))[:npix]))
        taps1 = stage.taps(c, b1(c)) if npix == 2 else None
        return t.S_col(col, stage.taps(c, c["b"]), taps1, g.C // 4, stage.off2, **any_c)

    def block(npix, k, nch, c):
        kj = [affine((k, 1), (str(j), 1)) for j in range(nch)]
        accs = [(f"a{p}{j}", c["b"] if p == 0 else b1(c), kj[j]) for p in range(npix) for j in range(nch)]
        full, bd = wide_unroll(nq, npix, nch, 2, g.K, och)
        return tw.wide_block(npix, nch, nq, col, 0, f"{wname} + {affine((k, row))}", row, ["0"] * nch,
                             stage.outs(c, accs, named=True), full=full, body=bd if full == 0 else body,
                             mode="col", w16=w16)

    stmts = []
    for npix, tag in ((2, "2"), (1, "1")):
        sel = f"pix{tag}"
        stmts.append((f"S{i}_col{tag}", (), "", ("0", "0"), partial(S_col, npix), sel))
        if g.K >= och:
            stmts.append((f"S{i}_blk{tag}", ("kq",), f"0 <= kq < {g.K // och}", ("1", "kq"),
                          lambda npix=npix, **c: block(npix, affine((c["kq"], och)), och, c),
                          sel))
        if g.K % och:
            rest = g.K % och
            stmts.append((f"S{i}_tail{tag}", (), "", ("2", "0"),
                          lambda npix=npix, rest=rest, **c: block(npix, str(g.K - rest), rest, c), sel))
    return stmts, 4 * row


def _dsp_depthwise(stage: _DspStage, pool, decls: list[str]) -> list:
    """A depthwise stage (multiplier 1, K % 4 == 0): per pixel a tap table, per quad of channels the
    taps unrolled with SXTAB16 against the quad-packed weights."""
    g, t, i = stage.geo, stage.t, stage.i
    T = g.KH * g.KW
    wq = pool.ref(quad_weights(stage.anchor.args[1].value.reshape(g.K, T)), key=("chain_dwq", id(stage.anchor)))
    zrow = pool.ref(np.full(g.K, g.zp, np.int8), key=("chain_zrow", g.zp, g.K))
    tp = f"tp{i}"
    decls.append(f"const int8_t *{tp}[{T}];")

    def S_taps(**c):
        return t.S_taps(tp, stage.taps(c, c["b"]), zrow)

    def S_quad(**c):
        q4 = affine((c["q"], 4))
        accs = [(f"a{n}", c["b"], affine((q4, 1), (str(n), 1))) for n in range(4)]
        return t.S_quad(tp, q4, T, f"{wq} + {affine((c['q'], 2 * T))}", stage.outs(c, accs), stage.off2)

    return [(f"S{i}_taps", (), "", ("0", "0"), S_taps, "all"),
            (f"S{i}_quad", ("q",), f"0 <= q < {g.K // 4}", ("1", "q"), S_quad, "all")]


def _dsp_schedules(plan: ChainPlan, i: int, stmts: list, bodies: dict) -> list:
    """Schedules of a stage's DSP statements (each over its pixel set); their bodies go to ``bodies``."""
    sets = pixel_pairs(plan.pixels[i])
    out = []
    for sname, dims, cons, tail, body, sel in stmts:
        extra = f"{', '.join(dims)} : {cons}" if dims else ""
        out.append(statement_schedule(plan, i, sname, dims, extra, tail + ("0",) * 4, sets[sel]))
        bodies[sname] = (("j", "a", "b") + dims, body)
    return out


def _ref_schedules(plan: ChainPlan, i: int, geo: ConvGeom, stage: dict, bodies: dict) -> list:
    """Schedules of a stage's portable statements (init, mac over the real taps, out); bodies as above."""
    gm = f"g, m : 0 <= g < {geo.G} and 0 <= m < {geo.M}"
    taps = f"g, m, r, s, c : 0 <= g < {geo.G} and 0 <= m < {geo.M} and 0 <= c < {geo.Cg} and " + \
        geo.taps_in_image("a", "b")
    out = []
    for kind, extra, dims, tail in (
            ("init", gm, ("g", "m"), ("g", "m", "0", "0", "0", "0")),
            ("mac", taps, ("g", "m", "r", "s", "c"), ("g", "m", "1", "r", "s", "c")),
            ("out", gm, ("g", "m"), ("g", "m", "2", "0", "0", "0"))):
        sname = f"S{i}_{kind}"
        out.append(statement_schedule(plan, i, sname, dims, extra, tail))
        bodies[sname] = (("j", "a", "b") + dims, stage[sname])
    return out


def lower_fused_chain(fn: Function, ctx: LowerCtx) -> Kernel:
    """A poly-fused group (``attrs['poly']``) as one line-buffered kernel; each stage is what its
    strategy chooses in the chain_stage mode (``strategy.conv``: Helium, DSP or portable statements)."""
    chain = chain_of(fn)
    plan = analyze(chain.stages, fn.attrs["poly"].get("tile_w"))
    t = template("fused_chain/ref.c.j2").module
    b = _Build(ctx, chain, plan, {id(chain.members[p]): _ring_expr(plan, p) for p in range(plan.final)})
    bodies, scheds, ops, stage_kinds, headers = {}, [], [], [], []
    ref_stage = dsp_stage = False
    # im2col columns go after the line buffers, one area for every stage: the schedule ([j, t, i, a, b, ...],
    # linebuf.stage_schedule; a pixel group interleaves its stages per pixel pair, each pair complete
    # before the next stage's) runs a stage's column fill and the blocks that read it at one pixel pair
    # before the next fill, and stage i's whole row step before stage i + 1's, so no column outlives its stage
    lines = -(-plan.scratch_bytes // 4) * 4
    scratch = lines
    for i, (mc, st) in enumerate(zip(chain.members, chain.stages)):
        if st.pool:                   # the final whole-image pool (chain_pool)
            epi = _ChainEpilogue(mc, fn, b.rings, ctx.pool, wcet=ctx.options.wcet)
            ops += [epi.anchor.op] + [c.op for c in epi.ops]
            stage_kinds.append("chain.pool")
            pool_scheds, pool_bodies, pool_decls = pool_statements(plan, i, b.rings[id(mc.args[0])], epi,
                                                                   ctx.options.wcet)
            scheds += pool_scheds
            bodies.update(pool_bodies)
            b.decls += pool_decls
            continue
        anchor, epi_ops, _ = conv_group(mc.op)
        ops += [anchor.op] + [c.op for c in epi_ops]
        epi = _ChainEpilogue(mc, fn, b.rings, ctx.pool, wcet=ctx.options.wcet)
        kind = choose(mc.op, ctx.options, "chain_stage").kind
        stage_kinds.append(kind)
        if kind != "chain.ref":
            dsp_stage = True
            stmts, col_bytes = _dsp_stage(b, i, kind, st, mc, anchor, epi, lines)
            scratch = max(scratch, lines + -(-col_bytes // 4) * 4)
            headers = [*HEADERS, *b.headers]
            scheds += _dsp_schedules(plan, i, stmts, bodies)
        else:
            ref_stage = True
            stage = _stage_bodies(b, i, st, mc, anchor, epi, t)
            scheds += _ref_schedules(plan, i, st.geo, stage, bodies)
    sched = scheds[0]
    for s in scheds[1:]:
        sched = sched.union(s)
    macros, loops = ctx.schedule_to_c(sched, bodies)
    decls = b.decls + [f"int8_t *lb{p} = (int8_t *)scratch + {plan.lb_offset[p]};" for p in range(plan.final)]
    decls += ["int32_t acc;"] if ref_stage else []
    kernel = Kernel(ctx.name, [p.ty for p in fn.params], fn.body.ty, loops, decls, macros, macs=plan.macs,
                    scratch_bytes=scratch, headers=headers)
    found = ctx.slice.found if ctx.slice is not None else []   # --input-rows: a slice of the final rows
    kernel.slice_range = (found[0].lo, found[0].hi) if len(found) == 1 and found[0] is not None else None
    kernel = finish(kernel, fn, None, [], "fused_chain", simd=dsp_stage)
    kernel.ops = ops
    kernel.plan = plan
    kernel.kind, kernel.stage_kinds = "fused_chain", stage_kinds
    return kernel


__all__ = ["lower_fused_chain"]
