"""convert_layout: run conv2d and pooling in NHWC (weights OHWI), keeping the model's own I/O layout.

Walks the graph once, remembering for each value whether it is held in NHWC (logically still the
NCHW tensor of the original graph). Layout-sensitive ops take NHWC inputs; element-wise/broadcast ops,
softmax, concatenate, pad and mean follow their operands, with axes remapped (constants are
transposed at compile time); every other op, and the graph outputs, get the original layout back
through a ``transpose``. Then transposes are cancelled or turned into views (see
``simplify_data_movement``), so a chain of NHWC kernels has no layout conversions between them:

    conv(NCHW) → relu → conv(NCHW)      becomes      T(x) → conv(NHWC) → relu → conv(NHWC) → T⁻¹
"""
import numpy as np

from ..ir import Call, Constant, Expr, Function, IRModule, OpPattern, Tuple, Var, call, get_op, post_order
from ..ir.op import rebuild_call

TO_NHWC, TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


def convert_layout(mod: IRModule) -> IRModule:
    memo: dict[int, tuple[Expr, bool]] = {}   # id(original) -> (new expr, held in NHWC?)
    converted: dict[tuple[int, bool], Expr] = {}  # one transpose per value and direction

    def _to_nhwc(e: Expr, nhwc: bool) -> Expr:
        if nhwc:
            return e
        if (id(e), True) not in converted:
            if isinstance(e, Constant):
                v = e.value.reshape((1,) * (4 - e.value.ndim) + e.value.shape)
                converted[id(e), True] = Constant(np.ascontiguousarray(v.transpose(TO_NHWC)), e.name)
            else:
                converted[id(e), True] = call("transpose", e, axes=TO_NHWC)
        return converted[id(e), True]

    def _to_orig(e: Expr, nhwc: bool) -> Expr:
        if not nhwc:
            return e
        if (id(e), False) not in converted:
            converted[id(e), False] = call("transpose", e, axes=TO_NCHW)
        return converted[id(e), False]

    for node in post_order(mod.main.body):
        if not isinstance(node, (Call, Tuple)):
            memo[id(node)] = (node, False)
            continue
        if isinstance(node, Tuple):
            memo[id(node)] = (Tuple(tuple(_to_orig(*memo[id(f)]) for f in node.fields)), False)
            continue
        args = [memo[id(a)] for a in node.args]
        op = node.op
        if op in ("nn.conv2d", "qnn.conv2d") and node.attrs["data_layout"] == "NCHW" and isinstance(node.args[1], Constant):
            w = np.ascontiguousarray(node.args[1].value.transpose(0, 2, 3, 1))
            new = call(op, _to_nhwc(*args[0]), Constant(w, node.args[1].name), span=node.span,
                       **{**node.attrs, "data_layout": "NHWC", "kernel_layout": "OHWI"})
            memo[id(node)] = (new, True)
        elif op in ("nn.max_pool2d", "nn.avg_pool2d", "qnn.avg_pool2d") and node.attrs["layout"] == "NCHW":
            new = call(op, _to_nhwc(*args[0]), span=node.span, **{**node.attrs, "layout": "NHWC"})
            memo[id(node)] = (new, True)
        elif (get_op(op).pattern <= OpPattern.BROADCAST and node.ty.ndim == 4 and any(n for _, n in args)
              and all(n or isinstance(e, Constant) or e.ty.ndim == 4 for e, n in args)):
            memo[id(node)] = (rebuild_call(node, tuple(_to_nhwc(e, n) for e, n in args)), True)
        elif op in ("nn.softmax", "qnn.softmax") and args[0][1]:
            memo[id(node)] = (call(op, args[0][0], span=node.span,
                                   **{**node.attrs, "axis": TO_NHWC.index(node.attrs["axis"])}), True)
        elif op == "concatenate" and node.ty.ndim == 4 and any(n for _, n in args):
            memo[id(node)] = (call(op, *(_to_nhwc(e, n) for e, n in args), span=node.span,
                                   axis=TO_NHWC.index(node.attrs["axis"])), True)
        elif op == "nn.pad" and args[0][1]:
            width = tuple(node.attrs["pad_width"][a] for a in TO_NHWC)
            memo[id(node)] = (call(op, args[0][0], span=node.span, **{**node.attrs, "pad_width": width}), True)
        elif op == "mean" and args[0][1] and _mean_follows(node):
            axes = tuple(sorted(TO_NHWC.index(a) for a in node.attrs["axes"]))
            memo[id(node)] = (call(op, args[0][0], span=node.span, **{**node.attrs, "axes": axes}),
                              node.attrs["keepdims"])
        else:
            memo[id(node)] = (rebuild_call(node, tuple(_to_orig(e, n) for e, n in args)), False)
    body = _to_orig(*memo[id(mod.main.body)])
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
