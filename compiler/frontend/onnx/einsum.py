"""ONNX Einsum-12 of one or two operands: an ellipsis becomes letters of its own, a letter repeated in
one operand takes that operand's diagonal (a ``take`` of the flattened pair of axes), letters summed
alone are ``sum`` reductions, and two operands are one product between transposes and reshapes:
``nn.matmul`` in float32, and in float64 (which the matmul kernels do not compute) a broadcast
``multiply`` then a ``sum`` over the contracted letters, in C double. Registered by importing this module."""
from __future__ import annotations

import re
import string

import numpy as np

from ...ir import Expr, call
from .ops import reshape
from .registry import Node, converter

EINSUM_DTYPES = ("float32", "float64")


def _sum_letters(node: Node, x: Expr, letters: str, drop) -> tuple[Expr, str]:
    axes = tuple(i for i, c in enumerate(letters) if c in drop)
    if not axes:
        return x, letters
    y = call("sum", x, axes=axes, keepdims=False, span=node.name)
    return y, "".join(c for c in letters if c not in drop)


def _permute(node: Node, x: Expr, letters: str, order: str) -> Expr:
    perm = tuple(letters.index(c) for c in order)
    return x if perm == tuple(range(len(perm))) else call("transpose", x, axes=perm, span=node.name)


def _expand_ellipsis(node: Node, eq: str, args) -> str:
    """``eq`` with each ``...`` replaced by letters the equation does not use, one per dimension it
    stands for (right-aligned across operands, as numpy broadcasts them); an implicit output lists
    them first, then the letters used once, sorted."""
    if "..." not in eq:
        return eq
    lhs, arrow, rhs = eq.partition("->")
    ops = lhs.split(",")
    if len(ops) != len(args):
        raise node.error(f"equation '{eq}' names {len(ops)} operands, the node has {len(args)}")
    free = [c for c in string.ascii_letters if c not in eq]
    spans = [a.ty.ndim - len(s.replace("...", "")) if "..." in s else 0 for s, a in zip(ops, args)]
    width = max(spans)
    if min(spans) < 0 or width > len(free):
        raise node.error(f"equation '{eq}' does not fit the operand ranks {[a.ty.ndim for a in args]}")
    ell = "".join(free[:width])
    expanded = [s.replace("...", ell[width - k:]) for s, k in zip(ops, spans)]
    if not arrow:
        every = "".join(s.replace("...", "") for s in ops)
        rhs = "..." + "".join(sorted(c for c in set(every) if every.count(c) == 1))
    return ",".join(expanded) + "->" + rhs.replace("...", ell)


def _einsum_letters(node: Node, args) -> tuple[list[str], str]:
    """The operands' letters and the output's of an Einsum equation (implicit output: the letters
    used once, sorted)."""
    eq = _expand_ellipsis(node, node.attr("equation", "").replace(" ", ""), args)
    m = re.fullmatch(r"([a-zA-Z]*)(?:,([a-zA-Z]*))?(?:->([a-zA-Z]*))?", eq)
    if not m or len(args) != (2 if m.group(2) is not None else 1):
        raise node.error(f"equation '{eq}' is not supported (one or two operands)")
    ins = [m.group(1)] + ([m.group(2)] if m.group(2) is not None else [])
    if any(len(s) != a.ty.ndim for s, a in zip(ins, args)) or any(a.ty.dtype not in EINSUM_DTYPES for a in args):
        raise node.error(f"equation '{eq}': ranks {[a.ty.ndim for a in args]} or types "
                         f"{[a.ty.dtype for a in args]} do not fit ({', '.join(EINSUM_DTYPES)})")
    every = "".join(ins)
    out = m.group(3) if m.group(3) is not None else "".join(sorted(c for c in set(every) if every.count(c) == 1))
    return ins, out


