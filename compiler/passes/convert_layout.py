"""convert_layout: run conv2d and pooling in NHWC (weights OHWI), keeping the model's own I/O layout.

Walks the graph once, remembering for each value whether it is held in NHWC (logically still the
NCHW tensor of the original graph). Layout-sensitive ops take NHWC inputs; element-wise/broadcast ops,
softmax, concatenate, pad and mean follow their operands, with axes remapped (constants are
transposed at compile time); every other op, and the graph outputs, get the original layout back
through a ``transpose``. Then transposes are cancelled or turned into views (see
``simplify_data_movement``), so a chain of NHWC kernels has no layout conversions between them:

    conv(NCHW) → relu → conv(NCHW)      becomes      T(x) → conv(NHWC) → relu → conv(NHWC) → T⁻¹
"""
from __future__ import annotations

import numpy as np

from ..ir import Call, Constant, Expr, Function, IRModule, OpPattern, Tuple, call, get_op, post_order
from ..ir.op import rebuild_call
from .rules import LAYOUT_RULES, layout_rule, register

TO_NHWC, TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


class _Layouts:
    """One transpose per value and direction (constants transposed at compile time)."""

    def __init__(self):
        self.converted: dict[tuple[int, bool], Expr] = {}

    def to_nhwc(self, e: Expr, nhwc: bool) -> Expr:
        if nhwc:
            return e
        if (id(e), True) not in self.converted:
            if isinstance(e, Constant):
                v = e.value.reshape((1,) * (4 - e.value.ndim) + e.value.shape)
                self.converted[id(e), True] = Constant(np.ascontiguousarray(v.transpose(TO_NHWC)), e.name)
            else:
                self.converted[id(e), True] = call("transpose", e, axes=TO_NHWC)
        return self.converted[id(e), True]

    def to_orig(self, e: Expr, nhwc: bool) -> Expr:
        if not nhwc:
            return e
        if (id(e), False) not in self.converted:
            self.converted[id(e), False] = call("transpose", e, axes=TO_NCHW)
        return self.converted[id(e), False]


# Per-op rules: rule(node, args, layouts) -> (new expr, held in NHWC?) or None (then: the operands'
# layout if the op is element-wise/broadcast, else the original layout). ``args``: per operand the
# (converted expr, held in NHWC?) pair.

def _conv2d(node: Call, args, lay: _Layouts):
    if node.attrs["data_layout"] != "NCHW" or not isinstance(node.args[1], Constant):
        return None
    w = np.ascontiguousarray(node.args[1].value.transpose(0, 2, 3, 1))
    return call(node.op, lay.to_nhwc(*args[0]), Constant(w, node.args[1].name), span=node.span,
                **{**node.attrs, "data_layout": "NHWC", "kernel_layout": "OHWI"}), True


def _pool2d(node: Call, args, lay: _Layouts):
    if node.attrs["layout"] != "NCHW":
        return None
    return call(node.op, lay.to_nhwc(*args[0]), span=node.span, **{**node.attrs, "layout": "NHWC"}), True


def _softmax(node: Call, args, lay: _Layouts):
    if not args[0][1]:
        return None
    return call(node.op, args[0][0], span=node.span, **{**node.attrs, "axis": TO_NHWC.index(node.attrs["axis"])}), True


def _concatenate(node: Call, args, lay: _Layouts):
    if node.ty.ndim != 4 or not any(n for _, n in args):
        return None
    return call(node.op, *(lay.to_nhwc(e, n) for e, n in args), span=node.span,
                axis=TO_NHWC.index(node.attrs["axis"])), True


def _pad(node: Call, args, lay: _Layouts):
    if not args[0][1]:
        return None
    width = tuple(node.attrs["pad_width"][a] for a in TO_NHWC)
    return call(node.op, args[0][0], span=node.span, **{**node.attrs, "pad_width": width}), True


def _mean(node: Call, args, lay: _Layouts):
    if not args[0][1] or not _mean_follows(node):
        return None
    axes = tuple(sorted(TO_NHWC.index(a) for a in node.attrs["axes"]))
    return call(node.op, args[0][0], span=node.span, **{**node.attrs, "axes": axes}), node.attrs["keepdims"]


