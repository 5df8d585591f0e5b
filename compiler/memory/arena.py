"""From the fused IR to arena offsets: kernel order, in-place choices, buffers, plan.

Steps (``plan_arena``):

1. The kernel graph: every fused-group call is a kernel; views (reshape) share their argument's
   memory; sizes are bytes; each kernel's scratch comes from a dry-run lowering (its constants go
   to a throwaway pool), its in-place options from ``tinyfuse.memory.inplace``.
2. ``schedule.best_schedule``: the order (residual blocks: shortcut first or last) and in-place
   choices with the smallest live peak, then the cheapest at that peak.
3. Lowering in that order (kernel ``k<i>_<group>``), with the in-place kernel where one is chosen.
4. Buffers: one per tensor value (``t<j>``: model inputs first, then kernel outputs in IR order),
   one per kernel scratch (``s<i>``, live during that kernel only). An in-place output joins its
   input's cluster (``Buffer.group``, same offset). Then ``plan_memory``.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ..ir import Call, Expr, Function, get_op, post_order
from ..ops.conv_geom import conv_group
from .inplace import conv_offset_form, prove_conv_offset
from .inplace import options as inplace_options
from .planner import Buffer, Plan, plan_memory
from .schedule import InPlace, KernelGraph, Node, Schedule, best_schedule, given_order

END = 10**9


@dataclass
class ArenaPlan:
    calls: list[Call]                    # kernel calls in execution order
    kernels: list                        # lowered Kernel per call
    inplace: dict[int, InPlace]          # step -> in-place option used
    buffers: list[Buffer]
    plan: Plan
    schedule: Schedule
    value_buffer: dict[int, str] = field(default_factory=dict)   # id(value) -> buffer name
    naive_bytes: int = 0
    bound_no_inplace: int = 0            # live-bytes bound of the best order without in-place reuse
    value_offset: dict[int, int] = field(default_factory=dict)   # id(view) -> bytes into its buffer (slice views)

    def offset(self, value: Expr) -> int:
        return self.plan.offsets[self.value_buffer[id(value)]] + self.value_offset.get(id(value), 0)

    def scratch_offset(self, step: int) -> int:
        return self.plan.offsets.get(f"s{step}", 0)


def view_offsets(func: Function) -> dict[int, int]:
    """id(view) -> byte offset of the view's first byte in its storage buffer, for the views
    (OpDef.is_view) that do not start at their operand's first byte (contiguous slices)."""
    out: dict[int, int] = {}
    for node in post_order(func.body):
        if isinstance(node, Call) and isinstance(node.op, str) and get_op(node.op).is_view:
            off = out.get(id(node.args[0]), 0) + get_op(node.op).view_offset(node)
            if off:
                out[id(node)] = off
    return out


def kernel_graph(func: Function, scratch: dict[int, int] | None = None, cost=None,
                 cache: dict | None = None, external: frozenset = frozenset(),
                 no_rules: frozenset = frozenset(), knobs=None) -> tuple[KernelGraph, list[Call]]:
    """The KernelGraph of a fused main function (nodes in IR post-order) and the calls behind its
    nodes. ``scratch``: id(call) -> scratch bytes of its normal kernel (0 if absent), (id(call), rule) -> those
    of an in-place option's kernel (default: the rule's); ``cost`` and
    ``cache`` (the compilation's in-place proof cache): see ``inplace.options``. ``external``: ids
    of parameters and kernel calls whose values live outside the arena (a stateful model's state and
    ring windows, memory/state.py): they take no arena bytes and no kernel writes over them in place.
    ``no_rules``: in-place rules not to use (step fission: kernels that cannot be sliced).
    ``knobs`` (``cost.knobs.Knobs`` or None): a group whose tuning knob says ``inplace`` False gets no
    in-place option."""
    root: dict[int, str] = {}
    sizes: dict[str, int] = {}
    for i, p in enumerate(func.params):
        root[id(p)] = f"v{i}"
        sizes[f"v{i}"] = 0 if id(p) in external else p.ty.nbytes
    outside = {root[i] for i in external if i in root}
    calls: list[Call] = []
    nodes: list[Node] = []
    shifted = view_offsets(func)
    for node in post_order(func.body):
        if isinstance(node, Call) and isinstance(node.op, Function):
            v = f"v{len(sizes)}"
            root[id(node)] = v
            sizes[v] = 0 if id(node) in external else node.ty.nbytes
            if id(node) in external:
                outside.add(v)
            est = node.op.attrs.get("poly", {}).get("scratch", 0)     # fused chains: their line buffers
            sb = (scratch or {}).get(id(node), est)
            opts = [] if node.op.attrs.get("poly") else inplace_options(node.op, cost, cache=cache)
            opts = [replace(o, scratch=sb if o.rule == "conv_offset" else (scratch or {}).get((id(node), o.rule), o.scratch))
                    for o in opts if o.rule != "conv_offset" or any(node.args[o.arg] is p for p in func.params)]
            # conv_offset: the first convs (over a model input) only; it runs the normal kernel; others as measured
            opts += [replace(o, scratch=sb) for o in node.op.attrs.get("poly_inplace", [])]   # same kernel
            if knobs is not None and not knobs.allows_inplace(node.op):
                opts = []
            opts = [o for o in opts if not shifted.get(id(node.args[o.arg]))   # in place: same start only
                    and root[id(node.args[o.arg])] not in outside and v not in outside and o.rule not in no_rules]
            nodes.append(Node(node.op.attrs.get("name", "kernel"), [root[id(a)] for a in node.args], v,
                              sb, list(opts), node))
            calls.append(node)
        elif isinstance(node, Call):          # a view (reshape): same memory as its argument
            root[id(node)] = root[id(node.args[0])]
    outputs = [root[id(o)] for o in func.outputs if id(o) in root]
    g = KernelGraph(sizes, nodes, [root[id(p)] for p in func.params], outputs, root)
    return g, calls