def _diagonal(node: Node, x: Expr, letters: str) -> tuple[Expr, str]:
    """``x`` without repeated letters: for each letter twice in ``letters``, its two axes (moved last,
    flattened) reduced to their diagonal by a constant ``take``."""
    while len(set(letters)) != len(letters):
        c = next(c for c in letters if letters.count(c) > 1)
        p, q = letters.index(c), letters.index(c, letters.index(c) + 1)
        n = x.ty.shape[p]
        if x.ty.shape[q] != n:
            raise node.error(f"letter '{c}' stands for sizes {n} and {x.ty.shape[q]}")
        rest = [i for i in range(len(letters)) if i not in (p, q)]
        order = "".join(letters[i] for i in rest)
        x = call("transpose", x, axes=(*rest, p, q), span=node.name) if rest else x
        x = reshape(node, x, tuple(x.ty.shape[:len(rest)]) + (n * n,))
        x = call("take", x, indices=tuple(k * (n + 1) for k in range(n)), indices_shape=(n,), axis=len(rest),
                 span=node.name)
        letters = order + c
    return x, letters


@converter("Einsum")
def convert_einsum(node: Node, args):
    """Einsum-12 of one operand (diagonals, transpose, sums) or two (batch, free and contracted letters:
    one product between transposes and reshapes); ellipses and repeated letters as the module says."""
    ins, out = _einsum_letters(node, args)
    operands = [_diagonal(node, a, s) for a, s in zip(args, ins)]
    if len(args) == 1:
        (x, letters), = operands
        y, letters = _sum_letters(node, x, letters, set(letters) - set(out))
        return _permute(node, y, letters, out)
    (a, la), (b, lb) = operands
    return _einsum_product(node, _sum_letters(node, a, la, set(la) - set(lb) - set(out)),
                           _sum_letters(node, b, lb, set(lb) - set(la) - set(out)), out)


def _product(node: Node, am: Expr, bm: Expr) -> Expr:
    """[B, M, K] @ [B, K, N] → [B, M, N]: nn.matmul, or in float64 Σ_k a[b, m, 1, k] · b[b, 1, n, k]."""
    if am.ty.dtype != "float64":
        return call("nn.matmul", am, bm, span=node.name)
    (nb, m, k), n = am.ty.shape, bm.ty.shape[2]
    a4 = reshape(node, am, (nb, m, 1, k))
    b4 = reshape(node, call("transpose", bm, axes=(0, 2, 1), span=node.name), (nb, 1, n, k))
    return call("sum", call("multiply", a4, b4, span=node.name), axes=(3,), keepdims=False, span=node.name)


def _letter_groups(la: str, lb: str, out: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """(batch, contracted, free of a, free of b): letters in both and the output, in both only, in one."""
    batch = [c for c in la if c in lb and c in out]
    contracted = [c for c in la if c in lb and c not in out]
    return batch, contracted, [c for c in la if c not in lb], [c for c in lb if c not in la]


def _einsum_product(node: Node, a_letters: tuple[Expr, str], b_letters: tuple[Expr, str], out: str) -> Expr:
    """Two operands whose summed-alone letters are gone: [batch, free_a, contracted] @
    [batch, contracted, free_b], then the output's letter order."""
    (a, la), (b, lb) = a_letters, b_letters
    if a.ty.dtype != b.ty.dtype:
        raise node.error(f"operand types differ: {a.ty.dtype} and {b.ty.dtype}")
    batch, contracted, free_a, free_b = _letter_groups(la, lb, out)
    dims = {c: d for s, x in ((la, a), (lb, b)) for c, d in zip(s, x.ty.shape)}
    if any(dims[c] != d for s, x in ((la, a), (lb, b)) for c, d in zip(s, x.ty.shape)):
        raise node.error(f"operand shapes {[list(a.ty.shape), list(b.ty.shape)]} disagree")
    size = lambda cs: int(np.prod([dims[c] for c in cs], dtype=np.int64))   # noqa: E731
    am = reshape(node, _permute(node, a, la, "".join(batch + free_a + contracted)),
                 (size(batch), size(free_a), size(contracted)))
    bm = reshape(node, _permute(node, b, lb, "".join(batch + contracted + free_b)),
                 (size(batch), size(contracted), size(free_b)))
    y = _product(node, am, bm)
    letters = "".join(batch + free_a + free_b)
    y = reshape(node, y, tuple(dims[c] for c in letters) or (1,))
    if not letters:
        return reshape(node, y, ())
    return _permute(node, y, letters, out)
