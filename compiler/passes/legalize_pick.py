"""legalize_qdq's rules for the ops that pick one of their operands: quantize(maximum / minimum(dq(a),
dq(b))) and quantize(select(c, dq(x), dq(y))) (ONNX Max, Min, Where in QDQ form; onnxruntime's quantizer
writes Where so). Quantization is monotonic, so quantize(max(a, b)) = max(quantize(a), quantize(b)):
each int8 operand is requantized to the output's (scale, zero point) (nothing when they agree), a
constant operand quantized at compile time (half to even, as QuantizeLinear), and the op runs on int8
values. Kept in its own module (registered with ``qdq_rule``, passes/rules.py)."""
from __future__ import annotations

import numpy as np

from .. import quant
from ..ir import Call, Constant, Expr, call
from .legalize_prelu import per_tensor
from .rules import qdq_rule


def _in_output_scale(e: Expr, s_out: float, z_out: int, rounding: str) -> Expr | None:
    """``e`` (a dequantized int8 tensor or constant, or a float constant) as int8 values of the output's
    quantization, or None."""
    t = per_tensor(e, False)
    if t is not None:
        x, s, z = t
        if (s, z) == (s_out, z_out):
            return x
        real = s / s_out
        m, sh = quant.quantize_multiplier(real)
        return call("qnn.requantize", x, Constant(np.array(m, np.int32)), Constant(np.array(sh, np.int32)),
                    input_zero_point=z, output_zero_point=z_out, rounding=rounding, real_multiplier=(float(real),))
    c = per_tensor(e, True)
    if c is not None:
        real = (c[0].value.astype(np.float64) - c[2]) * c[1]
    elif isinstance(e, Constant) and e.ty.dtype == "float32":
        real = e.value.astype(np.float64)
    else:
        return None
    return Constant(quant.saturate(np.rint(real / s_out) + z_out), getattr(c[0] if c else e, "name", ""))


@qdq_rule("maximum", "minimum")
def pick_rule(lg, y: Call, s_out: float, z_out: int):
    """maximum / minimum of int8 operands in the output's quantization."""
    ops = [_in_output_scale(a, s_out, z_out, lg.rounding) for a in y.args]
    if any(o is None for o in ops):
        return None
    return call(y.op, *ops, span=y.span)


@qdq_rule("select")
def select_rule(lg, y: Call, s_out: float, z_out: int):
    """select(c, x, y) of int8 x, y in the output's quantization; the condition as it is."""
    ops = [_in_output_scale(a, s_out, z_out, lg.rounding) for a in y.args[1:]]
    if any(o is None for o in ops):
        return None
    return call("select", y.args[0], *ops, span=y.span)
