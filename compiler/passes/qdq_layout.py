"""qdq_layout: the layout transposes that convert_layout leaves on float values next to a quantize or
dequantize move to the integer side, where they move a quarter of the bytes and cancel each other.

convert_layout runs the int8 kernels in NHWC and gives the graph's float boundary back its NCHW layout;
where a float value sits between a transpose and a Q/DQ, the transpose copies float32:

    transpose(dequantize(x_int8))  →  dequantize(transpose(x_int8))     (a 4-D float output: int8 copy)
    quantize(transpose(x_float))   →  transpose(quantize(x_float))      (a float island's NHWC result)

The float image at the model input is the exception: ``transpose(quantize(x))`` becomes
``quantize(transpose(x))``, which fuse_ops puts in one kernel (reads the NCHW float image, writes int8
NHWC over its last bytes: memory/inplace.py ``transpose``) instead of a quantize and an int8 transpose.

Both sides compute the same values: quantize and dequantize are element-wise (ONNX QuantizeLinear /
DequantizeLinear-13), so they commute with any permutation once the per-axis ``axis`` follows it
(dequantize: the axis of x moves to ``axes.index(axis)``; quantize: axis ``a`` of the transposed
value is axis ``axes[a]`` of x). A transpose moves only when the float value it reads has no other
user (no value is computed twice); the transposes that meet are merged or dropped by
``convert_layout.simplify_data_movement``.
"""
from __future__ import annotations

from ..ir import Call, Expr, IRModule, Var, call, rewrite, users
from .convert_layout import simplify_data_movement


def _is(e, op: str) -> bool:
    return isinstance(e, Call) and e.op == op


def _move(node: Call, orig: Call, single_use) -> Expr | None:
    """One step of the module doc's two rules at ``node`` (rewritten operands; ``orig`` its original)."""
    x = node.args[0] if node.args else None
    if node.op == "transpose" and _is(x, "qnn.dequantize") and single_use(orig.args[0]):
        axes = node.attrs["axes"]
        moved = call("transpose", x.args[0], axes=axes, span=node.span)
        return call("qnn.dequantize", moved, span=x.span,
                    **{**x.attrs, "axis": axes.index(x.attrs["axis"] % len(axes))})
    if node.op == "transpose" and _is(x, "qnn.quantize") and isinstance(x.args[0], Var) and single_use(orig.args[0]):
        axes = node.attrs["axes"]     # the model's float image: one kernel reads NCHW, writes int8 NHWC
        moved = call("transpose", x.args[0], axes=axes, span=node.span)
        return call("qnn.quantize", moved, span=x.span, **{**x.attrs, "axis": axes.index(x.attrs["axis"] % len(axes))})
    if node.op == "qnn.quantize" and _is(x, "transpose") and not isinstance(x.args[0], Var) and single_use(orig.args[0]):
        axes = x.attrs["axes"]
        q = call("qnn.quantize", x.args[0], span=node.span,
                 **{**node.attrs, "axis": axes[node.attrs["axis"] % len(axes)]})
        return call("transpose", q, axes=axes, span=x.span)
    return None


def qdq_layout(mod: IRModule) -> IRModule:
    """The pass (module doc): after convert_layout, before eliminate_dead_code."""
    use = users(mod.main.body)

    def single_use(e: Expr) -> bool:
        return len(use.get(id(e), [])) == 1 and e is not mod.main.body

    def visit(node: Expr, orig: Expr):
        return _move(node, orig, single_use) if isinstance(node, Call) else None

    return mod.with_main(simplify_data_movement(rewrite(mod.main, visit)))
