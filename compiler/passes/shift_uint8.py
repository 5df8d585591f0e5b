"""shift_uint8: uint8 activations become int8 by the zero-point shift, so the int8 kernels serve them.

An asymmetric uint8 tensor ``real = s·(q − z)`` (ONNX QUInt8: onnxruntime.quantization's
activation_type=QUInt8, QLinearConv / QLinearMatMul with uint8 inputs) is the int8 tensor
``q' = q − 128`` with zero point ``z' = z − 128``: ``s·(q' − z') = s·(q − z)`` for every q in
[0, 255], and the rounding of a quantize is unchanged (``round(x/s) + z − 128`` saturated to
[−128, 127] is ``round(x/s) + z`` saturated to [0, 255], minus 128). The shift is therefore exact.

On the frontend's QDQ form (run first in legalize_qdq, after io_quant has read the model's uint8
interface):

- ``qnn.quantize(y, s, z, out_dtype=uint8)`` → ``qnn.quantize(y, s, z − 128, out_dtype=int8)``;
- ``qnn.dequantize(x, s, z)`` of a shifted activation → ``qnn.dequantize(x', s, z − 128)``;
- ``qnn.dequantize(W, s, z)`` of a uint8 constant (weights) → ``qnn.dequantize(W − 128, s, z − 128)``
  (legalize_qdq folds a nonzero weight zero point into the weights: ``W − z``);
- byte-moving ops (``OpDef.moves_data``: reshape, transpose, max pool, slices ...) and concatenation
  run on the shifted bytes unchanged; ``nn.pad``'s value and ``clip``'s bounds shift by −128;
- integer ops reading a shifted tensor (qnn.conv2d / qnn.matmul of ConvInteger / MatMulInteger,
  qnn.requantize) take their input zero point minus 128;
- a uint8 model input is shifted once at the boundary and a uint8 output shifted back: a
  ``qnn.requantize`` with multiplier 1 and zero points 128 / −128 (exactly ``q ∓ 128``, the C API's
  element type stays uint8); ops that read a model's uint8 input as such (Cast to float, an integer
  op) read it unshifted. ``fold_shifts`` (after legalize_qdq) merges the output's shift into the
  requantize / quantize before it and the input's into a requantize after it; an input feeding a
  conv directly keeps its shift (one elementwise kernel).

Any other op on a uint8 activation is refused with a TinyfuseError naming the node.
"""
from __future__ import annotations

import numpy as np

from .. import quant
from ..errors import TinyfuseError
from ..ir import Call, Constant, Expr, IRModule, Tuple, Var, call, get_op, post_order, rewrite, users

SHIFT = 128      # uint8 q ↔ int8 q − 128


def _requantize_by_one(x: Expr, zp_in: int, zp_out: int, out_dtype: str) -> Call:
    """y = x − zp_in + zp_out, exactly (real multiplier 1: Q31 pair (2^30, 1))."""
    m, sh = quant.quantize_multiplier(1.0)
    return call("qnn.requantize", x, Constant(np.array(m, np.int32)), Constant(np.array(sh, np.int32)),
                input_zero_point=zp_in, output_zero_point=zp_out, out_dtype=out_dtype, real_multiplier=(1.0,))


def to_int8(x: Expr) -> Call:
    """A uint8 tensor as its int8 twin ``x − 128`` (exact)."""
    return _requantize_by_one(x, SHIFT, 0, "int8")


def to_uint8(x: Expr) -> Call:
    """An int8 twin back as the uint8 tensor ``x + 128`` (exact)."""
    return _requantize_by_one(x, -SHIFT, 0, "uint8")


def _shift_zp(z):
    return int(z) - SHIFT if np.ndim(z) == 0 else (np.asarray(z, np.int64) - SHIFT)


def _is_u8(e: Expr) -> bool:
    return e.ty.dtype == "uint8" and not isinstance(e, Constant)


def _dequantize(node: Call, orig: Call) -> Expr | None:
    x = node.args[0]
    if isinstance(x, Constant) and x.ty.dtype == "uint8":
        w = Constant((x.value.astype(np.int16) - SHIFT).astype(np.int8), x.name)
        return call("qnn.dequantize", w, span=node.span, **{**node.attrs, "zero_point": _shift_zp(node.attrs["zero_point"])})
    if _is_u8(orig.args[0]):
        return call("qnn.dequantize", x, span=node.span, **{**node.attrs, "zero_point": _shift_zp(node.attrs["zero_point"])})
    return None


ZERO_POINT_OF_ARG = {"input_zero_point": 0, "a_zero_point": 0, "b_zero_point": 1}


def _shifted_attrs(node: Call, orig: Call) -> dict | None:
    """The attributes of ``node`` on the shifted operands, or None if it cannot run there: byte moves
    (their uint8 result is shifted too), pad / clip values, and the integer ops' input zero points."""
    a = dict(node.attrs)
    if get_op(node.op).moves_data or node.op == "concatenate":
        return a if orig.ty.dtype == "uint8" else None
    if node.op in ("nn.pad", "clip") and orig.ty.dtype == "uint8":
        keys = ("pad_value",) if node.op == "nn.pad" else ("a_min", "a_max")
        return {**a, **{k: a[k] - SHIFT for k in keys}}
    u8 = [_is_u8(x) for x in orig.args]
    hit = [k for k, i in ZERO_POINT_OF_ARG.items() if k in a and i < len(u8) and u8[i]]
    if not hit or len(hit) != sum(u8) or orig.ty.dtype == "uint8" and "out_dtype" not in a:
        return None
    for k in hit:
        a[k] = a[k] - SHIFT
    if a.get("out_dtype") == "uint8":
        out_key = "output_zero_point" if "output_zero_point" in a else "out_zero_point"
        a.update({"out_dtype": "int8", out_key: a[out_key] - SHIFT})
    return a


