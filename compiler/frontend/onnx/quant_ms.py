"""com.microsoft QLinearAveragePool and QLinearLeakyRelu → QDQ IR (onnxruntime's contrib ops,
ContribOperators.md), int8 or uint8 (uint8: legalize_qdq's zero-point shift, passes/shift_uint8.py):

    QLinearAveragePool(X, x_scale, x_zp, y_scale, y_zp)  →  quantize(avg_pool2d(dq(X)), y_scale, y_zp)
    QLinearLeakyRelu(X, X_scale, X_zp, Y_scale, Y_zp)     →  quantize(leaky_relu(dq(X), alpha), ...)

The zero points are optional (absent: 0 of X's element type, the type of Y). legalize_qdq then gives
the average pool its integer form (a depthwise conv of ones + one requantize, or TFLM's same-scale
AVERAGE_POOL) and the leaky relu a 256-entry table.
"""
from __future__ import annotations

import numpy as np

from ...ir import Constant, Expr, call
from .quant import MS_DOMAIN_INPUTS, MS_DOMAIN_OPS, _as, _int8_activation, dequantize, quantize
from .registry import CONVERTERS, Node, converter

MS_DOMAIN_OPS.update({"QLinearAveragePool", "QLinearLeakyRelu"})
MS_DOMAIN_INPUTS.update({"QLinearAveragePool": (4, 5), "QLinearLeakyRelu": (4, 5)})


def _unary_io(node: Node, args) -> tuple[Expr, Expr, Expr | None]:
    """(dequantized X, Y's scale, Y's zero point: the given one, else 0 of X's element type)."""
    x, sx, zx, sy = args[:4]
    zy = args[4] if len(args) > 4 else None
    _int8_activation(node, x)
    zy = Constant(np.zeros((), x.ty.dtype)) if zy is None else zy
    return dequantize(node, x, sx, zx), sy, zy


@converter("QLinearAveragePool")
def convert_qlinear_average_pool(node: Node, args):
    """AveragePool on the dequantized X (its attributes: kernel_shape, strides, pads, auto_pad,
    ceil_mode, count_include_pad), quantized to Y; channels_last=1 (NHWC) is refused."""
    if node.attr("channels_last", 0):
        raise node.error("channels_last=1 is not supported")
    x, sy, zy = _unary_io(node, args)
    return quantize(node, CONVERTERS["AveragePool"](_as(node, "AveragePool"), [x]), sy, zy)


@converter("QLinearLeakyRelu")
def convert_qlinear_leaky_relu(node: Node, args):
    """LeakyRelu (alpha, default 0.01) on the dequantized X, quantized to Y."""
    x, sy, zy = _unary_io(node, args)
    y = call("nn.leaky_relu", x, alpha=float(node.attr("alpha", 0.01)), span=node.name)
    return quantize(node, y, sy, zy)
