"""fuse_horizontal: sibling ops that read the same tensor run as one kernel (runs before fuse_ops).

    x ─┬─ matmul(x, Wq) → add(bq)                x ─ horizontal { matmul(x, [Wq | Wk | Wv])
       ├─ matmul(x, Wk) → add(bk)       ⇒                         → slice → add(bq) | add(bk) | add(bv) }
       └─ matmul(x, Wv) → add(bv)                     └─ packed [q | k | v] ─ slice_axis + reshape = q, k, v

Siblings are grouped by kind, each with the single-use element-wise chain that follows it (what
fuse_ops would fuse into it; the chain's other operands must be constants, model inputs or x):

    matmul    nn.matmul / qnn.matmul(x, constant 2-D W): one matmul over the weights concatenated along N
    conv      nn.conv2d / qnn.conv2d(x, constant W), groups 1, same window attributes: weights
              concatenated along O (inception-style 1x1 branches)
    elemwise  unary element-wise ops of x (sigmoid(x), tanh(x)): x is read once per element

The ``horizontal`` op (``tinyfuse.ops.horizontal``) writes the branch outputs packed one after the
other, so branch j is a contiguous range of one buffer, and each former branch output becomes
``reshape(slice_axis(h, 0, offset_j, offset_j + size_j))``.

Policy. A consumer that reads views (``fold_views``: batched matmuls through reshape / transpose /
slice chains) reads its branch in place; any other consumer runs a ``slice_axis`` copy kernel, which
costs the memory traffic the fusion saved. With ``views_only`` (the pipeline's default) a branch
joins a group only when all its consumers read in place; ``views_only=False`` fuses every sibling
group (``VIEWS_ONLY`` sets the pipeline's choice). Branches that are model outputs never join under
``views_only``.
"""
from __future__ import annotations

import logging

import numpy as np

from ..ir import Call, Constant, Expr, Function, IRModule, OpPattern, Tuple, Var, call, get_op, post_order, users
from ..ir.op import rebuild_call
from ..ir.rewrite import with_new_operands
from ..ops import ops_where
from ..ops.horizontal import Branches
from .fold_views import reads_in_place

log = logging.getLogger("tinyfuse.fuse_horizontal")

VIEWS_ONLY = True      # the pipeline's policy (module docstring); tests may switch it off
ANCHORS = {op: get_op(op).horizontal for op in ops_where(lambda d: d.horizontal)}   # (q)nn.conv2d, (q)nn.matmul


def _sibling_key(node: Call, x: Expr):
    """The kind key under which ``node`` (a user of x) may fuse with others, or None."""
    if not isinstance(node.op, str) or not node.args or node.args[0] is not x:
        return None
    kind = ANCHORS.get(node.op)
    if kind == "matmul" and isinstance(node.args[1], Constant) and node.args[1].ty.ndim == 2:
        return kind, node.op, tuple(sorted(node.attrs.items()))
    if kind == "conv" and isinstance(node.args[1], Constant) and node.attrs["groups"] == 1:
        w = node.args[1].ty.shape
        spatial = w[2:] if node.attrs["kernel_layout"] == "OIHW" else w[1:3]
        return kind, node.op, spatial, tuple(sorted(node.attrs.items()))
    opdef = get_op(node.op)
    if opdef.pattern == OpPattern.ELEMWISE and len(node.args) == 1 and node.op != "copy":
        return ("elemwise",)
    return None


class _Group:
    """One horizontal group: shared input x, its kind, and per branch (anchor, chain, output)."""

    def __init__(self, x: Expr, kind: str, branches: list[tuple[Call, list[Call]]]):
        self.x, self.kind, self.branches = x, kind, branches

    @property
    def outputs(self) -> list[Expr]:
        return [chain[-1] if chain else anchor for anchor, chain in self.branches]


def _grow(anchor: Call, x: Expr, uses: dict, outputs: set, downstream: set) -> list[Call]:
    """The single-use element-wise chain after ``anchor`` (shape-preserving; other operands available
    before the group: constants, model inputs or x)."""
    chain, b = [], anchor
    while id(b) not in outputs and len(uses.get(id(b), [])) == 1:
        u = uses[id(b)][0]
        if not (isinstance(u, Call) and isinstance(u.op, str) and get_op(u.op).pattern <= OpPattern.BROADCAST
                and u.ty.shape == b.ty.shape):
            break
        others = [a for a in u.args if a is not b]
        if any(not (isinstance(a, (Constant, Var)) or a is x) or id(a) in downstream for a in others):
            break
        chain.append(u)
        b = u
    return chain


def _downstream(starts: list[Expr], uses: dict) -> set[int]:
    seen, stack = set(), list(starts)
    while stack:
        e = stack.pop()
        for u in uses.get(id(e), []):
            if id(u) not in seen:
                seen.add(id(u))
                stack.append(u)
    return seen


