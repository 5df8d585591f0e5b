"""A poly-fused group (several conv groups joined by ``passes/poly_fuse``) → one C kernel with line
buffers (``tinyfuse.poly.linebuf``).

The merged Function's body calls its member groups (each an anchor conv + epilogue, as ``fuse_ops``
made them); ``chain_of`` reads the stages back from it. Every stage becomes three isl statements,
as in ``lower/conv2d.py`` (init, mac over the taps, epilogue + store), with the chain's schedule
``[j, t, stage, a, b, g, m, phase, r, s, c]``: tile, step, then the stage's rows due at that step.
Non-final stages store into their ring ``lb<i>[(a mod rows) * width + b - origin(j)][k]`` in the
kernel's scratch; the final stage stores the output (possibly over a dying parameter: the plan's
in-place option, proven by ``linebuf.prove``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import islpy as isl
import numpy as np

from ..codegen.templates import template
from ..ir import Call, Function, Var, post_order
from ..poly.codegen import schedule_to_c
from ..poly.linebuf import ChainPlan, Stage, _lift, analyze, stage_schedule
from .inplace_conv import ConvGeom, finish
from .kernel import Epilogue, Kernel, affine, broadcast_index
from .simd import HEADERS


@dataclass
class Chain:
    members: list[Call]          # member group calls, topological order (last = final)
    stages: list[Stage]
    params: tuple[Var, ...]      # the merged kernel's parameters


class Unfusable(Exception):
    """The merged group is not a chain this lowering handles (the reason is the message)."""


def chain_of(fn: Function) -> Chain:
    """Stages of a merged Function (see module doc); raises Unfusable with the reason."""
    members = [n for n in post_order(fn.body) if isinstance(n, Call) and isinstance(n.op, Function)]
    index = {id(c): i for i, c in enumerate(members)}
    if not members or members[-1] is not fn.body:
        raise Unfusable("the merged body must end in its final member call")
    stages = []
    for i, mc in enumerate(members):
        got = ConvGeom.of(mc.op)
        if got is None:
            raise Unfusable(f"member {mc.op.attrs.get('name')} is not an int8 NHWC batch-1 conv")
        anchor, epi, geo = got
        data = anchor.args[0]
        if not isinstance(data, Var):
            raise Unfusable("conv input is not a parameter of its group")

        def source(v: Var):
            a = mc.args[mc.op.params.index(v)]
            if isinstance(a, Var) and a in fn.params:
                return ("param", fn.params.index(a))
            if id(a) in index:
                return ("stage", index[id(a)])
            raise Unfusable(f"operand {a} of member {i} is neither a kernel parameter nor a member")

        extras, preads = [], []
        for v in mc.op.params:
            if v is data:
                continue
            if v.ty.shape != mc.op.body.ty.shape:
                raise Unfusable(f"epilogue operand of shape {v.ty.shape} is not read at the output index")
            kind, j = source(v)
            (extras if kind == "stage" else preads).append(j)
        stages.append(Stage(geo, source(data), tuple(extras), tuple(preads)))
    return Chain(members, stages, fn.params)


class _ChainEpilogue(Epilogue):
    """Epilogue whose parameters are the merged kernel's parameters (p<q>) or other stages' rings."""

    def __init__(self, member: Call, chain_fn: Function, rings: dict[int, object], pool, ctype: str,
                 anchor, ops):
        super().__init__(member.op, anchor, ops, pool, ctype)
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

    def at(a: str, b: str, c: str, j: str = "j") -> str:
        slot = "0" if rows == 1 else f"({a}) & {rows - 1}" if pow2 else f"({a}) % {rows}"
        col = affine((b, 1), (j, -alpha), (str(-beta), 1))
        return f"lb{p}[(({slot}) * {width} + {col}) * {K} + {c}]"
    return at


def _stage_bodies(i, geo, st, mc, anchor, epi, pool, plan, rings, chain, t) -> dict:
    """C bodies of S<i>_init / _mac / _out (keyword coordinates as isl names them)."""
    wname = pool.ref(anchor.args[1])
    offset = -geo.zp
    fold = None
    if geo.pointwise and offset:       # every tap real: the input offset folds into the start value
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
        x = src_ring(a2, b2, ci, c["j"]) if src_ring else \
            f"p{st.src[1]}[{affine((a2, geo.W * geo.C), (b2, geo.C), (ci, 1))}]"
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


def _dsp_kind(geo: ConvGeom, target, kernels: str) -> str | None:
    """'conv' / 'dw' when the stage has a DSP form on this target, else None (portable C)."""
    if target is None or not getattr(target, "dsp", False) or kernels == "ref":
        return None
    if geo.G == 1:
        return "conv"
    if geo.depthwise and geo.K % 4 == 0:
        return "dw"
    return None


def _taps(geo: ConvGeom, a: str, b: str, ptr) -> list[tuple[str, str]]:
    """Per tap (r, s): (C condition that it reads a real pixel, '' if always; pointer ptr(a2, b2))."""
    out = []
    for r in range(geo.KH):
        for s in range(geo.KW):
            conds = []
            for o, stride, lo, osize, size in ((a, geo.sh, r * geo.dh - geo.pt, geo.OH, geo.H),
                                               (b, geo.sw, s * geo.dw - geo.pl, geo.OW, geo.W)):
                e = affine((o, stride), (str(lo), 1))
                if lo < 0:
                    conds.append(f"{e} >= 0")
                if (osize - 1) * stride + lo >= size:
                    conds.append(f"{e} < {size}")
            a2 = affine((a, geo.sh), (str(r * geo.dh - geo.pt), 1))
            b2 = affine((b, geo.sw), (str(s * geo.dw - geo.pl), 1))
            out.append((" && ".join(conds), ptr(a2, b2)))
    return out


def _quad_words(w: np.ndarray) -> np.ndarray:
    """[K][T] int8 -> int32 [K/4][T][2]: word 0 = (w[4q], w[4q+2]), word 1 = (w[4q+1], w[4q+3]) as int16
    halfwords (low, high): the lane order SXTAB16 gives four consecutive channels."""
    q = w.astype(np.int64).reshape(-1, 4, w.shape[1])
    lo = q & 0xFFFF
    words = np.stack([lo[:, 0] | (lo[:, 2] << 16), lo[:, 1] | (lo[:, 3] << 16)], axis=-1)
    return words.astype(np.uint32).view(np.int32)


def _dsp_stage(i, kind, geo, st, mc, anchor, epi, pool, plan, rings, chain, t, col_off, decls) -> tuple[dict, list]:
    """Bodies and (name, dims, extra constraints, tail) of a stage's DSP statements."""
    src_ring = rings.get(id(mc.args[mc.op.params.index(anchor.args[0])]))
    C = geo.C

    def ptr_fn(j):
        def ptr(a2, b2):
            if src_ring:
                return "&" + src_ring(a2, b2, "0", j)
            return f"p{st.src[1]} + {affine((a2, geo.W * C), (b2, C))}"
        return ptr

    off2 = f"off2_{i}"
    if kind == "dw" or C % 4 == 0:
        decls.append(f"const int32_t {off2} = tf_pack_offset({-geo.zp});")

    def dst(c, k):
        if i < plan.final:
            return rings[id(chain.members[i])](c["a"], c["b"], k, c["j"])
        return f"out[{affine((c['a'], geo.OW * geo.K), (c['b'], geo.K), (k, 1))}]"

    def outs(c, accs):
        res = []
        epi.j = c["j"]
        for acc, k in accs:
            lines, value = epi.code(["0", c["a"], c["b"], k], acc="acc")
            res.append((acc, lines, value, dst(c, k)))
        return res

    if kind == "conv":
        col = f"(int32_t *)(void *)((int8_t *)scratch + {col_off})"   # col_off: a multiple of 4
        T = geo.KH * geo.KW
        k4 = -(-T * C // 4) * 4             # reduction terms, zero-padded to whole words
        nq = k4 // 4
        w2 = anchor.args[1].value.reshape(geo.K, T * C)
        if k4 != T * C:
            w2 = np.pad(w2, ((0, 0), (0, k4 - T * C)))
            wname = pool.ref(np.ascontiguousarray(w2), key=("chain_wpad", id(anchor)))
        else:
            wname = pool.ref(anchor.args[1])
        row = k4
        any_c = {} if C % 4 == 0 else {"C": C, "k4": k4, "offset": -geo.zp}

        def b1(c):
            return affine((c["b"], 1), ("1", 1))

        def S_col(npix, **c):
            taps1 = _taps(geo, c["a"], b1(c), ptr_fn(c["j"])) if npix == 2 else None
            return t.S_col(col, _taps(geo, c["a"], c["b"], ptr_fn(c["j"])), taps1, C // 4, off2, **any_c)

        def S_blk(npix, **c):
            k = affine((c["kp"], 2))
            k1 = affine((k, 1), ("1", 1))
            accs = [("a00", c["b"], k), ("a01", c["b"], k1)] + \
                ([("a10", b1(c), k), ("a11", b1(c), k1)] if npix == 2 else [])
            return t.S_blk(col, npix, nq, f"{wname} + {affine((k, row))}",
                           f"{wname} + {affine((k, row), (str(row), 1))}", outs_px(c, accs))

        def S_blk1(npix, **c):
            k = str(geo.K - 1)
            accs = [("a00", c["b"], k)] + ([("a10", b1(c), k)] if npix == 2 else [])
            return t.S_blk(col, npix, nq, f"{wname} + {(geo.K - 1) * row}", None, outs_px(c, accs))

        def outs_px(c, accs):
            res = []
            epi.j = c["j"]
            for acc, b, k in accs:
                cc = dict(c, b=b)
                lines, value = epi.code(["0", c["a"], b, k], acc="acc")
                res.append((acc, lines, value, dst(cc, k)))
            return res

        stmts = []
        for npix, tag in ((2, "2"), (1, "1")):
            sel = f"pix{tag}"
            stmts.append((f"S{i}_col{tag}", (), "", ("0", "0"), partial(S_col, npix), sel))
            if geo.K >= 2:
                stmts.append((f"S{i}_blk{tag}", ("kp",), f"0 <= kp < {geo.K // 2}", ("1", "kp"),
                              partial(S_blk, npix), sel))
            if geo.K % 2:
                stmts.append((f"S{i}_tail{tag}", (), "", ("2", "0"), partial(S_blk1, npix), sel))
        return stmts, 4 * k4
    T = geo.KH * geo.KW
    wq = pool.ref(_quad_words(anchor.args[1].value.reshape(geo.K, T)), key=("chain_dwq", id(anchor)))
    zrow = pool.ref(np.full(geo.K, geo.zp, np.int8), key=("chain_zrow", geo.zp, geo.K))
    tp = f"tp{i}"
    decls.append(f"const int8_t *{tp}[{T}];")

    def S_taps(**c):
        return t.S_taps(tp, _taps(geo, c["a"], c["b"], ptr_fn(c["j"])), zrow)

    def S_quad(**c):
        q4 = affine((c["q"], 4))
        accs = [(f"a{n}", affine((q4, 1), (str(n), 1))) for n in range(4)]
        return t.S_quad(tp, q4, T, f"{wq} + {affine((c['q'], 2 * T))}", outs(c, accs), off2)

    return [(f"S{i}_taps", (), "", ("0", "0"), S_taps, "all"),
            (f"S{i}_quad", ("q",), f"0 <= q < {geo.K // 4}", ("1", "q"), S_quad, "all")], 0


def _pixel_pairs(pixels: isl.Set) -> dict[str, isl.Set]:
    """all: every pixel; pix2: first pixels of the pairs (b even, b + 1 in the set); pix1: the rest."""
    name = pixels.get_tuple_name()
    nxt = pixels.apply(isl.Map(f"{{ {name}[j, a, b] -> {name}[j, a, b - 1] }}"))
    p2 = pixels.intersect(nxt).intersect(isl.Set(f"{{ {name}[j, a, b] : b mod 2 = 0 }}")).coalesce()
    p1 = pixels.subtract(p2).subtract(p2.apply(isl.Map(f"{{ {name}[j, a, b] -> {name}[j, a, b + 1] }}"))).coalesce()
    return {"all": pixels, "pix2": p2, "pix1": p1}


def lower_fused_chain(fn: Function, name: str, pool, target=None, kernels: str = "auto") -> Kernel:
    chain = chain_of(fn)
    info = fn.attrs["poly"]
    plan = analyze(chain.stages, info.get("tile_w"))
    t = template("fused_chain/ref.c.j2").module
    td = template("fused_chain/arm_dsp.c.j2").module
    rings = {id(chain.members[p]): _ring_expr(plan, p) for p in range(plan.final)}
    bodies, sched, ops, decls, headers = {}, None, [], [], []
    ref_stage = False
    col_off = -(-plan.scratch_bytes // 4) * 4
    scratch = col_off
    for i, (mc, st) in enumerate(zip(chain.members, chain.stages)):
        geo = st.geo
        anchor, epi_ops, _ = ConvGeom.of(mc.op)
        ops += [anchor.op] + [c.op for c in epi_ops]
        epi = _ChainEpilogue(mc, fn, rings, pool, mc.op.body.ty.ctype, anchor, epi_ops)
        kind = _dsp_kind(geo, target, kernels)
        if kind is not None:
            stmts, col_bytes = _dsp_stage(i, kind, geo, st, mc, anchor, epi, pool, plan, rings, chain, td,
                                          scratch, decls)
            scratch += -(-col_bytes // 4) * 4
            headers = list(HEADERS)
            sets = _pixel_pairs(plan.pixels[i])
            for sname, dims, cons, tail, body, sel in stmts:
                extra = f"{', '.join(dims)} : {cons}" if dims else ""
                dom = _lift(sets[sel], sname, extra)
                s = isl.UnionMap(stage_schedule(plan, i, sname, dims, tail + ("0",) * 4).intersect_domain(dom))
                sched = s if sched is None else sched.union(s)
                bodies[sname] = (("j", "a", "b") + dims, body)
            continue
        ref_stage = True
        stage = _stage_bodies(i, geo, st, mc, anchor, epi, pool, plan, rings, chain, t)
        gm = f"g, m : 0 <= g < {geo.G} and 0 <= m < {geo.M}"
        taps = (f"g, m, r, s, c : 0 <= g < {geo.G} and 0 <= m < {geo.M} and 0 <= c < {geo.Cg} and "
                f"0 <= r < {geo.KH} and 0 <= s < {geo.KW} and 0 <= {geo.sh}a + {geo.dh}r - {geo.pt} < {geo.H} and "
                f"0 <= {geo.sw}b + {geo.dw}s - {geo.pl} < {geo.W}")
        for kind, extra, dims, tail in (
                ("init", gm, ("g", "m"), ("g", "m", "0", "0", "0", "0")),
                ("mac", taps, ("g", "m", "r", "s", "c"), ("g", "m", "1", "r", "s", "c")),
                ("out", gm, ("g", "m"), ("g", "m", "2", "0", "0", "0"))):
            sname = f"S{i}_{kind}"
            dom = _lift(plan.pixels[i], sname, extra)
            s = isl.UnionMap(stage_schedule(plan, i, sname, dims, tail).intersect_domain(dom))
            sched = s if sched is None else sched.union(s)
            bodies[sname] = (("j", "a", "b") + dims, stage[sname])
    macros, loops = schedule_to_c(sched, bodies)
    decls += [f"int8_t *lb{p} = (int8_t *)scratch + {plan.lb_offset[p]};" for p in range(plan.final)]
    decls += ["int32_t acc;"] if ref_stage else []
    kernel = Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, decls, macros, macs=plan.macs,
                    scratch_bytes=scratch, headers=headers)
    kernel = finish(kernel, fn, None, [], "fused_chain")
    kernel.ops = ops
    kernel.plan = plan
    return kernel


__all__ = ["Chain", "Unfusable", "chain_of", "lower_fused_chain", "broadcast_index"]
