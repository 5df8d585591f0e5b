"""Bottom-up rewriting of a Function: every changed Call is rebuilt through the op registry
(``rebuild_call``), so it is re-typed at the line that changed it.

Kept apart from ``expr.py`` (the node classes, which know nothing of the registry) and ``op.py``
(the registry, which builds nodes): this module uses both, neither uses it.
"""
from __future__ import annotations

from typing import Callable

from .expr import Call, Expr, Function, Tuple, post_order
from .op import rebuild_call


def with_new_operands(node: Expr, memo: dict[int, Expr]) -> Expr:
    """``node`` over the rewritten operands ``memo[id(operand)]``: the node itself when none changed,
    else a re-typed copy. The default step of every bottom-up rewrite."""
    if isinstance(node, Call):
        args = tuple(memo[id(a)] for a in node.args)
        return node if all(a is b for a, b in zip(args, node.args)) else rebuild_call(node, args)
    if isinstance(node, Tuple):
        fields = tuple(memo[id(f)] for f in node.fields)
        return node if all(a is b for a, b in zip(fields, node.fields)) else Tuple(fields)
    return node


def rewrite(func: Function, visit: Callable[[Expr, Expr], Expr | None]) -> Function:
    """Rebuild ``func`` bottom-up. ``visit(node, orig)`` sees each node with already-rewritten operands
    (and the original node, for questions about the input graph such as its users) and returns a
    replacement or None to keep it. Calls are re-typed when their operands changed."""
    memo: dict[int, Expr] = {}
    for node in post_order(func.body):
        new = with_new_operands(node, memo)
        r = visit(new, node)
        memo[id(node)] = new if r is None else r
    return Function(func.params, memo[id(func.body)], dict(func.attrs))
