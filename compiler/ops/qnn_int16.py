"""The int16 (16x8) arithmetic of TFLite Micro's SOFTMAX, LOGISTIC and TANH, in numpy: the executable
specification of ``runtime_c/include/tinyfuse/quant16.h`` and ``codegen_templates/softmax/ref_int16.c.j2``,
bit-exact with TFLM's reference kernels (checked against TFLM, tests/c/test_int16_tflm.py).

- ``lut_int16``: TFLM's LUTPopulate<int16_t> (kernels/internal/common.h): 513 entries of f over the
  int16 input range, each sample corrected by half the error of linear interpolation at the midpoint,
  computed in float32 as TFLM does; ``lut_lookup16`` its LUTLookup (9 index bits, 7 interpolated).
- SOFTMAX int16 → int16 (reference_ops::SoftmaxInt16; softmax_common.cc prepares): the difference to
  the row maximum rescaled by QuantizeMultiplier(s_in·β / (10/65535)) onto [-65535, 0] (an int32 MBQM,
  double rounding), looked up in the table of exp over [-10, 0]; the Q16.15 sum normalised, its
  reciprocal looked up in the table of 1/(1+x) over [0, 1]; output (1/32768, 0).
- ``qnn.logistic16`` (LOGISTIC / TANH int16 → int16, reference_integer_ops Logistic / Tanh; logistic.cc
  and tanh.cc prepare): the input rescaled to units of 1/(3·4096) by (x·multiplier + round) >> shift,
  then TFLite's 256-entry table of sigmoid(k/24) interpolated (``tanh16`` of ops/recurrent_int8.py);
  output (2^-15, 0).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import quant
from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from .recurrent_int8 import SIGMOID_TABLE_Q16, tanh16

F32 = np.float32
INT16_RANGE = 65535            # int16 max − min, TFLM's ``range`` of the softmax tables


def _round(v: np.float32) -> np.float32:
    """TfLiteRound on a float: halves away from zero (exact in float64)."""
    return F32(math.copysign(math.floor(abs(float(v)) + 0.5), float(v)))


def _exp_f32(v: np.float32) -> np.float32:
    """std::exp(float), correctly rounded (float64 exp rounded to float32; it equals glibc's expf on every
    sample of the softmax table, tests/unit/test_int16_arith.py)."""
    return F32(math.exp(float(v)))


def lut_int16(fn, input_scale: float, input_zero_point: int, output_scale: float, output_zero_point: int):
    """LUTPopulateInt16<float>: int16 [513] table of ``fn`` (float32 → float32), every step in float32."""
    s_in, s_out = F32(input_scale), F32(output_scale)
    in_min, in_max = s_in * F32(-32768 - input_zero_point), s_in * F32(32767 - input_zero_point)
    out_min, out_max = s_out * F32(-32768 - output_zero_point), s_out * F32(32767 - output_zero_point)
    step = (in_max - in_min) / F32(512)
    half = step / F32(2)
    inv = F32(65536) / (out_max - out_min)
    table = []
    for i in range(512):
        val, mid, nxt = fn(in_min + F32(i) * step), fn(in_min + F32(i) * step + half), fn(in_min + F32(i + 1) * step)
        sample = _round(val * inv)
        interp = _round((nxt * inv + _round(val * inv)) / F32(2))
        bias = _round((interp - _round(mid * inv)) / F32(2))
        table.append(min(max(float(sample - bias), -32768.0), 32767.0))
    table.append(min(max(float(_round(fn(in_max) * inv)), -32768.0), 32767.0))
    return np.array(table, np.int16)


@functools.lru_cache(maxsize=None)
def softmax_tables() -> tuple[np.ndarray, np.ndarray]:
    """(exp table over [-10, 0], 1/(1+x) table over [0, 1]): the two int16 [513] tables of TFLM's int16
    SOFTMAX, the same for every model (InitializeLutForInt16)."""
    exp = lut_int16(_exp_f32, F32(10.0) / F32(INT16_RANGE), 32767, F32(2.0) / F32(INT16_RANGE), 0)
    recip = lut_int16(lambda v: F32(1.0) / (F32(1.0) + v), F32(1.0) / F32(INT16_RANGE), -32768,
                      F32(2.0) / F32(INT16_RANGE), 0)
    exp.setflags(write=False)
    recip.setflags(write=False)
    return exp, recip


def lut_lookup16(value, table: np.ndarray) -> np.ndarray:
    """LUTLookup(int16, 513-entry table): 9 index bits, 7 interpolated (rounded half up)."""
    v = np.asarray(value, np.int64)
    index = 256 + (v >> 7)
    base = table.astype(np.int64)[index]
    slope = ((table.astype(np.int64)[index + 1] - base + 32768) & 0xFFFF) - 32768      # an int16 difference
    return (base + ((slope * (v & 0x7F) + 64) >> 7)).astype(np.int16)


def softmax16_params(in_scale: float, beta: float = 1.0) -> tuple[int, int]:
    """(multiplier, shift) of QuantizeMultiplier(s_in · β / (10/65535)), s_in the float32 scale."""
    return quant.quantize_multiplier(float(F32(in_scale)) * float(beta) / (10.0 / 65535.0))


def softmax_int16(x, in_scale: float, axis: int = -1) -> np.ndarray:
    """TFLM int16 SOFTMAX along ``axis`` (module docstring): int16 in (zero point 0), int16 out (1/32768, 0)."""
    exp_lut, recip_lut = softmax_tables()
    m, shift = softmax16_params(in_scale)
    x = np.moveaxis(np.asarray(x).astype(np.int64), axis, -1)
    diff = x - x.max(axis=-1, keepdims=True)
    scaled = quant.mbqm(diff, m, shift)
    e = lut_lookup16(np.clip(scaled + 32767, -32768, 32767), exp_lut).astype(np.int64)
    total = e.sum(axis=-1, keepdims=True)
    clz = 32 - np.frexp(total.astype(np.float64))[1]              # leading zeros of the uint32 sum (> 0)
    shifted = ((total << (clz - 1)) + (1 << 13)) >> 14
    recip = lut_lookup16(np.clip(shifted - (1 << 15) - (1 << 16), -32768, 32767), recip_lut).astype(np.int64)
    right = 31 - clz
    y = (e * recip + (np.int64(1) << (right - 1))) >> right
    return np.moveaxis(np.clip(y, 0, 32767).astype(np.int16), -1, axis)


def _checked_log2(scale: float) -> tuple[bool, int]:
    """CheckedLog2: (whether log2(scale) is within 1e-3 of an integer, that integer), in float32."""
    log2 = F32(math.log(float(F32(scale)))) * (F32(1.0) / F32(math.log(2.0)))
    rounded = _round(log2)
    return bool(abs(float(log2 - rounded)) < 1e-3), int(rounded)


def logistic16_params(in_scale: float, tanh: bool) -> tuple[int, int]:
    """(multiplier, right shift) TFLM's int16 LOGISTIC / TANH Prepare computes for input scale
    ``in_scale``, after Eval's power-of-two case (multiplier 0 → 3 << shift, shift 0): a scale of 2^-12
    (TANH also 2^-11) is exact, any other becomes a multiplier of s_in·3·4096 doubled until it passes
    32767/2 (at most 31 times), truncated."""
    pot, log2 = _checked_log2(in_scale)
    left = 12 + log2
    if pot and (left == 0 or (tanh and left == 1)):
        return 3 << left, 0
    multiplier, left = float(F32(in_scale)) * 4096.0 * 3.0, 0
    while multiplier <= 32767.0 / 2.0 and left <= 30:
        left += 1
        multiplier *= 2.0
    return int(multiplier), left


def output_is_q15(scale: float, zero_point: int) -> bool:
    """TFLM's int16 LOGISTIC / TANH output check: zero point 0 and CheckedLog2(scale) == -15."""
    pot, log2 = _checked_log2(scale)
    return zero_point == 0 and pot and log2 == -15


