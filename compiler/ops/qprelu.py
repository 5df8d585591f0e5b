"""qnn.prelu: TFLite/TFLM int8 PRELU (kernels/prelu_common.cc, reference BroadcastPrelu4DSlow).

With v = x − z_x: y = sat(MBQM(v, m1, sh1) + z_y) for v >= 0, else sat(MBQM(v · (α − z_α), m2, sh2) + z_y),
where (m1, sh1) quantize s_x / s_y and (m2, sh2) quantize s_x · s_α / s_y (double arithmetic on the
float32 scales, quant.quantize_multiplier). ``alpha`` (int8) broadcasts to x; the multipliers are
per tensor. Element-wise: it fuses as the epilogue of a conv or matmul (macro ``qprelu`` in
``expr/qnn.c.j2``)."""
from __future__ import annotations

import numpy as np

from .. import quant
from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from .elemwise import broadcast_type


def prelu_params(s_x: float, s_alpha: float, s_y: float) -> dict:
    """m1/sh1 and m2/sh2 of CalculatePreluParams from float32 scales (widened to double)."""
    s_x, s_alpha, s_y = (float(np.float32(s)) for s in (s_x, s_alpha, s_y))
    m1, sh1 = quant.quantize_multiplier(s_x / s_y)
    m2, sh2 = quant.quantize_multiplier(s_x * s_alpha / s_y)
    return {"m1": m1, "sh1": sh1, "m2": m2, "sh2": sh2}


@register_op
class QPRelu(OpDef):
    name, c_expr, pattern, num_inputs = "qnn.prelu", "qprelu", OpPattern.BROADCAST, 2
    # real_scales (s_x, s_alpha, s_out): the real-arithmetic facts of harness/real_oracle.py (not emitted)
    attrs = {"input_zero_point": 0, "alpha_zero_point": 0, "output_zero_point": 0, "m1": 0, "sh1": 0, "m2": 0, "sh2": 0,
             "real_scales": None}

    def infer(self, args, attrs):
        t = broadcast_type(args, self.name)
        if t.shape != args[0].shape or args[0].dtype != "int8":
            raise TinyfuseError(f"qnn.prelu: alpha {list(args[1].shape)} must broadcast to int8 x {list(args[0].shape)}")
        return t

    def compute(self, x, alpha, input_zero_point, alpha_zero_point, output_zero_point, m1, sh1, m2, sh2,
                real_scales=None):
        v = x.astype(np.int64) - input_zero_point
        neg = quant.mbqm(v * (alpha.astype(np.int64) - alpha_zero_point), m2, sh2)
        y = np.where(v >= 0, quant.mbqm(v, m1, sh1), neg)
        return quant.saturate(y + output_zero_point).astype(np.int8)