def plan_arena(func: Function, lower: Callable, options, inplace: bool = True, cost=None,
               dry_run: bool = True, external: frozenset = frozenset(), ring=None) -> ArenaPlan:
    """``lower(fn, name, dry, option)`` lowers a group (``option``: an InPlace or None; ``dry``: a
    trial whose constants must go to a throwaway pool). ``options`` (a CompileOptions): the planner,
    the alignment (bytes) and the compilation's in-place proof cache. ``dry_run`` False: the normal
    kernels need no scratch (portable kernels), so skip the trial lowering that measures it.
    ``external``: see :func:`kernel_graph`. ``options.knobs`` (tuning): per-group in-place vetoes and the
    ``order`` knob (``"ir"``: the IR's order, ``schedule.given_order``). ``ring(call, kernel)``: bytes of
    a buffer live during the first kernel only (``--input-rows``: the input's ring, memory/input_rows.py)."""
    planner, alignment, cache = options.planner, options.alignment, options.context.inplace_options
    knobs = options.knobs
    # step fission: the dw_plane kernel and the portable pixel-buffer kernel are not sliced (lower/slicing.py)
    no_rules = frozenset({"dw_plane"} | (set() if options.variants else {"pixel_buffer"})) \
        if options.max_step_instructions else frozenset()
    g0, calls0 = kernel_graph(func, cache=cache, external=external, no_rules=no_rules, knobs=knobs)
    scratch = {id(c): lower(c.op, f"dry{i}", True, None).scratch_bytes for i, c in enumerate(calls0)
               if dry_run or c.op.attrs.get("poly")}
    if dry_run:
        scratch.update(_option_scratch(g0, calls0, lower))
    g, calls = kernel_graph(func, scratch, cost, cache, external, no_rules, knobs)
    _refine_conv_offsets(g, lower, alignment)
    options = [n.inplace for n in g.nodes]
    for n in g.nodes:
        n.inplace = []
    bound = best_schedule(g).peak
    if inplace:
        for n, o in zip(g.nodes, options):
            n.inplace = o
    sched = given_order(g) if knobs is not None and knobs.order == "ir" else _placed_best(g, planner, alignment)
    out = _finish(func, g, calls, sched, lower, planner, alignment, ring)
    out.bound_no_inplace = bound
    return out


def _refine_conv_offsets(g: KernelGraph, lower, alignment: int) -> None:
    """Each conv_offset option proven again for the kernel its group lowers to (``inplace.
    conv_offset_form``: the least offset that kernel allows), dropped for a kernel no model states."""
    for i, n in enumerate(g.nodes):
        if not any(o.rule == "conv_offset" for o in n.inplace):
            continue
        geo = conv_group(n.ref.op)[2]
        form = conv_offset_form(lower(n.ref.op, f"dry{i}", True, None).kind, geo)
        R = prove_conv_offset(geo, form, alignment) if form else None
        n.inplace = [o if o.rule != "conv_offset" else replace(o, rel=-R) for o in n.inplace
                     if o.rule != "conv_offset" or R is not None]


def _option_scratch(g: KernelGraph, calls, lower) -> dict:
    """(id(call), rule) -> scratch bytes of the kernel an in-place option with its own kernel lowers to
    (pixel_buffer, dw_plane): a SIMD variant's may exceed the portable kernel's the rule states (its
    im2col columns and a two-pixel buffer)."""
    out = {}
    for i, (n, c) in enumerate(zip(g.nodes, calls)):
        for o in n.inplace:
            if o.rule in ("pixel_buffer", "dw_plane"):
                out[(id(c), o.rule)] = lower(c.op, f"dry{i}", True, o).scratch_bytes
    return out


def _scratch_buffers(kernels, order_calls, ring) -> list[Buffer]:
    """The kernels' scratch buffers ``s<i>``, live during kernel i, and the input ring (``ring``), live
    during the first kernel."""
    out = [Buffer(f"s{i}", kern.scratch_bytes, i, i) for i, kern in enumerate(kernels) if kern.scratch_bytes]
    if ring is not None and kernels:
        out.append(Buffer("ring", ring(order_calls[0], kernels[0]), 0, 0))
    return out