def logistic16(x, multiplier: int, shift: int) -> np.ndarray:
    """reference_integer_ops::Logistic on int16: (x·multiplier + round) >> shift, then the sigmoid table
    interpolated with 9 fraction bits; Q0.15 out."""
    rnd = (1 << (shift - 1)) if shift > 0 else 0
    v = (np.asarray(x, np.int64) * multiplier + rnd) >> shift
    a = np.abs(v)
    uh = a >> 9
    ua = SIGMOID_TABLE_Q16[np.minimum(uh, 254)]
    ub = SIGMOID_TABLE_Q16[np.minimum(uh + 1, 255)]
    res = np.where(uh < 255, (ua << 9) + (a & 0x1FF) * (ub - ua), 0x7FFF << 10)
    res = np.where(v >= 0, res + (1 << 9), (1 << 25) - res + (1 << 9) - 1)
    return (res >> 10).astype(np.int16)


@register_op
class QLogistic16(OpDef):
    """TFLM int16 LOGISTIC (``tanh`` False) or TANH: int16 in (zero point 0), int16 out (2^-15, 0);
    ``multiplier`` and ``shift`` from ``logistic16_params``, ``table`` TFLite's sigmoid table (uint16
    [256], in flash)."""
    name, c_expr, pattern, num_inputs = "qnn.logistic16", "logistic16", OpPattern.ELEMWISE, 1
    attrs = {"table": None, "multiplier": 3, "shift": 0, "tanh": False}

    def infer(self, args, attrs):
        if args[0].dtype != "int16":
            raise TinyfuseError(f"qnn.logistic16: input {args[0]} is not int16")
        return args[0]

    def compute(self, x, table, multiplier, shift, tanh):
        if tanh:
            return tanh16(x, multiplier, shift)
        return logistic16(x, multiplier, shift)


def sigmoid_table() -> np.ndarray:
    """TFLite's sigmoid(k/24) table in Q0.16 as the uint16 [256] constant qnn.logistic16 reads."""
    return SIGMOID_TABLE_Q16.astype(np.uint16)
