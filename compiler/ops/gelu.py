"""GELU (ONNX Gelu-20) and Erf (ONNX Erf-13): element-wise, float.

    approximate="none":  y = 0.5 · x · (1 + erf(x / √2))
    approximate="tanh":  y = 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))

As the epilogue of a linear layer (matmul → add(bias) → gelu) fuse_ops puts both into one kernel.
In QDQ int8 models ``legalize_qdq`` turns either into a 256-entry ``qnn.lut`` (exact by construction).
"""
from __future__ import annotations

import math

import numpy as np

from ..ir.op import register_op
from .elemwise import Unary

_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


@register_op
class Gelu(Unary):
    name, c_expr = "nn.gelu", "gelu"
    lut = True
    attrs = {"approximate": "none"}
    f = staticmethod(gelu)


@register_op
class Erf(Unary):
    name, c_expr = "erf", "erf"
    lut = True
    f = staticmethod(_erf)
