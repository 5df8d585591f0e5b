"""The TFLM twin fuzzer's draws of the element-wise math, comparison and logic builtins, in every type
TFLM's kernels take (float32, int8, int16, int32, int64, uint32, bool; see ``PAIRS``):
``draw_elem(rng, opcode, dtype)`` builds one op on random shapes (numpy broadcasting for the binary ops,
ranks 1..4) and values. int16 tensors are quantized with zero point 0 where TFLM's kernel rescales (ABS,
SQUARED_DIFFERENCE), else raw or quantized alike (MAXIMUM, MINIMUM, SELECT_V2, CAST read the stored
values). Not drawn: int16 GREATER (comparisons.cc sets its rescaling parameters for int8 only, so TFLM
reads an uninitialized OpData there) and int16 RSQRT (Prepare refuses it).

Comparison with TFLM: integer and bool outputs byte for byte. float32 outputs byte for byte too
(``tol`` None) where both sides run the same IEEE operations (ABS, NEG, FLOOR, CEIL, ROUND, SQUARE, SQRT,
RSQRT, DIV, FLOOR_DIV, FLOOR_MOD, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, ADD_N: adds in TFLM's order);
the libm functions (EXP, LOG, SIN, COS, ELU's expm1) within 2 ULP of the float64 value's float32
spacing (glibc on the host, newlib under qemu: each within 1 ULP of the true value).

Where TFLM's arithmetic is undefined the outputs are masked (``wrap``): SQUARED_DIFFERENCE int8 / int16
whose output multiplier's left shift overflows int32 (tinyfuse saturates, TFLM wraps) and int8 DIV
elements whose final RoundingDivideByPOT exponent exceeds 31 (an undefined shift in TFLM's C++). A CAST
from float32 keeps its values inside the output type (beyond, C++'s conversion is undefined).
"""
from __future__ import annotations

import numpy as np

from tests.builders import tflm_twin_models as tm
from tests.builders.tflm_twin_models import Net
from tests.fuzz.twin_draw import ACTS, Draw, act_q, f32, int8_data, log_scale, pick, rescaled, wraps, zero_point
from tests.fuzz.twin_draw_int16 import int16_data, q16
from tests.fuzz.twin_draw_ops import _bcast, shape_of

UNARY = ("ABS", "CEIL", "FLOOR", "ROUND", "EXP", "LOG", "SIN", "COS", "SQRT", "RSQRT", "SQUARE", "NEG", "ELU",
         "LOGICAL_NOT", "CAST", "ZEROS_LIKE")
COMPARE = ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")
LIBM = {"EXP": np.exp, "LOG": np.log, "SIN": np.sin, "COS": np.cos, "ELU": lambda x: np.where(x < 0, np.expm1(x), x)}
OPTIONS = {"DIV": "DivOptions", "ELU": None, "SQUARED_DIFFERENCE": "SquaredDifferenceOptions",
           "SELECT_V2": "SelectV2Options", "ADD_N": "AddNOptions", "CAST": "CastOptions"}
#: (op, dtype) pairs drawn: every type TFLM's kernel takes (maximum_minimum.cc, comparisons.cc, cast.cc, ...)
PAIRS = ([(op, "float32") for op in ("ABS", "CEIL", "FLOOR", "ROUND", "EXP", "LOG", "SIN", "COS", "SQRT", "RSQRT",
                                     "SQUARE", "NEG", "ELU", "MAXIMUM", "MINIMUM", "DIV", "FLOOR_DIV", "FLOOR_MOD",
                                     "SQUARED_DIFFERENCE", "ADD_N", "SELECT_V2", "CAST", "ZEROS_LIKE", *COMPARE)]
         + [(op, "int8") for op in ("ABS", "RSQRT", "ELU", "MAXIMUM", "MINIMUM", "DIV", "SQUARED_DIFFERENCE", "ADD_N",
                                    "SELECT_V2", "CAST", "ZEROS_LIKE", *COMPARE)]
         + [(op, "int32") for op in ("MAXIMUM", "MINIMUM", "DIV", "SQUARED_DIFFERENCE", "CAST", "ZEROS_LIKE", *COMPARE)]
         + [(op, "bool") for op in ("LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT", "EQUAL", "NOT_EQUAL", "CAST")]
         + [(op, "int16") for op in ("ABS", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "SELECT_V2", "CAST")]
         + [(op, "int64") for op in ("MAXIMUM", "MINIMUM", "ZEROS_LIKE", *COMPARE)] + [("CAST", "uint32")])
