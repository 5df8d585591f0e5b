"""poly_fuse: producer-consumer fusion across anchors, where it lowers the arena.

fuse_ops leaves one anchor per group; this pass joins conv groups into one kernel computed row by
row through line buffers (``tinyfuse.poly.linebuf``; ``tinyfuse.lower.conv.chain`` emits it):

    x ──► conv ──► dw 3x3 s2 ──► pw ──► y          expand / depthwise / project (MobileNetV2)
    a ──► conv ──► conv(+a) ──► b                  residual block (ResNet): b written over a
    a ──► conv s2 ──► conv(+ conv1x1 s2 (a))        downsampling block: the shortcut conv a stage

Candidates: a conv group F (or a whole-image int8 pool: a final pooling stage that accumulates
rows as they come) and any set of its producers (recursively) that are conv groups read only by
the set, up to ``max_stages``; and longer linear chains grown from the peak step's tensors
(``long_chains``: up through sole producers, down through sole readers, ending where the output is
smaller than every earlier member's), which may cost at most ``MAX_LONG_OVERHEAD`` extra estimated
instructions. Loop (greedy, memory first):

1. The arena peak of the current graph: ``oracle.hot`` (``memory.schedule.best_schedule``: kernel
   order + in-place choices), the lower bound the planner works against.
2. For every candidate whose intermediate tensors are live at a peak step: the widest column tile
   whose line buffers fit the scratch budget (full width = pure line buffers, no recompute; halving
   widths = overlapped tiles that recompute their seams), sized by isl (``linebuf.analyze``); the
   fused kernel may write its output over a dying parameter (full width only: a later tile still
   reads the input); ``oracle.decide`` (``cost.analytical.decide``, with the variants the options
   allow) keeps it if it lowers the peak by >= 1%, fits the budget and recomputes at most
   ``max_recompute`` (10%). Tuning knobs (``options.knobs``, ``cost.knobs``) may veto a candidate
   (``fuse`` False), ask for a long chain over the overhead bound (``fuse`` True: the RAM is wanted at
   that price; a long chain declined only for the bound is listed in
   ``options.context.declined_chains``, which ``tune`` and ``--ram-limit`` offer) or cap its tile
   width (``tile_w``).
3. The best option (lowest peak, then fewest estimated instructions) is proven with isl
   (``linebuf.prove``: line-buffer flow and the in-place output); a failed proof drops the option.
   Apply it and repeat until nothing lowers the peak.

Each merged group is a Primitive Function whose body calls its member groups (the numpy
interpreter evaluates it unchanged); ``attrs['poly']`` records strategy, tile width, ring rows,
recompute, scratch and the decision, ``attrs['poly_inplace']`` the proven in-place options.

The peak and cost answers come from an injected oracle (``tinyfuse.memory.oracle.ArenaOracle``: the
pass pipeline builds it from the CompileOptions), so this pass does not import the memory planner or
the cost model; line-buffer plans are cached in ``options.context.linebuf_plans``.
"""
from __future__ import annotations

import itertools
import logging

from ..ir import Call, Function, IRModule, Var, post_order, users
from ..ir.rewrite import with_new_operands
from ..ops.conv_geom import conv_group, global_pool_group
from ..poly.chain import Unfusable, chain_of
from ..poly.linebuf import analyze, prove

log = logging.getLogger("tinyfuse.poly_fuse")

# A chain longer than max_stages (``long_chains``) may cost at most this many extra instructions over
# its members unfused (the cost model's estimate, the portable members priced as the in-place kernels
# the memory plan gives them: ``ChainEstimate.overhead_bound``): RAM is not bought with a slower model.
MAX_LONG_OVERHEAD = 0.10