def find_groups(func: Function, views_only: bool | None = None) -> list[_Group]:
    """Sibling groups of ``func`` (each with >= 2 branches) under the policy (module docstring)."""
    views_only = VIEWS_ONLY if views_only is None else views_only
    uses = users(func.body)
    outputs = {id(o) for o in func.outputs}
    groups = []
    for x in post_order(func.body):
        if isinstance(x, Constant) or len(uses.get(id(x), [])) < 2:
            continue
        by_key: dict = {}
        for u in dict.fromkeys(uses[id(x)]):      # distinct users in first-use order
            key = isinstance(u, Call) and _sibling_key(u, x)
            if key:
                by_key.setdefault(key, []).append(u)
        for key, anchors in by_key.items():
            if len(anchors) < 2:
                continue
            down = _downstream(anchors, uses)
            branches = [(a, _grow(a, x, uses, outputs, down)) for a in anchors]
            by_dtype: dict = {}
            for a, chain in branches:
                out = chain[-1] if chain else a
                if views_only and not reads_in_place(out, uses, outputs):
                    log.info("%s: not fused horizontally (a consumer would need a copy)", a.span or a.op)
                    continue
                by_dtype.setdefault(out.ty.dtype, []).append((a, chain))
            groups += [_Group(x, key[0], br) for br in by_dtype.values() if len(br) >= 2]
    return groups


def _branch_fn(g: _Group) -> tuple[Branches, list[Expr]]:
    """The branches of the horizontal op and its operands (x, then the model inputs the chains read)."""
    x_var = Var("x", g.x.ty)
    extras = [a for _, chain in g.branches for c in chain for a in c.args if isinstance(a, Var) and a is not g.x]
    extras = list(dict.fromkeys(extras))
    env: dict[int, Expr] = {id(g.x): x_var, **{id(e): Var(f"e{i}", e.ty) for i, e in enumerate(extras)}}
    params = (x_var, *(env[id(e)] for e in extras))
    outs, parts = [], None
    if g.kind == "elemwise":
        heads = [rebuild_call(a, tuple(env.get(id(v), v) for v in a.args)) for a, _ in g.branches]
    else:
        parts = tuple(Function(params, _chain(rebuild_call(a, (x_var, a.args[1])), a, chain, env))
                      for a, chain in g.branches)
        first = g.branches[0][0]
        ws = [a.args[1].value for a, _ in g.branches]
        axis_w = 1 if g.kind == "matmul" else 0                   # N of [K, N]; O of OIHW / OHWI
        fused = call(first.op, x_var, Constant(np.concatenate(ws, axis=axis_w), "horizontal_weights"),
                     span="+".join(a.span for a, _ in g.branches), **first.attrs)
        axis = fused.ty.ndim - 1 if g.kind == "matmul" or first.attrs["data_layout"] == "NHWC" else 1
        heads, begin = [], 0
        for w in ws:
            n = w.shape[axis_w]
            heads.append(call("slice_axis", fused, axis=axis, begin=begin, end=begin + n))
            begin += n
    outs = [_chain(head, anchor, chain, env) for head, (anchor, chain) in zip(heads, g.branches)]
    return Branches(Function(params, Tuple(tuple(outs))), parts), [g.x, *extras]


def _chain(head: Expr, anchor: Call, chain: list[Call], env: dict) -> Expr:
    """``chain`` (which followed ``anchor``) rebuilt on ``head``, other operands through ``env``."""
    y, prev = head, anchor
    for c in chain:
        y = rebuild_call(c, tuple(y if a is prev else env.get(id(a), a) for a in c.args))
        prev = c
    return y


def fuse_horizontal(mod: IRModule, views_only: bool | None = None) -> IRModule:
    """Fuse the sibling groups of ``mod`` (``views_only``: None = the module's VIEWS_ONLY)."""
    func = mod.main
    groups = find_groups(func, views_only)
    if not groups:
        return mod
    where = {id(out): (gi, j) for gi, g in enumerate(groups) for j, out in enumerate(g.outputs)}
    made: dict[int, Expr] = {}
    memo: dict[int, Expr] = {}
    for node in post_order(func.body):
        if id(node) in where:
            gi, j = where[id(node)]
            g = groups[gi]
            if gi not in made:
                branches, operands = _branch_fn(g)
                made[gi] = call("horizontal", *(memo[id(o)] for o in operands), branches=branches,
                                span="+".join(a.span or a.op for a, _ in g.branches))
            h, (offset, shape) = made[gi], made[gi].attrs["branches"].segments()[j]
            part = call("slice_axis", h, axis=0, begin=offset, end=offset + int(np.prod(shape, dtype=np.int64)))
            memo[id(node)] = call("reshape", part, newshape=shape) if len(shape) != 1 else part
        else:
            memo[id(node)] = with_new_operands(node, memo)
    return mod.with_main(Function(func.params, memo[id(func.body)], func.attrs))
