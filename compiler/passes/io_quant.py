"""The quantization of a model's int8 inputs and outputs, read from the frontend's IR.

legalize_qdq folds every scale into fixed-point multipliers, so the scale and zero point of the
model's I/O tensors must be read before the pipeline runs. Both frontends write the int8 interface
in QDQ form (compiler/frontend/onnx/quant.py, frontend/tflite/reader.py):

- an int8 input reaches a ``qnn.dequantize(x, scale, zero_point, axis)`` (through reshape/transpose
  views) or an op taking ``in_scale``/``in_zero_point`` (``qnn.softmax``);
- an int8 output is a ``qnn.quantize(y, scale, zero_point, axis)`` (through views) or an op giving
  ``out_scale``/``out_zero_point``.

The affine map is TFLite's and ONNX's: ``real = scale * (q - zero_point)`` (TFLite quantization
spec; ONNX DequantizeLinear). Float tensors and int8 tensors whose parameters cannot be found (users
that disagree, a per-axis scale behind a reshape) get ``None``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Call, Expr, Function, post_order

QUANTIZED_DTYPES = ("int8", "uint8", "int16")


@dataclass(frozen=True)
class QParams:
    """Affine quantization of one model input/output: ``real = scale * (q - zero_point)``.

    ``scale`` (float32 values) and ``zero_point`` hold one element per tensor (``axis`` None) or one
    per index along ``axis`` of the tensor as the C API sees it (per-axis)."""

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int | None = None

    @property
    def per_tensor(self) -> bool:
        return self.axis is None

    def as_json(self) -> dict:
        """{"scale", "zero_point"}: numbers per-tensor, lists plus "quant_axis" per-axis."""
        if self.per_tensor:
            return {"scale": self.scale[0], "zero_point": self.zero_point[0]}
        return {"scale": list(self.scale), "zero_point": list(self.zero_point), "quant_axis": self.axis}


def _qparams(scale, zero_point, axis: int | None) -> QParams:
    s = np.asarray(scale, np.float32).reshape(-1)
    z = np.broadcast_to(np.asarray(zero_point, np.int64).reshape(-1), s.shape)
    return QParams(tuple(float(v) for v in s), tuple(int(v) for v in z), axis if s.size > 1 else None)


def _from_attrs(call: Call, prefix: str) -> QParams | None:
    """QParams of a qnn.(de)quantize call (prefix '') or of an op's in_/out_ parameters."""
    a = call.attrs
    if prefix == "" and call.op in ("qnn.quantize", "qnn.dequantize"):
        axis = int(a.get("axis", 1)) % max(len(call.args[0].ty.shape), 1)    # ONNX allows axis=-1
        return _qparams(a.get("scale", 1.0), a.get("zero_point", 0), axis)
    if f"{prefix}scale" in a and f"{prefix}zero_point" in a:
        return _qparams(a[f"{prefix}scale"], a[f"{prefix}zero_point"], None)
    return None


def _axis_back(view: Call, axis: int | None) -> int | None | bool:
    """The axis of the view's operand that is ``axis`` of its result; False when it cannot be told."""
    if axis is None:
        return None
    if view.op == "transpose":
        return int(view.attrs["axes"][axis])
    return False                      # reshape: per-axis scales behind a reshape are not mapped


def _axis_forward(view: Call, axis: int | None) -> int | None | bool:
    if axis is None:
        return None
    if view.op == "transpose":
        return list(view.attrs["axes"]).index(axis)
    return False


def _input_qparams(param, users: dict[int, list[Call]]) -> QParams | None:
    found: list[QParams | None] = []
    stack: list[tuple[Expr, list[Call]]] = [(param, [])]
    while stack:
        node, views = stack.pop()
        for u in users.get(id(node), []):
            if u.op in ("reshape", "transpose") and u.args[0] is node:
                stack.append((u, views + [u]))
            elif u.op == "qnn.dequantize" and u.args[0] is node or u.op != "qnn.dequantize" and "in_scale" in u.attrs:
                q = _from_attrs(u, "" if u.op == "qnn.dequantize" else "in_")
                axis = q.axis
                for v in reversed(views):
                    axis = _axis_back(v, axis)
                found.append(None if axis is False else QParams(q.scale, q.zero_point, axis))
    return found[0] if found and all(f == found[0] for f in found) else None


def _output_qparams(out: Expr) -> QParams | None:
    views = []
    while isinstance(out, Call) and out.op in ("reshape", "transpose"):
        views.append(out)
        out = out.args[0]
    if not isinstance(out, Call):
        return None
    q = _from_attrs(out, "") if out.op == "qnn.quantize" else _from_attrs(out, "out_")
    if q is None:
        return None
    axis = q.axis
    for v in reversed(views):
        axis = _axis_forward(v, axis)
    return None if axis is False else QParams(q.scale, q.zero_point, axis)


def io_quantization(func: Function) -> tuple[tuple[QParams | None, ...], tuple[QParams | None, ...]]:
    """(inputs, outputs): the QParams of each of ``func``'s params and outputs (the frontend's IR,
    before legalize_qdq), ``None`` for float tensors and for int8 ones without a readable scale."""
    users: dict[int, list[Call]] = {}
    for node in post_order(func.body):
        if isinstance(node, Call):
            for a in node.args:
                users.setdefault(id(a), []).append(node)
    ins = tuple(_input_qparams(p, users) if p.ty.dtype in QUANTIZED_DTYPES else None for p in func.params)
    outs = tuple(_output_qparams(o) if o.ty.dtype in QUANTIZED_DTYPES else None for o in func.outputs)
    return ins, outs