def poly_fuse(mod: IRModule, options, oracle, max_stages: int = 4, max_rounds: int = 16,
              max_recompute: float = 1.10, max_overhead: float | None = None) -> IRModule:
    """The pass (module doc). ``options``: the CompileOptions (``scratch_bytes`` is the line-buffer
    budget; its context caches the line-buffer plans); ``oracle``: peak and cost answers (an
    ``ArenaOracle``); ``max_recompute``: the most MACs a fused kernel may compute, relative to its
    members unfused; ``max_overhead``: the most extra estimated instructions of a chain longer than
    ``max_stages`` (None: MAX_LONG_OVERHEAD)."""
    main = mod.main
    rejected: set = set()
    max_overhead = MAX_LONG_OVERHEAD if max_overhead is None else max_overhead
    for _ in range(max_rounds):
        base, hot = oracle.hot(main)
        found = []
        for members in candidates(main, max_stages) + long_chains(main, hot, max_stages):
            if any(id(m) in hot for m in members[:-1]):      # fusing removes only the members' outputs
                bound = max_overhead if len(members) > max_stages else None
                found += _options(main, members, options, oracle, base, rejected, max_recompute, bound)
        found.sort(key=lambda o: (o["peak"], o["est"].fused.instructions))
        applied = False
        for opt in found:
            if opt["key"] in rejected:
                continue
            why = _verify(opt)
            if why is None and oracle.peak(opt["main"]) >= base:
                why = "without the in-place options that failed their proof it no longer lowers the peak"
            if why:
                log.info("poly_fuse: %s rejected by the proof: %s", opt["name"], why)
                rejected.add(opt["key"])
                continue
            main = opt["main"]
            applied = True
            log.info("poly_fuse: %s (%s)", opt["name"], opt["reason"])
            break
        if not applied:
            break
    return mod.with_main(main)


def _analyze(stages, tw, cache: dict):
    """linebuf.analyze, cached in ``cache`` on the chain's geometry (MobileNet repeats its blocks)."""
    key = (tuple(stages), tw)
    if key not in cache:
        cache[key] = analyze(stages, tw)
    return cache[key]


def _is_conv(c) -> bool:
    return isinstance(c, Call) and isinstance(c.op, Function) and not c.op.attrs.get("poly") \
        and conv_group(c.op) is not None


def _is_pool(c) -> bool:
    """A whole-image int8 pool group: a chain's final pooling stage (``linebuf.Stage.pool``)."""
    return isinstance(c, Call) and isinstance(c.op, Function) and not c.op.attrs.get("poly") \
        and global_pool_group(c.op) is not None


def _family(fn: Function) -> str:
    got = conv_group(fn)
    return got[2].family if got is not None else "pool"


def candidates(main: Function, max_stages: int) -> list[list[Call]]:
    """Member lists (topological, final last) of every fusable set (module doc)."""
    uses = users(main.body)
    outs = {id(o) for o in main.outputs}
    order = {id(n): i for i, n in enumerate(post_order(main.body))}

    def producers(c: Call) -> list[Call]:
        seen, out = set(), []
        for a in c.args:
            if _is_conv(a) and id(a) not in outs and id(a) not in seen and \
                    all(u is c for u in uses.get(id(a), [])):
                seen.add(id(a))
                out.append(a)
        return out

    def trees(c: Call, room: int) -> list[list[Call]]:
        result = [[c]]
        choices = [[[]] + [t for t in trees(p, room - 1) if len(t) < room] for p in producers(c)]
        for combo in itertools.product(*choices):
            members = [c] + [m for t in combo for m in t]
            if 1 < len(members) <= room and members != [c]:
                result.append(members)
        return result

    cands = []
    for c in post_order(main.body):
        if _is_conv(c) or (_is_pool(c) and producers(c)):
            for t in trees(c, max_stages):
                if len(t) > 1:
                    cands.append(sorted(t, key=lambda m: order[id(m)]))
    return cands