register({
    "nn.conv2d": _conv2d, "qnn.conv2d": _conv2d,
    "nn.max_pool2d": _pool2d, "nn.avg_pool2d": _pool2d, "qnn.avg_pool2d": _pool2d,
    "nn.softmax": _softmax, "qnn.softmax": _softmax,
    "concatenate": _concatenate, "nn.pad": _pad, "mean": _mean,
    "nn.resize2d": _pool2d,
}, layout_rule)


def _follow_operands(node: Call, args, lay: _Layouts):
    """Element-wise/broadcast ops on 4-D values run in NHWC when an operand already is."""
    if (get_op(node.op).pattern <= OpPattern.BROADCAST and node.ty.ndim == 4 and any(n for _, n in args)
            and all(n or isinstance(e, Constant) or e.ty.ndim == 4 for e, n in args)):
        return rebuild_call(node, tuple(lay.to_nhwc(e, n) for e, n in args)), True
    return None


def convert_layout(mod: IRModule) -> IRModule:
    """The pass (module doc): LAYOUT_RULES per op, then simplify_data_movement."""
    memo: dict[int, tuple[Expr, bool]] = {}   # id(original) -> (new expr, held in NHWC?)
    lay = _Layouts()
    for node in post_order(mod.main.body):
        if not isinstance(node, (Call, Tuple)):
            memo[id(node)] = (node, False)
            continue
        if isinstance(node, Tuple):
            memo[id(node)] = (Tuple(tuple(lay.to_orig(*memo[id(f)]) for f in node.fields)), False)
            continue
        args = [memo[id(a)] for a in node.args]
        rule = LAYOUT_RULES.get(node.op)
        new = (rule(node, args, lay) if rule is not None else None) or _follow_operands(node, args, lay)
        memo[id(node)] = new or (rebuild_call(node, tuple(lay.to_orig(e, n) for e, n in args)), False)
    body = lay.to_orig(*memo[id(mod.main.body)])
    return mod.with_main(simplify_data_movement(Function(mod.main.params, body, mod.main.attrs)))


def _mean_follows(node: Call) -> bool:
    """A mean can run on the NHWC tensor when it keeps dims (result is NHWC) or when the dims it
    keeps come out in the same order in both layouts (e.g. over H and W: [N, C] either way)."""
    kept = [a for a in TO_NHWC if a not in node.attrs["axes"]]
    return node.attrs["keepdims"] or kept == sorted(kept)


def simplify_data_movement(func: Function) -> Function:
    """Cancel and merge transposes/reshapes:

    transpose(transpose(x, p), q)          → transpose(x, p∘q)   (dropped if the identity)
    transpose(x, p) moving only size-1 axes → reshape(x)          (a view, no copy)
    reshape(reshape(x))                    → reshape(x);  reshape to the same shape → x
    """
    memo: dict[int, Expr] = {}
    for node in post_order(func.body):
        if isinstance(node, Call):
            new = rebuild_call(node, tuple(memo[id(a)] for a in node.args))
            new = _simplify(new)
        elif isinstance(node, Tuple):
            new = Tuple(tuple(memo[id(f)] for f in node.fields))
        else:
            new = node
        memo[id(node)] = new
    return Function(func.params, memo[id(func.body)], func.attrs)


def _simplify(node: Call) -> Expr:
    if node.op == "transpose":
        (x,), axes = node.args, node.attrs["axes"]
        if isinstance(x, Call) and x.op == "transpose":
            axes = tuple(x.attrs["axes"][a] for a in axes)
            x = x.args[0]
        if axes == tuple(range(len(axes))):
            return x
        moved = [a for a in axes if x.ty.shape[a] != 1]
        if moved == sorted(moved):
            return _simplify(call("reshape", x, newshape=node.ty.shape, span=node.span))
        return call("transpose", x, axes=axes, span=node.span)
    if node.op == "reshape":
        x = node.args[0]
        while isinstance(x, Call) and x.op == "reshape":
            x = x.args[0]
        if x.ty.shape == node.ty.shape:
            return x
        return node if x is node.args[0] else call("reshape", x, newshape=node.ty.shape, span=node.span)
    return node