SHORT = {"float32": "f32", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint32": "u32", "bool": "bool"}
CAST_TO = ("float32", "int8", "int16", "int32", "uint32")          # cast.cc copyToTensor
RANGE = {t: (np.iinfo(t).min, np.iinfo(t).max) for t in ("int8", "int16", "int32", "uint32")}


def name(op: str, dtype: str) -> str:
    """The fuzzer's name of a draw: the int8 ones as the builtin, the others with their type."""
    return op if dtype == "int8" and op not in ("LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT") else f"{op}({SHORT[dtype]})"


# ----------------------------------------------------------------------------- values
def f32_values(rng, shape, op: str) -> np.ndarray:
    """Normal values at a random magnitude, in the op's domain; halves and ±0 for the rounding ops."""
    x = rng.standard_normal(shape) * 2.0 ** rng.uniform(-3, 4)
    if op in ("CEIL", "FLOOR", "ROUND"):
        x = np.where(rng.random(shape) < 0.4, np.round(x * 2) / 2, x)
        x[rng.random(shape) < 0.05] = -0.0
    if op in ("LOG", "SQRT", "RSQRT"):
        x = np.abs(x) + 1e-3
    if op in ("EXP", "ELU"):
        x = np.clip(x, -80, 80)
    if op in ("SIN", "COS"):
        x = np.clip(x, -100, 100)
    return x.astype(np.float32)


def int32_values(rng, shape, nonzero: bool = False, bits: int = 32) -> np.ndarray:
    """Small values, or (a third of the draws) the whole range of int``bits``."""
    big = rng.random() < 0.3
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if big else (-3000, 3000)
    x = rng.integers(lo, hi, shape, dtype=np.int64, endpoint=True)
    if nonzero:
        x = np.where(x == 0, 7, x)
        x = np.where(x == -1, -3, x)          # INT_MIN / -1 is undefined in C and C++
    return x.astype(np.int32 if bits == 32 else np.int64)


def values(rng, shape, dtype: str, op: str, q=None, nonzero: bool = False) -> np.ndarray:
    if dtype == "float32":
        x = f32_values(rng, shape, op)
        return np.where(x == 0, np.float32(0.75), x) if nonzero else x
    if dtype in ("int32", "int64"):
        return int32_values(rng, shape, nonzero, 32 if dtype == "int32" else 64)
    if dtype == "int16":
        return int16_data(rng, shape)
    if dtype == "uint32":
        return rng.integers(0, 2 ** 32 if rng.random() < 0.5 else 3000, shape, dtype=np.uint64).astype(np.uint32)
    if dtype == "bool":
        return rng.random(shape) < rng.uniform(0.2, 0.8)
    x = int8_data(rng, shape, q[1] if q else 0)
    return np.where(x == (q[1] if q else 0), np.int8((q[1] + 1) % 128 if q else 1), x) if nonzero else x


def _tol(op: str, args) -> np.ndarray | None:
    """Draw.tol: 2 float32 ULP of the float64 value for the libm ops, else None (byte for byte)."""
    if op not in LIBM:
        return None
    ref = np.abs(LIBM[op](args[0].astype(np.float64))).astype(np.float32)
    return 2 * np.spacing(ref).astype(np.float64)


# ----------------------------------------------------------------------------- int8 masks
def _sqdiff_wrap(a, b, a_q, b_q, out_q, left_shift: int = 7) -> bool:
    """Whether TFLM's output left shift may take the squared difference beyond int32 (squared_difference.cc:
    inputs shifted left by 7 for int8, 0 for int16)."""
    twice = 2.0 * max(np.float32(a_q[0]), np.float32(b_q[0]))
    d = (np.abs(a.astype(np.float64) - a_q[1]).max(initial=0) * np.float32(a_q[0])
         + np.abs(b.astype(np.float64) - b_q[1]).max(initial=0) * np.float32(b_q[0])) * 2 ** left_shift / twice + 2
    return bool(wraps(d * d, twice * twice / (np.float32(1 << 2 * left_shift) * np.float32(out_q[0]))))


def _div_undefined(a, b, a_q, b_q, out_q) -> np.ndarray:
    """Where TFLM's int8 DIV shifts right by more than 31 (div.h: exponent recip + headroom − output shift)."""
    from tests.builders.tflm_cases import tflm_oneop
    _, shift = tflm_oneop().quantize_multiplier(float(np.float32(a_q[0])) / (float(np.float32(b_q[0]))
                                                                           * float(np.float32(out_q[0]))))
    x, y = np.broadcast_arrays(a.astype(np.int64) - a_q[1], b.astype(np.int64) - b_q[1])
    x, y = np.where(y < 0, -x, x), np.maximum(np.abs(y), 1)
    y_bits = np.frexp(y.astype(np.float64))[1]                   # 31 − clz: the reciprocal's exponent is y_bits − 1
    v = np.where(x < 0, -x - 1, x)
    headroom = 31 - np.where(v > 0, np.frexp(v.astype(np.float64))[1], 0)
    return (y_bits - 1) + headroom - shift > 31


# ----------------------------------------------------------------------------- draws
def _shapes(rng, n: int, broadcast: bool) -> list[tuple]:
    base = shape_of(rng, 1, 4, 5)
    shapes = [base] + [(_bcast(rng, base) if broadcast else base) for _ in range(n - 1)]
    if broadcast and rng.random() < 0.3:
        shapes[0], shapes[1] = shapes[1], shapes[0]
    return shapes


def _in_q(rng, op: str, dtype: str):
    if dtype == "int16":                        # zero point 0: TFLM's int16 ABS / SQUARED_DIFFERENCE need it
        return q16(rng) if op == "SQUARED_DIFFERENCE" or rng.random() < 0.5 else None
    if dtype != "int8":
        return None
    if op in COMPARE:                           # TFLM aborts on an int8 comparison of scale >= 1
        return log_scale(rng, -10, -0.1), zero_point(rng)
    return act_q(rng)


def _out(net, op, dtype, shape, in_q, rng, qs):
    """The output tensor and its (dtype, q)."""
    if op in COMPARE or op.startswith("LOGICAL"):
        return net.act(shape, None, "y", "bool"), ("bool", None)
    if op == "CAST":
        to = pick(rng, [t for t in CAST_TO if t != dtype])
        return net.act(shape, None, "y", to), (to, None)
    if dtype == "int16" and in_q is not None:
        return _out16(net, op, shape, in_q, rng, qs)
    if dtype != "int8":
        return net.act(shape, None, "y", dtype), (dtype, None)
    if op in ("MAXIMUM", "MINIMUM", "SELECT_V2", "ZEROS_LIKE"):
        q = in_q if rng.random() < 0.5 else act_q(rng)
    elif op == "SQUARED_DIFFERENCE":
        s = max(qs[0][0], qs[1][0])
        q = (float(np.float32(s * s * 3000 * 2.0 ** rng.uniform(-4, 3))), zero_point(rng))
    elif op == "DIV":
        q = (float(np.float32(qs[0][0] / qs[1][0] * 2.0 ** rng.uniform(-5, 1))), zero_point(rng))
    else:
        q = rescaled(rng, in_q, -2, 2)
    return net.act(shape, q, "y"), ("int8", q)


def _out16(net, op, shape, in_q, rng, qs):
    """The int16 output of a quantized int16 op: zero point 0 (ABS, SQUARED_DIFFERENCE), or any q of the
    ops that copy stored values."""
    if op == "SQUARED_DIFFERENCE":
        s = max(qs[0][0], qs[1][0])
        q = (f32(s * s * 1e5 * 2.0 ** rng.uniform(-4, 3)), 0)
    elif op == "ABS" or rng.random() < 0.5:
        q = (f32(in_q[0] * 2.0 ** rng.uniform(-2, 2)), 0)
    else:
        q = in_q
    return net.act(shape, q, "y", "int16"), ("int16", q)


def _cast_range(x: np.ndarray, to: str) -> np.ndarray:
    """float32 values inside ``to``'s range (static_cast of a float beyond it is undefined in C++)."""
    if x.dtype != np.float32 or to not in RANGE:
        return x
    lo, hi = RANGE[to]
    return np.clip(x, max(lo, -2.0 ** 24), min(hi, 2.0 ** 24)).astype(np.float32)


def _input_qs(rng, op: str, dtype: str, in_q, n: int) -> list:
    """One q per input: ADD_N's and int16's shared, else each a 30 % chance of the first one."""
    if op == "ADD_N" or dtype == "int16" and op != "SQUARED_DIFFERENCE":
        return [in_q] * n
    if dtype == "int16":
        return [in_q, q16(rng) if rng.random() < 0.7 else in_q]
    return [in_q if rng.random() < 0.3 else _in_q(rng, op, dtype) for _ in range(n)]


def _args(rng, op, dtype, shapes, types, qs, out_dtype) -> list[np.ndarray]:
    """The input values: nonzero divisors, int8 RSQRT from the zero point on (below it TFLM's Invoke
    fails), a float32 CAST inside the output type."""
    args = [values(rng, s, t, op, q, nonzero=(op in ("DIV", "FLOOR_DIV", "FLOOR_MOD") and i == 1))
            for i, (s, t, q) in enumerate(zip(shapes, types, qs))]
    if op == "RSQRT" and dtype == "int8":
        args[0] = np.maximum(args[0], np.int8(qs[0][1]))
    if op == "CAST":
        args[0] = _cast_range(args[0], out_dtype)
    return args


def _emit(net, rng, op, dtype, ins, y, params):
    """Append ``op`` (ZEROS_LIKE feeding MAXIMUM(x, zeros): a constant model output is refused)."""
    if op == "ZEROS_LIKE":
        z = net.act(params["shapes"][0], params["qs"][0], "z", dtype)
        net.op("ZEROS_LIKE", ins, z)
        return net.op("MAXIMUM", [ins[0], z], y)
    if op == "DIV":
        act = params.setdefault("act", pick(rng, ACTS))
        return net.op(op, ins, y, OPTIONS[op], fusedActivationFunction=tm.ACT[act])
    return net.op(op, ins, y, OPTIONS[op]) if OPTIONS.get(op) else net.op(op, ins, y)


def _wrap(op, dtype, args, qs, out_q):
    """The outputs where TFLM's arithmetic is undefined (module doc)."""
    if op == "SQUARED_DIFFERENCE" and dtype in ("int8", "int16") and out_q is not None:
        return _sqdiff_wrap(args[0], args[1], qs[0], qs[1], out_q, 7 if dtype == "int8" else 0)
    if op == "DIV" and dtype == "int8":
        return _div_undefined(args[0], args[1], qs[0], qs[1], out_q)
    return False


def draw_elem(rng, op: str, dtype: str) -> Draw:
    """One ``op`` on ``dtype`` operands (module doc)."""
    n = 1 if op in UNARY else 3 if op == "SELECT_V2" else int(rng.integers(2, 5)) if op == "ADD_N" else 2
    shapes = _shapes(rng, n, op not in UNARY and op != "ADD_N")
    in_q = _in_q(rng, op, dtype)
    qs = _input_qs(rng, op, dtype, in_q, n)
    types = [dtype] * n
    if op == "SELECT_V2":
        qs, types = [None, *qs[1:]], ["bool", dtype, dtype]
    net = Net()
    ins = [net.input(s, q, t) for s, q, t in zip(shapes, qs, types)]
    y, (out_dtype, out_q) = _out(net, op, dtype, tuple(np.broadcast_shapes(*shapes)), in_q, rng, qs)
    args = _args(rng, op, dtype, shapes, types, qs, out_dtype)
    params = dict(shapes=[list(s) for s in shapes], dtype=dtype, qs=[list(q) if q else None for q in qs],
                  out=out_dtype, out_q=list(out_q) if out_q else None)
    y = _emit(net, rng, op, dtype, ins, y, params)
    return Draw(name(op, dtype), net.build([y]), args, params, _wrap(op, dtype, args, qs, out_q),
                tol=_tol(op, args) if dtype == "float32" else None)


OPS = {name(op, dtype): (lambda op, dtype: lambda rng: draw_elem(rng, op, dtype))(op, dtype) for op, dtype in PAIRS}
NOT_INT8 = [name(op, dtype) for op, dtype in PAIRS if dtype != "int8"]
