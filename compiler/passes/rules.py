"""The per-op rule tables two passes read, filled by the modules that define the rules.

- ``layout_rule(*ops)``: ``convert_layout``'s rule of an op, ``rule(node, args, layouts)`` -> (new
  expression, held in NHWC?) or None (the op stays in its layout).
- ``qdq_rule(*ops, first=False)``: a ``legalize_qdq`` rule of an op, ``rule(legalizer, y, s_out, z_out)``
  -> the int8 form of the float op ``y`` quantized to (s_out, z_out), or None. An op may have several
  rules (a specific pattern before the general one: ``first=True`` puts it in front); the first that
  gives a form wins, None from all of them leaves the op in float.

A key registered twice at the same place is refused (AssertionError at import), so no module patches
or silently replaces another's rule.
"""
from __future__ import annotations

from typing import Callable

LAYOUT_RULES: dict[str, Callable] = {}
QDQ_RULES: dict[str, list[Callable]] = {}


def layout_rule(*ops: str):
    """Register the decorated function as the layout rule of ``ops``."""
    def deco(fn):
        for op in ops:
            assert op not in LAYOUT_RULES, f"layout rule of {op!r} registered twice"
            LAYOUT_RULES[op] = fn
        return fn
    return deco


def qdq_rule(*ops: str, first: bool = False):
    """Register the decorated function as an int8 rule of ``ops`` (``first``: tried before the others)."""
    def deco(fn):
        for op in ops:
            rules = QDQ_RULES.setdefault(op, [])
            assert fn not in rules and not (not first and rules and not getattr(rules[-1], "_first", False)), \
                f"a second general int8 rule of {op!r}: give the specific one first=True"
            if first:
                fn._first = True
                rules.insert(0, fn)
            else:
                rules.append(fn)
        return fn
    return deco


def register(table: dict[str, Callable], deco) -> None:
    """Register each ``op: rule`` of ``table`` with ``deco`` (``layout_rule`` / ``qdq_rule``): a module's
    rules as one readable table."""
    for op, fn in table.items():
        deco(op)(fn)


__all__ = ["LAYOUT_RULES", "QDQ_RULES", "layout_rule", "qdq_rule", "register"]