def long_chains(main: Function, hot: set[int], max_stages: int, limit: int = 16) -> list[list[Call]]:
    """Linear chains longer than ``max_stages`` grown from the calls whose outputs are live at the
    peak (``hot``): upstream through the sole conv producer read only by the chain, downstream through
    the sole reader (a conv reading nothing else of the graph's convs, or a whole-image pool, which
    ends the chain), up to ``limit`` stages. Of each path, the sub-paths from its head that end where
    the output is smaller than every earlier member's (only there can the peak drop)."""
    uses = users(main.body)
    outs = {id(o) for o in main.outputs}

    def sole_user(c: Call):
        us = uses.get(id(c), [])
        if id(c) in outs or len(us) != 1 or not (_is_conv(us[0]) or _is_pool(us[0])):
            return None
        u = us[0]
        return u if sum(1 for a in u.args if a is c) == 1 and all(a is c or not _is_conv(a) for a in u.args) else None

    def sole_producer(c: Call):
        convs = [a for a in c.args if _is_conv(a)]
        return convs[0] if len(convs) == 1 and sole_user(convs[0]) is c else None

    found, seen = [], set()
    for c in post_order(main.body):
        if id(c) not in hot or not _is_conv(c):
            continue
        path = [c]
        while len(path) < limit and (p := sole_producer(path[0])) is not None:
            path.insert(0, p)
        while len(path) < limit and _is_conv(path[-1]) and (u := sole_user(path[-1])) is not None:
            path.append(u)
        smallest = path[0].ty.nbytes
        for n in range(1, len(path)):
            if path[n].ty.nbytes < smallest and n + 1 > max_stages:
                key = tuple(id(m) for m in path[:n + 1])
                if key not in seen:
                    seen.add(key)
                    found.append(path[:n + 1])
            smallest = min(smallest, path[n].ty.nbytes)
    return found


def merge(main: Function, members: list[Call], attrs: dict) -> tuple[Function, Call]:
    """main with ``members`` replaced by one call of a merged Function (module doc)."""
    mset = {id(m) for m in members}
    final = members[-1]
    params: list[Var] = []
    ext: list = []
    pmap: dict[int, Var] = {}
    inner: dict[int, Call] = {}
    for m in members:
        args = []
        for a in m.args:
            if id(a) in mset:
                args.append(inner[id(a)])
                continue
            if id(a) not in pmap:
                pmap[id(a)] = Var(f"p{len(params)}", a.ty)
                params.append(pmap[id(a)])
                ext.append(a)
            args.append(pmap[id(a)])
        inner[id(m)] = Call(m.op, tuple(args), m.attrs, m.ty, m.span)
    fn = Function(tuple(params), inner[id(final)], attrs)
    memo: dict[int, object] = {}
    new_call = None
    for node in post_order(main.body):
        if id(node) in mset:
            if node is final:
                new_call = Call(fn, tuple(memo[id(a)] for a in ext), {}, final.ty, final.span)
                memo[id(node)] = new_call
            continue
        memo[id(node)] = with_new_operands(node, memo)
    return Function(main.params, memo[id(main.body)], dict(main.attrs)), new_call


