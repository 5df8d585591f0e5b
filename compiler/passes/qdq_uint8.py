"""qdq_uint8: uint8 QDQ activations (onnxruntime's QUInt8, the "U8S8" default on x86) become int8, so
legalize_qdq finds int8 kernels for them instead of leaving the whole model in float.

The uint8 and int8 affine maps of one (scale, zero point) differ by a constant offset (ONNX
QuantizeLinear-13: ``q = saturate(round_half_even(x / s) + z)``, saturated to [0, 255] or
[-128, 127]): ``q_u8 − 128 = saturate_int8(round(x / s) + (z − 128))`` for every x, and
``s · (q_u8 − z) = s · ((q_u8 − 128) − (z − 128))``. So an inner pair

    dequantize(quantize(x, s, z, uint8), s', z')   →   dequantize(quantize(x, s, z − 128, int8), s', z' − 128)

computes the same reals bit for bit, and so does any data move or max pool between the two
(QOperator graphs, whose QLinear ops the frontend expands into this form, pool and flatten uint8
directly). A uint8 quantize is rewritten only when every user is a dequantize or such a move, and
never at the model output: the C interface keeps the model's dtypes (legalize_qdq turns a uint8
output ``quantize_u8(dequantize(int8))`` into one requantize). A uint8 weight ``dequantize(W, s, z)``
becomes the int8 constant ``W − z`` with zero point 0 where every ``W − z`` fits in int8 (symmetric
uint8 weights, z = 128); other uint8 weights stay float (their ops keep a float kernel).
"""
from __future__ import annotations

import numpy as np

from ..ir import Call, Constant, Expr, IRModule, call, post_order, rewrite, users
from ..ops import ops_where

MOVE_OPS = ops_where(lambda d: d.moves_data)     # reshape, transpose, max_pool2d, slices, take, tile


def _is(e, op: str) -> bool:
    return isinstance(e, Call) and e.op == op


def _shift_zp(zero_point):
    """A uint8 zero point (scalar or per-axis) as the int8 zero point of the same map: z − 128."""
    z = np.asarray(zero_point, np.int64) - 128
    return int(z) if z.ndim == 0 else tuple(int(v) for v in z.reshape(-1))


def _uint8_pairs(body: Expr) -> set[int]:
    """ids of the uint8 Calls to shift: a quantize of a float value, or a data move (``moves_data``:
    reshape, transpose, max pool, slices: they commute with − 128) of such a Call, whose every user is
    a dequantize or such a Call (QOperator graphs pool and flatten uint8 directly); not the model output."""
    use = users(body)
    pairs = {id(n): n for n in _calls(body)
             if n.ty.dtype == "uint8" and (n.op == "qnn.quantize" or n.op in MOVE_OPS)}
    changed = True
    while changed:
        changed = False
        for i, node in list(pairs.items()):
            readers = use.get(i, [])
            if (node is body or not readers or not all(_is(r, "qnn.dequantize") or id(r) in pairs for r in readers)
                    or (node.op != "qnn.quantize" and id(node.args[0]) not in pairs)):
                del pairs[i]
                changed = True
    return set(pairs)


def _calls(body: Expr):
    return (n for n in post_order(body) if isinstance(n, Call))


def _int8_weight(dq: Call):
    """dequantize(int8 W − z, s, 0) for a uint8 constant W whose every W − z fits in int8, else None."""
    w = dq.args[0].value.astype(np.int64)
    z = np.asarray(dq.attrs["zero_point"], np.int64)
    if z.size > 1:
        shape = [1] * w.ndim
        shape[dq.attrs["axis"] % w.ndim] = z.size
        z = z.reshape(shape)
    d = w - z
    if d.min() < -128 or d.max() > 127:
        return None
    zero = 0 if np.ndim(dq.attrs["zero_point"]) == 0 else tuple(0 for _ in range(np.size(dq.attrs["zero_point"])))
    return call("qnn.dequantize", Constant(d.astype(np.int8), dq.args[0].name), span=dq.span,
                **{**dq.attrs, "zero_point": zero})


def qdq_uint8(mod: IRModule) -> IRModule:
    """The pass (module doc). Runs before legalize_qdq; int8 and float graphs are returned unchanged."""
    pairs = _uint8_pairs(mod.main.body)

    def visit(node: Expr, orig: Expr):
        if not isinstance(node, Call):
            return None
        if id(orig) in pairs and node.op != "qnn.quantize":
            return None          # a data move, re-typed int8 over its shifted operand
        if id(orig) in pairs:
            return call("qnn.quantize", node.args[0], span=node.span,
                        **{**node.attrs, "zero_point": _shift_zp(node.attrs["zero_point"]), "out_dtype": "int8"})
        if node.op != "qnn.dequantize":
            return None
        if id(orig.args[0]) in pairs:
            return call("qnn.dequantize", node.args[0], span=node.span,
                        **{**node.attrs, "zero_point": _shift_zp(node.attrs["zero_point"])})
        if isinstance(node.args[0], Constant) and node.args[0].ty.dtype == "uint8":
            return _int8_weight(node)
        return None

    return mod.with_main(rewrite(mod.main, visit))
