"""TFLM's integer arithmetic of the int8 comparisons, SQUARED_DIFFERENCE, ADD_N and DIV (numpy twins of the
macros of ``codegen_templates/expr/qnn.c.j2`` and of runtime_c/include/tinyfuse/qelem.h; parameters from the
TFLite frontend, frontend/tflite/qparams.py).

- qnn.compare (comparisons.cc, reference_ops::ComparisonWithScaling): each operand becomes
  MBQM((q − z)·2^8, m, shift) with its own Q31 multiplier of its scale (< 1), the two int32 compared;
  bool result.
- qnn.squared_difference (squared_difference.cc): each operand MBQM((q − z)·2^7, m_i, sh_i) with
  m_i ≈ s_i / (2·max(s_a, s_b)), the int32 difference squared, MBQM by (2·max)² / (2^14·s_out), + z_out.
- qnn.add_n (add_n.h, int8 AddN): every input rescaled by exactly 1/2 (MBQM((q − z)·2^20, 2^30, 0) =
  (q − z)·2^19), summed *with one more −z term* (TFLM starts its sum from the rescaled input offset −z,
  not from 0), then MBQM by 2·s / (2^20·s_out), + z_out; all inputs share (s, z).
- qnn.div (div.h DivElementwise): the divisor's reciprocal (GetReciprocal: gemmlowp one_over_one_plus_x
  of the normalised divisor, exponent 31 − clz), the dividend shifted left by its redundant sign bits,
  their SRDHM, then SRDHM by the multiplier of s_a / (s_b·s_out) and one RoundingDivideByPOT by the
  summed exponent (0 where it exceeds 31: TFLM's shift is undefined there, the quotient below 1/2), + z_out.

``quant.mbqm`` is TFLM's MultiplyByQuantizedMultiplier where TFLM's int32 arithmetic is defined
(it saturates where TFLM's left shift wraps, ARCHITECTURE.md). ``real_scales`` are for the
real-arithmetic oracle (harness/real_oracle.py) only; the C ignores them.
"""
from __future__ import annotations

import numpy as np

from .. import quant
from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType
from .elemwise import broadcast_type
from .logic import COMPARISONS

ADD_N_SHIFT = 19          # (q − z)·2^20 times the exact multiplier 1/2


def _scaled(q, z, m, sh, bits):
    return quant.mbqm((np.asarray(q, np.int64) - z) << bits, m, sh)


@register_op
class QCompare(OpDef):
    """``kind`` (equal, not_equal, greater, greater_equal, less, less_equal) of two int8 tensors
    compared on TFLM's rescaled values (module doc); numpy broadcasting; bool result."""
    name, c_expr, pattern, num_inputs = "qnn.compare", "qcompare", OpPattern.BROADCAST, 2
    attrs = {"kind": "equal", "a_zero_point": 0, "b_zero_point": 0, "m1": 0, "sh1": 0, "m2": 0, "sh2": 0}

    def infer(self, args, attrs):
        if attrs["kind"] not in COMPARISONS:
            raise TinyfuseError(f"qnn.compare: kind {attrs['kind']!r} is not one of {', '.join(COMPARISONS)}")
        return TensorType(broadcast_type(args, self.name).shape, "bool")

    def compute(self, a, b, kind, a_zero_point, b_zero_point, m1, sh1, m2, sh2):
        return COMPARISONS[kind](_scaled(a, a_zero_point, m1, sh1, 8), _scaled(b, b_zero_point, m2, sh2, 8))


@register_op
class QSquaredDifference(OpDef):
    """(a − b)² of two int8 tensors with TFLM's SQUARED_DIFFERENCE arithmetic (module doc)."""
    name, c_expr, pattern, num_inputs = "qnn.squared_difference", "qsquared_difference", OpPattern.BROADCAST, 2
    attrs = {"a_zero_point": 0, "b_zero_point": 0, "out_zero_point": 0, "m1": 0, "sh1": 0, "m2": 0, "sh2": 0,
             "mo": 0, "sho": 0, "real_scales": None}

    def infer(self, args, attrs):
        return broadcast_type(args, self.name)

    def compute(self, a, b, a_zero_point, b_zero_point, out_zero_point, m1, sh1, m2, sh2, mo, sho, real_scales=None):
        d = _scaled(a, a_zero_point, m1, sh1, 7) - _scaled(b, b_zero_point, m2, sh2, 7)
        return quant.saturate(quant.mbqm(d * d, mo, sho) + out_zero_point)


@register_op
class QAddN(OpDef):
    """Σ of n ≥ 2 int8 tensors of one shape and one (s, z) with TFLM's ADD_N arithmetic (module doc)."""
    name, c_expr, pattern = "qnn.add_n", "qadd_n", OpPattern.ELEMWISE
    attrs = {"zero_point": 0, "out_zero_point": 0, "mo": 0, "sho": 0, "real_scales": None}

    def infer(self, args, attrs):
        if len(args) < 2 or any(a.shape != args[0].shape for a in args):
            raise TinyfuseError(f"qnn.add_n: needs two or more inputs of one shape, got {[a.shape for a in args]}")
        return args[0]

    def compute(self, *xs, zero_point, out_zero_point, mo, sho, real_scales=None):
        total = sum(np.asarray(x, np.int64) for x in xs) - (len(xs) + 1) * zero_point
        return quant.saturate(quant.mbqm(total << ADD_N_SHIFT, mo, sho) + out_zero_point)


def _bit_length(v):
    """bit_length of non-negative int64 values below 2^53."""
    return np.where(v > 0, np.frexp(v.astype(np.float64))[1], 0)


@register_op
class QDiv(OpDef):
    """a / b of two int8 tensors with TFLM's DIV arithmetic (module doc); b never at its zero point."""
    name, c_expr, pattern, num_inputs = "qnn.div", "qdiv", OpPattern.BROADCAST, 2
    attrs = {"a_zero_point": 0, "b_zero_point": 0, "out_zero_point": 0, "multiplier": 0, "shift": 0,
             "real_scales": None}

    def infer(self, args, attrs):
        return broadcast_type(args, self.name)

    def compute(self, a, b, a_zero_point, b_zero_point, out_zero_point, multiplier, shift, real_scales=None):
        x, y = np.broadcast_arrays(np.asarray(a, np.int64) - a_zero_point, np.asarray(b, np.int64) - b_zero_point)
        x, y = np.where(y < 0, -x, x), np.maximum(np.abs(y), 1)
        lz = 32 - _bit_length(y)
        inv = quant.one_over_one_plus_x((y << lz) - (1 << 31))
        headroom = 31 - _bit_length(np.where(x < 0, -x - 1, x))
        quotient = quant.srdhm(x << headroom, inv)
        e = (31 - lz) + headroom - shift
        q = np.where(e > 31, 0, quant.rdbp(quant.srdhm(quotient, multiplier), np.minimum(e, 31)))
        return quant.saturate(q + out_zero_point)