def _placed_best(g: KernelGraph, planner: str, alignment: int) -> Schedule:
    """``best_schedule(g)``; when it writes a conv over an input above its output (conv_offset) and the
    placed arena (scratch as estimated) exceeds its live-bytes bound, the schedule without conv_offset
    if that places smaller: a rigid cluster can fragment the arena more than it saves."""
    sched = best_schedule(g)
    if not any(o.rule == "conv_offset" for o in sched.inplace.values()):
        return sched
    placed = _trial_arena(g, sched, planner, alignment)
    if placed.arena_bytes <= placed.lower_bound:
        return sched
    kept = [n.inplace for n in g.nodes]
    for n in g.nodes:
        n.inplace = [o for o in n.inplace if o.rule != "conv_offset"]
    other = best_schedule(g)
    for n, o in zip(g.nodes, kept):
        n.inplace = o
    return other if _trial_arena(g, other, planner, alignment).arena_bytes < placed.arena_bytes else sched


def _trial_arena(g: KernelGraph, sched: Schedule, planner: str, alignment: int) -> Plan:
    """The placed plan of ``sched`` with each kernel's scratch as the graph estimates it (no lowering)."""
    sched = replace(sched, inplace={k: o for k, o in sched.inplace.items() if o.rel % alignment == 0})
    buffers = _tensor_buffers(g, sched)
    for i, k in enumerate(sched.order):
        opt = sched.inplace.get(k)
        sb = opt.scratch if opt is not None else g.nodes[k].scratch
        if sb:
            buffers.append(Buffer(f"s{i}", sb, i, i))
    return plan_memory(buffers, alignment=alignment, planner=planner)


def _finish(func, g: KernelGraph, calls, sched: Schedule, lower, planner, alignment, ring=None) -> ArenaPlan:
    order_calls = [calls[k] for k in sched.order]
    kernels, used = [], {}
    # an output placed ``rel`` bytes into its input's buffer needs rel on the arena's alignment (memory/
    # inplace.py ``transpose`` rounds to 64 bytes); else it gets a buffer of its own (same kernel code)
    sched = replace(sched, inplace={k: o for k, o in sched.inplace.items() if o.rel % alignment == 0})
    for i, k in enumerate(sched.order):
        c = calls[k]
        opt = sched.inplace.get(k)
        kernels.append(lower(c.op, f"k{i}_{c.op.attrs['name']}", False, opt))
        if opt is not None:
            used[i] = opt
    buffers = _tensor_buffers(g, sched) + _scratch_buffers(kernels, order_calls, ring)
    plan = plan_memory(buffers, alignment=alignment, planner=planner)
    names = {v: f"t{j}" for j, v in enumerate(g.sizes)}
    value_buffer = {e: names[v] for e, v in g.root.items()}
    return ArenaPlan(order_calls, kernels, used, buffers, plan, sched, value_buffer, sum(g.sizes.values()),
                     value_offset=view_offsets(func))


def _tensor_buffers(g: KernelGraph, sched: Schedule) -> list[Buffer]:
    """The tensors' buffers ``t<j>`` of ``sched``: lifetimes in steps, in-place clusters with each
    member's offset in its cluster (an input above its output, rel < 0: the cluster starts at the
    lowest member)."""
    step_of = {k: i for i, k in enumerate(sched.order)}
    # lifetimes in steps
    producer = {g.nodes[k].out: step_of[k] for k in range(len(g.nodes))}
    first = {v: producer.get(v, -1) for v in g.sizes}
    last = dict(first)
    for k, n in enumerate(g.nodes):
        for a in n.args:
            last[a] = max(last[a], step_of[k])
    for v in g.outputs:
        last[v] = END
    # in-place clusters: output joins the cluster of the input it overwrites
    cluster: dict[str, str] = {}
    rel: dict[str, int] = {}
    for i, k in enumerate(sched.order):
        opt = sched.inplace.get(k)
        if opt is not None:
            src = g.nodes[k].args[opt.arg]
            cluster[g.nodes[k].out] = cluster.setdefault(src, src)
            rel[g.nodes[k].out] = rel.get(src, 0) + opt.rel
    for src in set(cluster.values()):   # an input above its output (rel < 0): the cluster starts at the lowest member
        low = min(rel.get(v, 0) for v, c in cluster.items() if c == src)
        for v in {src} | {v for v, c in cluster.items() if c == src}:
            rel[v] = rel.get(v, 0) - min(low, 0)
    names = {v: f"t{j}" for j, v in enumerate(g.sizes)}
    return [Buffer(names[v], s, first[v], last[v], group=names[cluster[v]] if v in cluster else "",
                   rel=rel.get(v, 0)) for v, s in g.sizes.items()]
