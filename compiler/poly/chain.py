"""Chain analysis of a poly-fused group: the conv stages of a merged Function (``passes/poly_fuse``)
as ``linebuf.Stage`` records, or the reason it is not a chain.

The merged Function's body calls its member groups (each an anchor conv + epilogue, as ``fuse_ops``
made them), in topological order, the last call being the body itself. Each member must be an int8
NHWC batch-1 conv group (``ops.conv_geom.conv_group``) whose conv input is one of its parameters,
bound either to a kernel parameter or to an earlier member; every other operand is an epilogue
operand read at the output index (a residual add), of the member's output shape. The final member
may instead be an int8 pool over the whole image (``ops.conv_geom.global_pool_group``): a pooling
stage that accumulates its input rows as they are produced.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import Call, Function, Var, post_order
from ..ops.conv_geom import conv_group, global_pool_group
from .linebuf import Stage


@dataclass
class Chain:
    members: list[Call]          # member group calls, topological order (last = final)
    stages: list[Stage]
    params: tuple[Var, ...]      # the merged kernel's parameters


class Unfusable(Exception):
    """The merged group is not a chain this lowering handles (the reason is the message)."""


def chain_of(fn: Function) -> Chain:
    """Stages of a merged Function (module doc); raises Unfusable with the reason."""
    members = [n for n in post_order(fn.body) if isinstance(n, Call) and isinstance(n.op, Function)]
    index = {id(c): i for i, c in enumerate(members)}
    if not members or members[-1] is not fn.body:
        raise Unfusable("the merged body must end in its final member call")
    stages = []
    for i, mc in enumerate(members):
        got, pool = conv_group(mc.op), ""
        if got is None and i == len(members) - 1 and i > 0:
            got = global_pool_group(mc.op)
            pool = got[3] if got else ""
        if got is None:
            raise Unfusable(f"member {mc.op.attrs.get('name')} is not an int8 NHWC batch-1 conv")
        anchor, _, geo = got[:3]
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
        stages.append(Stage(geo, source(data), tuple(extras), tuple(preads), pool))
    return Chain(members, stages, fn.params)


__all__ = ["Chain", "Unfusable", "chain_of"]
