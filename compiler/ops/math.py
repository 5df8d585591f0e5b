"""Unary element-wise math: the ONNX operators of that name and the TFLite builtins TFLM implements
(tensorflow/lite/micro/kernels/elementwise.cc, exp.cc, floor.cc, ceil.cc, round.cc, neg.cc, elu.cc).

Every op keeps its input's shape and dtype; ``compute`` evaluates in float64 and casts back (integer
inputs of abs, negative, sign and square are exact). ``c_expr`` names the macro of
``codegen_templates/expr/elemwise.c.j2``; the macros taking ``dtype`` print the integer form for
integer tensors. ``lut``: in QDQ int8 graphs legalize_qdq turns the op into a 256-entry table.
"""
from __future__ import annotations

import numpy as np

from ..ir.op import register_op
from .elemwise import Unary


def _softplus(x):
    """log(1 + e^x) in the overflow-free form (onnxruntime's Softplus: x > 0 ? x + log1p(e^-x))."""
    return np.where(x > 0, x + np.log1p(np.exp(-np.abs(x))), np.log1p(np.exp(np.minimum(x, 0))))


def _round_half_even(x):
    """TFLM RoundToNearest: halves to the even neighbour; a zero result is +0 unless x is −0."""
    return np.where(x == 0, x, np.rint(x) + 0.0)


def _unary_op(name: str, c_expr: str, f, doc: str):
    """Register a Unary op without attributes: ``f`` its numpy function (float64)."""
    cls = type(name.replace(".", "_").title().replace("_", ""), (Unary,),
               {"name": name, "c_expr": c_expr, "f": staticmethod(f), "lut": True, "__doc__": doc})
    return register_op(cls)


for _name, _c, _f, _doc in [
    ("abs", "abs", np.abs, "|x| (ONNX Abs-13, TFLite ABS float)."),
    ("negative", "negative", np.negative, "-x (ONNX Neg-13, TFLite NEG)."),
    ("exp", "exp", np.exp, "e^x (ONNX Exp-13, TFLite EXP)."),
    ("log", "log", np.log, "ln x (ONNX Log-13, TFLite LOG)."),
    ("sqrt", "sqrt", np.sqrt, "√x (ONNX Sqrt-13, TFLite SQRT)."),
    ("rsqrt", "rsqrt", lambda x: 1.0 / np.sqrt(x), "1 / √x (TFLite RSQRT float: 1.f / std::sqrt)."),
    ("reciprocal", "reciprocal", lambda x: 1.0 / x, "1 / x (ONNX Reciprocal-13)."),
    ("sin", "sin", np.sin, "sin x (ONNX Sin-7, TFLite SIN)."),
    ("cos", "cos", np.cos, "cos x (ONNX Cos-7, TFLite COS)."),
    ("floor", "floor", np.floor, "⌊x⌋ (ONNX Floor-13, TFLite FLOOR)."),
    ("ceil", "ceil", np.ceil, "⌈x⌉ (ONNX Ceil-13, TFLite CEIL)."),
    ("round", "round_even", _round_half_even, "x rounded, halves to even (ONNX Round-11, TFLite ROUND)."),
    ("sign", "sign", np.sign, "-1, 0 or 1 by the sign of x (ONNX Sign-13)."),
    ("square", "square", np.square, "x·x (TFLite SQUARE)."),
    ("nn.softplus", "softplus", _softplus, "ln(1 + e^x) (ONNX Softplus-1)."),
    ("nn.softsign", "softsign", lambda x: x / (1.0 + np.abs(x)), "x / (1 + |x|) (ONNX Softsign-1)."),
    ("nn.mish", "mish", lambda x: x * np.tanh(_softplus(x)), "x · tanh(softplus(x)) (ONNX Mish-18)."),
]:
    _unary_op(_name, _c, _f, _doc)


@register_op
class Elu(Unary):
    """x < 0 ? alpha·(e^x − 1) : x (ONNX Elu-6; TFLite ELU is alpha = 1, TFLM float: expm1)."""
    name, c_expr, lut = "nn.elu", "elu", True
    attrs = {"alpha": 1.0}
    f = staticmethod(lambda x, alpha: np.where(x < 0, alpha * np.expm1(np.minimum(x, 0)), x))


@register_op
class Selu(Unary):
    """x > 0 ? gamma·x : gamma·(alpha·e^x − alpha) (ONNX Selu-6)."""
    name, c_expr, lut = "nn.selu", "selu", True
    attrs = {"alpha": 1.67326319217681884765625, "gamma": 1.05070102214813232421875}
    f = staticmethod(lambda x, alpha, gamma: np.where(x > 0, gamma * x,
                                                      gamma * (alpha * np.exp(np.minimum(x, 0)) - alpha)))


@register_op
class Celu(Unary):
    """max(0, x) + min(0, alpha·(e^(x/alpha) − 1)) (ONNX Celu-12)."""
    name, c_expr, lut = "nn.celu", "celu", True
    attrs = {"alpha": 1.0}
    f = staticmethod(lambda x, alpha: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0) / alpha)))


@register_op
class ThresholdedRelu(Unary):
    """x > alpha ? x : 0 (ONNX ThresholdedRelu-10)."""
    name, c_expr, lut = "nn.thresholded_relu", "thresholded_relu", True
    attrs = {"alpha": 1.0}
    f = staticmethod(lambda x, alpha: np.where(x > alpha, x, 0.0))


@register_op
class Shrink(Unary):
    """x < −lambd ? x + bias : x > lambd ? x − bias : 0 (ONNX Shrink-9)."""
    name, c_expr, lut = "nn.shrink", "shrink", True
    attrs = {"bias": 0.0, "lambd": 0.5}
    f = staticmethod(lambda x, bias, lambd: np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0.0)))