def _unshifted(e: Expr) -> Expr:
    """A model input's boundary shift undone (ops that read uint8 as such, e.g. a Cast to float)."""
    return e.args[0] if _is_shift(e, SHIFT, "uint8") and isinstance(e.args[0], Var) else e


def _visit(node: Expr, orig: Expr) -> Expr | None:
    if isinstance(node, Var):
        return to_int8(node) if node.ty.dtype == "uint8" else None
    if not isinstance(node, Call) or not isinstance(node.op, str):
        return None
    if node.op == "qnn.quantize" and node.attrs["out_dtype"] == "uint8":
        return call("qnn.quantize", *node.args, span=node.span,
                    **{**node.attrs, "zero_point": _shift_zp(node.attrs["zero_point"]), "out_dtype": "int8"})
    if node.op == "qnn.dequantize":
        return _dequantize(node, orig)
    if not any(_is_u8(a) for a in orig.args):
        return None
    attrs = _shifted_attrs(node, orig)
    if attrs is not None and (get_op(node.op).moves_data or node.op in ("concatenate", "nn.pad", "clip")):
        return call(node.op, *node.args, span=node.span, **attrs)
    args = [_unshifted(a) for a in node.args]
    if all(n.ty.dtype == o.ty.dtype for n, o in zip(args, orig.args)):
        return call(node.op, *args, span=node.span, **node.attrs)       # reads the model's uint8 input as is
    if attrs is None:
        raise TinyfuseError(f"node '{node.span or node.op}' ({node.op}) on a uint8 activation is not supported "
                            "(uint8 tensors are int8 shifted by 128: quantize/dequantize and data movement only)")
    return call(node.op, *node.args, span=node.span, **attrs)


def shift_uint8(mod: IRModule) -> IRModule:
    """The module with every uint8 activation replaced by its int8 twin (see the module docstring);
    the same module when it has none. TinyfuseError for an op that computes on uint8 values."""
    func = mod.main
    if not any(_is_u8(p) for p in func.params) and not _has_uint8(func):
        return mod
    new = rewrite(func, _visit)
    outs = [to_uint8(n) if o.ty.dtype == "uint8" and n.ty.dtype == "int8" else n
            for o, n in zip(func.outputs, new.outputs)]
    body = Tuple(tuple(outs)) if isinstance(func.body, Tuple) else outs[0]
    return mod.with_main(type(new)(new.params, body, dict(new.attrs)))


def _has_uint8(func) -> bool:
    return any(isinstance(n, (Call, Constant)) and n.ty.dtype == "uint8" for n in post_order(func.body))


def _is_shift(e: Expr, zp_in: int, in_dtype: str) -> bool:
    """e is a by-one requantize of ``in_dtype`` with zero points (zp_in, 0): to_int8 / to_uint8."""
    if not (isinstance(e, Call) and e.op == "qnn.requantize" and e.args[0].ty.dtype == in_dtype):
        return False
    m, sh = quant.quantize_multiplier(1.0)
    a = e.attrs
    return (a["input_zero_point"], a["output_zero_point"]) == (zp_in, 0) and \
        all(isinstance(c, Constant) and c.value.size == 1 and int(c.value.reshape(())) == v
            for c, v in zip(e.args[1:], (m, sh)))


def fold_shifts(mod: IRModule) -> IRModule:
    """After legalize_qdq: merge the boundary shifts into their neighbours, exactly:

    - ``requantize(to_int8(x_u8), M, z_in, z_out)`` → ``requantize(x_u8, M, z_in + 128, z_out)``
      (x_u8 − 128 never saturates);
    - ``to_uint8(requantize(x, M, z_in, z_out))`` → ``requantize(x, M, z_in, z_out + 128, uint8)``
      and ``to_uint8(quantize(y, s, z))`` → ``quantize(y, s, z + 128, uint8)`` (saturating to
      [−128, 127] then adding 128 is saturating to [0, 255]);

    each only where the inner node has no other user."""
    uses = users(mod.main.body)

    def visit(node: Expr, orig: Expr):
        if not (isinstance(node, Call) and node.op == "qnn.requantize"):
            return None
        inner, o_inner = node.args[0], orig.args[0]
        if len(uses.get(id(o_inner), [])) != 1 or not isinstance(inner, Call):
            return None
        if _is_shift(inner, SHIFT, "uint8"):
            return call(node.op, inner.args[0], *node.args[1:], span=node.span,
                        **{**node.attrs, "input_zero_point": node.attrs["input_zero_point"] + SHIFT})
        if _is_shift(node, -SHIFT, "int8") and inner.op in ("qnn.requantize", "qnn.quantize") \
                and inner.attrs["out_dtype"] == "int8":
            key = "output_zero_point" if inner.op == "qnn.requantize" else "zero_point"
            return call(inner.op, *inner.args, span=inner.span,
                        **{**inner.attrs, key: int(inner.attrs[key]) + SHIFT, "out_dtype": "uint8"})
        return None
    return mod.with_main(rewrite(mod.main, visit))
