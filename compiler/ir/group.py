"""The structure of a fused group (a Primitive Function made by ``fuse_ops``): at most one anchor op
(pattern above BROADCAST: a conv, a matmul, a pool, ...) computed first, then element-wise ops."""
from __future__ import annotations

from .expr import Call, Function, post_order
from .op import OpPattern, get_op


class MalformedGroup(Exception):
    """A Function that is not one anchor followed by element-wise ops (the message lists its ops)."""


def split_group(fn: Function) -> tuple[Call | None, list[Call]]:
    """(anchor, epilogue): the group's one non-element-wise op (or None) and the element-wise ops
    after it, in order. Raises :class:`MalformedGroup` when the group has several anchors or ops
    computed before its anchor."""
    calls = [n for n in post_order(fn.body) if isinstance(n, Call)]
    anchors = [c for c in calls if get_op(c.op).pattern > OpPattern.BROADCAST]
    if len(anchors) > 1 or (anchors and calls[0] is not anchors[0]):
        raise MalformedGroup(f"not one anchor then element-wise ops: {[c.op for c in calls]}")
    return (anchors[0] if anchors else None), [c for c in calls if c not in anchors]


__all__ = ["MalformedGroup", "split_group"]
