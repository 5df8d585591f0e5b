"""fold_views: batched matmuls read their operands, and write their result, through data-movement
chains as index maps, so splitting and merging attention heads runs no copy kernel:

    nn.matmul(transpose(reshape(q), p), transpose(reshape(k), r))
        → nn.batch_matmul(q, k, a_view=V(q), b_view=V(k))              # qnn.batch_matmul likewise
    transpose(E(batch_matmul(a, b)), p)  →  E(batch_matmul(a, b, out_axes=p))   # or of such an nn.matmul
        E: single-use element-wise ops whose other operands are single values (requantize, scale)

An operand chain of reshape / transpose / slice_axis is folded when it holds a transpose or a slice
(a chain of reshapes is a view already) and each step is a no-copy view (``tinyfuse.ops.view``); the
longest such chain ending at the operand is taken. The bypassed ops lose their users and vanish.
Only activation × activation matmuls with operands of rank >= 2 become ``nn.batch_matmul``, and
constant × activation ones (the dense kernels want the constant on the right).
"""
from __future__ import annotations

from ..ir import Call, Constant, Expr, IRModule, OpPattern, call, get_op, rewrite, users
from ..ops import ops_where
from ..ops.view import contiguous, reshape_view, slice_view, transpose_view

VIEW_OPS = ops_where(lambda d: d.strided_view)    # reshape, transpose, slice_axis
READERS = ops_where(lambda d: d.reads_views)      # nn.batch_matmul, qnn.batch_matmul


def _is(e, *ops) -> bool:
    return isinstance(e, Call) and isinstance(e.op, str) and e.op in ops


def _act_matmul(e) -> bool:
    """An activation × activation nn.matmul fold_views turns into nn.batch_matmul."""
    return (_is(e, "nn.matmul") and not any(isinstance(a, Constant) for a in e.args)
            and all(a.ty.ndim >= 2 for a in e.args))


def _const_lhs_matmul(e) -> bool:
    """A constant × activation nn.matmul (a learned query attending over the activations): the dense
    kernels take their weights as the right operand, so it becomes nn.batch_matmul, which reads a
    constant operand from flash."""
    return (_is(e, "nn.matmul") and isinstance(e.args[0], Constant) and not isinstance(e.args[1], Constant)
            and all(a.ty.ndim >= 2 for a in e.args))


def view_of(e: Expr):
    """(root, view) reading ``e`` through its longest foldable chain of view ops, or None when no
    chain with a transpose or slice folds."""
    steps = []
    while _is(e, *VIEW_OPS):
        steps.append(e)
        e = e.args[0]
    while steps:                      # steps[-1] is next to the root; drop it while the chain does not fold
        v = contiguous(steps[-1].args[0].ty.shape)
        for s in reversed(steps):
            if s.op == "reshape":
                v = reshape_view(v, s.ty.shape)
            elif s.op == "transpose":
                v = transpose_view(v, s.attrs["axes"])
            else:
                v = slice_view(v, s.attrs["axis"], s.attrs["begin"], s.attrs["end"])
            if v is None:
                break
        if v is not None:
            return (steps[-1].args[0], v) if any(s.op != "reshape" for s in steps) else None
        steps.pop()
    return None


def reads_in_place(value: Expr, uses: dict, outputs: set) -> bool:
    """True when every use of ``value`` reaches, through view ops only, an operand fold_views folds
    into a view reader (so slicing ``value`` out of a packed buffer costs no copy)."""
    if id(value) in outputs or not uses.get(id(value)):
        return False
    for u in uses[id(value)]:
        if _is(u, *VIEW_OPS):
            if not reads_in_place(u, uses, outputs):
                return False
        elif not (_is(u, *READERS) and u.attrs[("a_view", "b_view")[list(u.args).index(value)]] is None
                  or _act_matmul(u)):
            return False
    return True


def _fold_operands(node: Call) -> Call | None:
    views = [node.attrs["a_view"], node.attrs["b_view"]] if node.op in READERS else [None, None]
    args, changed = list(node.args), False
    for i, a in enumerate(args):
        folded = view_of(a) if views[i] is None else None
        if folded is not None:
            args[i], views[i] = folded
            changed = True
    if not changed:
        return None
    op = "nn.batch_matmul" if node.op == "nn.matmul" else node.op
    attrs = {k: v for k, v in node.attrs.items() if k not in ("a_view", "b_view")}
    return _call(op, args, {**attrs, "a_view": views[0], "b_view": views[1]}, node.span)


def _call(op: str, args, attrs: dict, span: str) -> Call:
    return call(op, *args, span=span, **attrs)


def _fold_out_transpose(node: Call, orig: Call, uses: dict) -> Expr | None:
    """transpose(E(reader)) → E(reader with out_axes composed), E single-use element-wise ops."""
    chain, e, o = [], node.args[0], orig.args[0]
    while not (_is(e, *READERS) or _act_matmul(e)):
        if not (isinstance(e, Call) and isinstance(e.op, str) and get_op(e.op).pattern <= OpPattern.BROADCAST) \
                or len(uses.get(id(o), [])) != 1:
            return None
        main = [i for i, a in enumerate(e.args) if a.ty.size != 1]
        if len(main) != 1 or e.args[main[0]].ty.shape != e.ty.shape:
            return None
        chain.append((e, main[0]))
        e, o = e.args[main[0]], o.args[main[0]]
    if len(uses.get(id(o), [])) != 1:
        return None
    axes = node.attrs["axes"]
    if e.op == "nn.matmul":
        e = _call("nn.batch_matmul", e.args, {}, e.span)
    inner = e.attrs["out_axes"] or tuple(range(e.ty.ndim))
    y = _call(e.op, e.args, {**e.attrs, "out_axes": tuple(inner[a] for a in axes)}, e.span)
    for c, i in reversed(chain):
        args = list(c.args)
        args[i] = y
        y = _call(c.op, args, c.attrs, c.span)
    return y


def fold_views(mod: IRModule) -> IRModule:
    uses = users(mod.main.body)

    def visit(node, orig):
        if _act_matmul(node) or _is(node, *READERS):
            return _fold_operands(node)
        if _const_lhs_matmul(node):
            return _fold_operands(node) or _call("nn.batch_matmul", node.args, {}, node.span)
        if _is(node, "transpose"):
            return _fold_out_transpose(node, orig, uses)
        return None

    return mod.with_main(rewrite(mod.main, visit))