def _tile_widths(ow: int) -> list[int]:
    ws, w = [], ow
    while w >= 1:
        ws.append(w)
        if w == 1:
            break
        w = -(-w // 2)
    return ws


def _options(main, members, options, oracle, base, rejected, max_recompute=1.10, max_overhead=None) -> list[dict]:
    """Fusion options of one candidate that the cost model accepts (``max_overhead``: the bound on
    its estimated extra instructions, None: none), with their arena peaks."""
    names = "_".join(_family(m.op) for m in members)
    knob = options.knobs.chain([m.op for m in members]) if options.knobs is not None else {}
    if knob.get("fuse") is False:           # tuning: this chain stays unfused (cost.knobs)
        return []
    bound = None if knob.get("fuse") is True else max_overhead
    attrs = {"Primitive": True, "name": f"polyfused_{names}", "poly": {}}
    trial, call = merge(main, members, attrs)
    try:
        chain = chain_of(call.op)
    except Unfusable as e:
        log.debug("poly_fuse: %s not fusable: %s", names, e)
        return []
    out = []
    gF = chain.stages[-1].geo
    widths = [gF.OW] if chain.stages[-1].pool else _tile_widths(gF.OW)   # a pooling chain: one tile
    for tw in widths:                   # widest first: the first that fits recomputes least
        key = (tuple(id(m) for m in members), tw)
        if key in rejected or tw > knob.get("tile_w", tw):
            continue
        try:
            plan = _analyze(chain.stages, tw, options.context.linebuf_plans)
        except ValueError as e:
            log.debug("poly_fuse: %s not fusable: %s", names, e)
            return out
        if plan.scratch_bytes > options.scratch_bytes:
            continue
        est = oracle.estimate(plan, [m.op for m in members])
        inplace = _inplace_options(call.op, plan, oracle)
        info = {"strategy": "line_buffer" if plan.ntiles == 1 else "overlapped_tiles", "tile_w": tw,
                "ntiles": plan.ntiles, "rows": plan.rows[:-1], "recompute": round(plan.recompute, 4),
                "scratch": plan.scratch_bytes, "stages": len(members)}
        fn = Function(call.op.params, call.op.body, {**attrs, "poly": info, "poly_inplace": inplace})
        trial_main, _ = merge(main, members, fn.attrs)
        peak = oracle.peak(trial_main)
        d = oracle.decide(est, base, peak, max_recompute, bound)
        if not d.fuse:
            if bound is not None and oracle.decide(est, base, peak, max_recompute, None).fuse:
                _declined(options, fn.attrs["name"], members, peak, est)
            break                       # the widest width that fits decides (narrower: more recompute)
        info["decision"] = d.reason
        info["estimate"] = {"instructions_fused": round(est.fused.instructions),
                            "instructions_unfused": round(est.unfused.instructions),
                            "live_registers": est.live_registers}
        out.append({"key": key, "main": trial_main, "peak": peak, "est": est, "plan": plan,
                    "name": fn.attrs["name"], "reason": d.reason, "members": members})
        break
    return out


def _declined(options, name: str, members, peak: int, est) -> None:
    """Record a long chain declined only for its estimated extra instructions (module doc)."""
    fns = [m.op for m in members]
    if any(d["members"] == fns for d in options.context.declined_chains):
        return
    options.context.declined_chains.append({"name": name, "members": fns, "stages": len(fns), "peak": peak,
                                            "overhead": round(est.overhead_bound, 4)})


def _inplace_options(fn: Function, plan, oracle) -> list:
    """The in-place options of a fused kernel: its output over each int8 NHWC parameter at least as
    large (one tile only: a later tile still reads the input; not after a pooling stage)."""
    gF = plan.stages[-1].geo
    if plan.ntiles != 1 or plan.stages[-1].pool:
        return []
    return [oracle.output_over(q, plan.scratch_bytes) for q, p in enumerate(fn.params)
            if len(p.ty.shape) == 4 and p.ty.dtype == "int8" and p.ty.nbytes >= gF.out_bytes]


def _verify(opt) -> str | None:
    """isl proof of the chosen option; in-place options that fail are dropped (then the option must
    still lower the peak to stand)."""
    main = opt["main"]
    call = next(n for n in post_order(main.body) if isinstance(n, Call) and isinstance(n.op, Function)
                and n.op.attrs.get("name") == opt["name"] and n.op.attrs.get("poly"))
    plan = opt["plan"]
    shapes = {q: tuple(p.ty.shape[1:]) for q, p in enumerate(call.op.params) if len(p.ty.shape) == 4}
    why = prove(plan, shapes)
    if why:
        return why
    keep = [o for o in call.op.attrs.get("poly_inplace", []) if prove(plan, shapes, o.arg) is None]
    call.op.attrs["poly_inplace"] = keep
    return None
