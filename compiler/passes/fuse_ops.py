"""fuse_ops: vertical operator fusion (TVM FuseOps rules, on our DAG).

Each group becomes one kernel: a Function marked Primitive, called from main. Rules, as comparisons
over OpPattern (ELEMWISE < BROADCAST < INJECTIVE < COMM_REDUCE < OUT_ELEMWISE_FUSABLE < OPAQUE):

    anchor (conv2d / matmul / pool, OUT_ELEMWISE_FUSABLE)   starts a group
      │  single-use output
      ▼
    add(·, bias) → relu → clip ...   ELEMWISE/BROADCAST ops join the group of their producer
                                      when that producer's value has no other user: the epilogue
                                      runs on the accumulator in a register

    residual:   a ──► conv1 ──► conv2 ──┐
                 └─────────────────── add      add joins the group of the operand produced LATER
                                               (conv2); a is read from memory in its epilogue

    x → sigmoid → mul → ...          ELEMWISE/BROADCAST ops with no fusable producer start an
                                      element-wise group that later ones may join
    transpose, softmax               own kernel, absorb nothing; reshape is a view (no kernel)

A group never holds two anchors; joining anchors is the polyhedral pass's job. With the pass
disabled, ``wrap_kernels`` (always in the pipeline, right after it) makes every op its own kernel
(same Function form, the form lowering needs), so the gain can be measured.
"""
from __future__ import annotations

from ..ir import Call, Constant, Expr, Function, IRModule, OpPattern, Tuple, Var, get_op, post_order, users
from ..ir.op import rebuild_call
from ..ops import ops_where

VIEW_OPS = ops_where(lambda d: d.is_view)    # reshape


def _fusable_into(kind: OpPattern) -> bool:
    return kind == OpPattern.OUT_ELEMWISE_FUSABLE or kind <= OpPattern.BROADCAST


def _dequantizes_transpose(node: Call, producer: Expr) -> bool:
    """A (de)quantize of a transpose's output joins the transpose's kernel (qdq_layout's forms): an int8
    transpose writes a float output; a float image is read in NCHW and written int8 NHWC."""
    return node.op in ("qnn.dequantize", "qnn.quantize") and isinstance(producer, Call) and producer.op == "transpose"


def fuse_ops(mod: IRModule, enabled: bool = True) -> IRModule:
    """Group the calls of main into kernel Functions (module doc); ``enabled`` False: one per op."""
    func = mod.main
    order = [n for n in post_order(func.body) if isinstance(n, Call) and n.op not in VIEW_OPS]
    position = {id(n): i for i, n in enumerate(order)}
    uses = users(func.body)
    outputs = {id(o) for o in func.outputs}
    group_of: dict[int, int] = {}          # id(call) -> group index
    groups: list[list[Call]] = []          # members in topological order; last = root
    kinds: list[OpPattern] = []

    for node in order:
        kind = get_op(node.op).pattern
        target = None
        if enabled and kind <= OpPattern.BROADCAST:
            candidates = [a for a in node.args if id(a) in group_of and groups[group_of[id(a)]][-1] is a
                          and len(uses.get(id(a), [])) == 1 and id(a) not in outputs
                          and (_fusable_into(kinds[group_of[id(a)]]) or _dequantizes_transpose(node, a))
                          # an anchor's epilogue runs at the anchor's output indices: it cannot broadcast
                          # the anchor's value to a larger shape (e.g. gap(x) + x)
                          and (kinds[group_of[id(a)]] <= OpPattern.BROADCAST or a.ty.shape == node.ty.shape)]
            if candidates:
                target = group_of[id(max(candidates, key=lambda a: position[id(a)]))]
        if target is None:
            groups.append([node])
            kinds.append(kind)
            group_of[id(node)] = len(groups) - 1
        else:
            groups[target].append(node)
            group_of[id(node)] = target
    return mod.with_main(_build(func, groups, group_of))


def wrap_kernels(mod: IRModule) -> IRModule:
    """Every call of main left outside a kernel Function (views excepted) in its own Primitive
    Function: all of them when fuse_ops was disabled (the same module as ``fuse_ops(mod,
    enabled=False)``), none after fuse_ops (the module is returned unchanged)."""
    func = mod.main
    bare = [n for n in post_order(func.body) if isinstance(n, Call) and isinstance(n.op, str) and n.op not in VIEW_OPS]
    if not bare:
        return mod
    return mod.with_main(_build(func, [[n] for n in bare], {id(n): i for i, n in enumerate(bare)}))


def _group_name(members: list[Call]) -> str:
    return "fused_" + "_".join(m.op.replace("nn.", "").replace(".", "_") for m in members)


def _build(func: Function, groups: list[list[Call]], group_of: dict[int, int]) -> Function:
    """Rewrite main so each group is ``Call(Function[Primitive](params) {members}, external args)``."""
    memo: dict[int, Expr] = {}
    roots = {id(g[-1]): gi for gi, g in enumerate(groups)}
    for node in post_order(func.body):
        if isinstance(node, Call) and id(node) in roots:
            members = groups[roots[id(node)]]
            inner: dict[int, Expr] = {}
            params: list[Var] = []
            ext_args: list[Expr] = []
            for m in members:
                new_args = []
                for a in m.args:
                    if id(a) in inner:
                        new_args.append(inner[id(a)])
                    elif isinstance(a, Constant):
                        new_args.append(a)
                    else:
                        v = Var(f"p{len(params)}", a.ty)
                        params.append(v)
                        ext_args.append(memo[id(a)])
                        inner[id(a)] = v
                        new_args.append(v)
                inner[id(m)] = rebuild_call(m, tuple(new_args))
            prim = Function(tuple(params), inner[id(node)], {"Primitive": True, "name": _group_name(members)})
            memo[id(node)] = Call(prim, tuple(ext_args), {}, node.ty, node.span)
        elif isinstance(node, Call) and id(node) in group_of:
            memo[id(node)] = node  # interior member: reachable only through its group
        elif isinstance(node, Call):
            memo[id(node)] = rebuild_call(node, tuple(memo[id(a)] for a in node.args))
        elif isinstance(node, Tuple):
            memo[id(node)] = Tuple(tuple(memo[id(f)] for f in node.fields))
        else:
            memo[id(node)] = node
    return Function(func.params, memo[id(func.body)], func.attrs)
