"""legalize_qdq's rules that exist for int16 (16x8) activations only, with TFLM's int16 arithmetic:
quantize(sigmoid(dq(x))) and quantize(tanh(dq(x))) of an int16 x with zero point 0 and an int16 output
(2^-15, 0) → ``qnn.logistic16`` (TFLM's int16 LOGISTIC / TANH, ops/qnn_int16.py). Tried before the int8
table rule (``first=True``); anything else returns None and falls through to it (int8) or stays float
(int16 with another output quantization: TFLM has no kernel for it). The int16 forms of the other ops
are the dtype-generic rules of legalize_qdq.py and legalize_qdq_misc.py."""
from __future__ import annotations

from ..ir import Call, call
from ..ops.qnn_int16 import logistic16_params, output_is_q15, sigmoid_table
from .legalize_prelu import per_tensor
from .rules import qdq_rule


@qdq_rule("sigmoid", "tanh", first=True)
def logistic16_rule(lg, y: Call, s_out: float, z_out: int):
    """sigmoid / tanh of an int16 activation (zero point 0) to int16 (2^-15, 0) → qnn.logistic16."""
    x = per_tensor(y.args[0], False, ("int16",))
    if x is None or lg.dtype != "int16" or x[2] != 0 or not output_is_q15(s_out, z_out):
        return None
    tanh = y.op == "tanh"
    multiplier, shift = logistic16_params(x[1], tanh)
    return call("qnn.logistic16", x[0], table=sigmoid_table(), multiplier=multiplier, shift=shift, tanh=tanh,
                span=y.span)
