"""legalize_qdq's rule for PRelu: quantize(prelu(dq(x), dq(alpha))) → qnn.prelu (TFLM int8 PRELU,
ops/qprelu.py), when x is a per-tensor int8 activation and alpha a per-tensor int8 constant. Kept in
its own module (legalize_qdq registers it, passes/rules.py) so it imports nothing of legalize_qdq."""
from __future__ import annotations

import numpy as np

from ..ir import Call, Constant, Expr, call
from ..ops.qprelu import prelu_params


def per_tensor(e: Expr, constant: bool, dtypes=("int8",)):
    """(expr of one of ``dtypes``, float32 scale, zero point) of dequantize(e) per tensor, or None."""
    if not (isinstance(e, Call) and e.op == "qnn.dequantize") or e.args[0].ty.dtype not in dtypes \
            or isinstance(e.args[0], Constant) != constant:
        return None
    s, z = np.asarray(e.attrs["scale"]).reshape(-1), np.asarray(e.attrs["zero_point"]).reshape(-1)
    if np.any(s != s[0]) or np.any(z != z[0]):
        return None
    return e.args[0], float(np.float32(s[0])), int(z[0])


def prelu_rule(lg, y: Call, s_out: float, z_out: int):
    """nn.prelu → qnn.prelu with TFLM's multipliers (s_x / s_out and s_x · s_α / s_out)."""
    x, alpha = per_tensor(y.args[0], False), per_tensor(y.args[1], True)
    if x is None or alpha is None:
        return None
    return call("qnn.prelu", x[0], alpha[0], input_zero_point=x[2], alpha_zero_point=alpha[2],
                output_zero_point=z_out, span=y.span, real_scales=(float(x[1]), float(alpha[1]), float(s_out)),
                **prelu_params(x[1], alpha[1], s_out))
