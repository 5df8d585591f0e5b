"""SiLU (Swish with beta 1): y = x · sigmoid(x) = x / (1 + e^(-x)); element-wise, float.

PyTorch's ``nn.SiLU`` exported to ONNX as ``Mul(x, Sigmoid(x))`` (recognised by
frontend/onnx/patterns.py). One unary op, so it fuses into a conv / matmul epilogue as one expression;
in QDQ int8 models ``legalize_qdq`` turns it into a 256-entry ``qnn.lut`` as TFLite does for its
LOGISTIC-based activations.
"""
from __future__ import annotations

import numpy as np

from ..ir.op import register_op
from .elemwise import Unary


@register_op
class Silu(Unary):
    name, c_expr = "nn.silu", "silu"
    lut = True
    f = staticmethod(lambda x: x / (1.0 + np.exp(-x)))
