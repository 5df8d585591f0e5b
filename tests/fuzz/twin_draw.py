"""Random int8 TFLite models of one operator (or a cheap two-op chain) for the TFLM twin fuzzer
(tests/fuzz/tflm_twin.py), drawn with numpy from a seed: the same seed always gives the same model.

Every draw picks shapes with odd sizes and sizes of 1, and quantization the TFLite converter would
rarely write: activation scales 2^-10..2^0, zero points at -128 and 127 (30 %), per-channel weight
scales 2^-20..2^4 (a third of the weighted ops), output scales that put requantization multipliers
above 1, fused NONE / RELU / RELU6. A :class:`Draw` holds the model bytes, its int8 (or float32)
inputs, the parameters (JSON-able, for the failure log) and where TFLM's arithmetic is undefined:
``MultiplyByQuantizedMultiplier`` shifts its int32 accumulator left by the multiplier's exponent
(common.h: ``x * (1 << left_shift)``), which overflows when |acc|·2^shift ≥ 2^31; tinyfuse saturates
there (ARCHITECTURE.md), so those output channels (``wrap``) are not compared. Float twins
(twin_draw_float.py) carry ``tol``, the bound their outputs are compared within.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from tests.builders import tflm_twin_models as tm
from tests.builders.tflm_twin_models import Net


@dataclass
class Draw:
    op: str
    model: bytes
    inputs: list
    params: dict
    wrap: np.ndarray | bool = False       # bool per channel of output 0's last axis (or one for all)
    notes: list = field(default_factory=list)
    tol: np.ndarray | None = None         # float32 outputs: the largest |tinyfuse - TFLM| per output 0 element
    options: dict = field(default_factory=dict)   # compile_model options (e.g. sparse="on")


# ----------------------------------------------------------------------------- quantization draws
def f32(v) -> float:
    return float(np.float32(v))


def log_scale(rng, lo: float, hi: float) -> float:
    return f32(2.0 ** rng.uniform(lo, hi))


def zero_point(rng) -> int:
    r = rng.random()
    return -128 if r < 0.15 else 127 if r < 0.3 else int(rng.integers(-128, 128))


def act_q(rng) -> tuple[float, int]:
    """Activation (scale, zero point): scales 2^-10..2^0, a tenth 2^-16..2^4."""
    return (log_scale(rng, -16, 4) if rng.random() < 0.1 else log_scale(rng, -10, 0)), zero_point(rng)


def rescaled(rng, q, lo=-3.0, hi=3.0) -> tuple[float, int]:
    """An output q whose scale is the input's times 2^U(lo, hi): multipliers on both sides of 1."""
    return f32(q[0] * 2.0 ** rng.uniform(lo, hi)), zero_point(rng)


def int8_data(rng, shape, zp: int) -> np.ndarray:
    """Half uniform over the int8 range, half normal around the zero point (real values near 0)."""
    if rng.random() < 0.5:
        return rng.integers(-128, 128, shape).astype(np.int8)
    spread = rng.uniform(5, 80)
    return np.clip(np.round(zp + rng.normal(0, spread, shape)), -128, 127).astype(np.int8)


def weight_scales(rng, n: int) -> np.ndarray:
    """Per-channel weight scales: a third spread over 2^-20..2^4, else around one 2^-10..2^-4 base."""
    if rng.random() < 0.35:
        return np.array([log_scale(rng, -20, 4) for _ in range(n)], np.float32)
    base = 2.0 ** rng.uniform(-10, -4)
    return (base * rng.uniform(0.5, 2.0, n)).astype(np.float32)


ACTS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


def dim(rng, hi: int) -> int:
    return 1 if rng.random() < 0.15 else int(rng.integers(1, hi + 1))


def pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def left_shift(m: float) -> int:
    """The left shift TFLite's QuantizeMultiplier gives the real multiplier m (frexp exponent,
    bumped when the Q31 mantissa rounds up to 2^31)."""
    if m <= 0:
        return 0
    frac, shift = math.frexp(m)
    if round(frac * (1 << 31)) == 1 << 31:
        shift += 1
    return max(shift, 0)


def wraps(bound, m) -> np.ndarray:
    """Where |acc| ≤ bound times 2^left_shift(m) may leave int32 (per element of the arrays)."""
    bound, m = np.broadcast_arrays(np.asarray(bound, np.float64), np.asarray(m, np.float64))
    return np.array([b * 2.0 ** left_shift(float(x)) >= 2.0 ** 31 - 1 for b, x in zip(bound.ravel(), m.ravel())]
                    ).reshape(bound.shape)


def acc_scale(rng, in_q, ws, taps: int) -> float:
    """An output scale for a sum of ``taps`` products: about the real output's spread / 40 (|x - zp| and
    |w| around 70), times 2^U(-4, 3) so that requantization multipliers land on both sides of 1."""
    typical = in_q[0] * float(np.median(ws)) * 120 * math.sqrt(taps)
    if rng.random() < 0.1:                    # multipliers up to 2^22: TFLM's left shift may wrap
        return f32(typical * 2.0 ** rng.uniform(-30, -8))
    return f32(typical * 2.0 ** rng.uniform(-4, 3))


def max_dev(x: np.ndarray, zp: int) -> int:
    return int(np.max(np.abs(x.astype(np.int64) - zp))) if x.size else 0


# ----------------------------------------------------------------------------- weighted ops
def _conv_geometry(rng, x_shape, depthwise: bool):
    """kernel, stride, dilation, padding that give a non-empty output."""
    for _ in range(20):
        k = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
        s = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        d = (1, 1) if rng.random() < 0.7 else (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        pad = pick(rng, ["SAME", "VALID"])
        if all(tm.out_size(n, kk, ss, dd, pad) > 0 for n, kk, ss, dd in zip(x_shape[1:3], k, s, d)):
            return k, s, d, pad
    return (1, 1), (1, 1), (1, 1), "SAME"


def conv_params(rng, x_shape, in_q, depthwise: bool):
    """Weights, bias, scales and geometry of a random (depthwise) conv on ``x_shape``."""
    k, s, d, pad = _conv_geometry(rng, x_shape, depthwise)
    mult = int(rng.integers(1, 4)) if depthwise else 0
    oc = x_shape[3] * mult if depthwise else dim(rng, 9)
    w_shape = (1, *k, oc) if depthwise else (oc, *k, x_shape[3])
    w = rng.integers(-127, 128, w_shape).astype(np.int8)
    ws = weight_scales(rng, oc)
    taps = k[0] * k[1] * (1 if depthwise else x_shape[3])
    b = rng.integers(-2000, 2001, oc).astype(np.int32) * int(rng.integers(1, 30)) if rng.random() < 0.85 else None
    if b is None and depthwise:              # TFLM's depthwise crashes without its bias (tflm_oneop)
        b = np.zeros(oc, np.int32)
    out_q = (acc_scale(rng, in_q, ws, taps), zero_point(rng))
    return dict(w=w, b=b, ws=ws, k=k, stride=s, dilation=d, padding=pad, mult=mult, oc=oc, out_q=out_q,
                act=pick(rng, ACTS))


def conv_wrap(x, in_q, p) -> np.ndarray:
    """Per output channel: may TFLM's int32 left shift overflow?"""
    w = p["w"].astype(np.int64)
    wsum = np.abs(w).sum(axis=(0, 1, 2)) if p["mult"] else np.abs(w).reshape(w.shape[0], -1).sum(axis=1)
    bound = max_dev(x, in_q[1]) * wsum + (0 if p["b"] is None else np.abs(p["b"].astype(np.int64)))
    m = np.float64(np.float32(in_q[0])) * p["ws"].astype(np.float64) / np.float64(np.float32(p["out_q"][0]))
    return wraps(bound, m)


def _conv_input(rng, depthwise: bool):
    x_shape = (1 if rng.random() < 0.85 else 2, dim(rng, 10), dim(rng, 10), dim(rng, 7 if rng.random() < 0.8 else 24))
    in_q = act_q(rng)
    return x_shape, in_q, int8_data(rng, x_shape, in_q[1])


def _conv_layer(net, x_t, x_shape, in_q, p):
    return tm.conv(net, x_t, x_shape, in_q, p["w"], p["b"], p["ws"], p["out_q"], p["stride"], p["padding"],
                   p["dilation"], p["act"], p["mult"])


def _conv_summary(x_shape, in_q, p) -> dict:
    ws = p["ws"]
    return dict(x=list(x_shape), in_q=list(in_q), k=list(p["k"]), stride=list(p["stride"]),
                dilation=list(p["dilation"]), padding=p["padding"], mult=p["mult"], oc=p["oc"], act=p["act"],
                out_q=list(p["out_q"]), bias=p["b"] is not None,
                w_scale_log2=[round(float(np.log2(ws.min())), 2), round(float(np.log2(ws.max())), 2)])


def draw_conv(rng, depthwise=False) -> Draw:
    x_shape, in_q, x = _conv_input(rng, depthwise)
    p = conv_params(rng, x_shape, in_q, depthwise)
    net = Net()
    y, _ = _conv_layer(net, net.input(x_shape, in_q), x_shape, in_q, p)
    op = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    return Draw(op, net.build([y]), [x], _conv_summary(x_shape, in_q, p), conv_wrap(x, in_q, p))


def draw_fc(rng) -> Draw:
    k, n = dim(rng, 40), dim(rng, 12)
    keep = rng.random() < 0.3
    x_shape = (dim(rng, 3), dim(rng, 3), k) if keep or rng.random() < 0.3 else (dim(rng, 4), k)
    in_q = act_q(rng)
    x = int8_data(rng, x_shape, in_q[1])
    w = rng.integers(-127, 128, (n, k)).astype(np.int8)
    per_channel = rng.random() < 0.5
    ws = weight_scales(rng, n) if per_channel else weight_scales(rng, 1)
    b = rng.integers(-5000, 5001, n).astype(np.int32) if rng.random() < 0.8 else None
    out_q, act = (acc_scale(rng, in_q, ws, k), zero_point(rng)), pick(rng, ACTS)
    rows = int(np.prod(x_shape)) // k
    out_shape = x_shape[:-1] + (n,) if keep else (rows, n)
    net = Net()
    ins = [net.input(x_shape, in_q), net.weights(w, ws if per_channel else ws[0], 0),
           None if b is None else net.bias(b, in_q[0], np.broadcast_to(ws, (n,)))]
    y = net.op("FULLY_CONNECTED", ins, net.act(out_shape, out_q), "FullyConnectedOptions",
               fusedActivationFunction=tm.ACT[act], keepNumDims=bool(keep))
    bound = max_dev(x, in_q[1]) * np.abs(w.astype(np.int64)).sum(axis=1) + (0 if b is None else np.abs(b.astype(np.int64)))
    if per_channel:
        m = np.float64(np.float32(in_q[0])) * ws.astype(np.float64) / np.float64(np.float32(out_q[0]))
    else:                                  # per tensor: float32 product of the two scales (TFLite)
        m = np.float64(np.float32(in_q[0]) * np.float32(ws[0])) / np.float64(np.float32(out_q[0]))
    params = dict(x=list(x_shape), n=n, in_q=list(in_q), out_q=list(out_q), per_channel=per_channel, keep=keep,
                  bias=b is not None, act=act, w_scale_log2=round(float(np.log2(ws.min())), 2))
    return Draw("FULLY_CONNECTED", net.build([y]), [x], params, wraps(bound, m))


def draw_transpose_conv(rng) -> Draw:
    from tests.builders.tflite_convt import transpose_conv_int8
    x_shape = (1, dim(rng, 6), dim(rng, 6), dim(rng, 5))
    in_q = act_q(rng)
    x = int8_data(rng, x_shape, in_q[1])
    k, s, oc = (int(rng.integers(1, 5)), int(rng.integers(1, 5))), (int(rng.integers(1, 4)), int(rng.integers(1, 4))), dim(rng, 6)
    pad = pick(rng, ["SAME", "VALID"])
    lo_hi = [((n - 1) * st + 1, n * st) if pad == "SAME" else ((n - 1) * st + kk, n * st + kk - 1)
             for n, kk, st in zip(x_shape[1:3], k, s)]
    out_hw = tuple(int(rng.integers(lo, hi + 1)) for lo, hi in lo_hi)
    w = rng.integers(-127, 128, (oc, *k, x_shape[3])).astype(np.int8)
    ws = weight_scales(rng, oc)
    b = rng.integers(-20000, 20001, oc).astype(np.int32) if rng.random() < 0.7 else None
    taps = math.ceil(k[0] / s[0]) * math.ceil(k[1] / s[1]) * x_shape[3]
    out_q = (acc_scale(rng, in_q, ws, taps), zero_point(rng))
    act = pick(rng, ["NONE", "RELU", "RELU6"])
    model = transpose_conv_int8(x_shape, w, b, in_q, ws, out_q, out_hw, s, pad, act)
    bound = max_dev(x, in_q[1]) * np.abs(w.astype(np.int64)).reshape(oc, -1).sum(1) + (0 if b is None else np.abs(b.astype(np.int64)))
    m = np.float64(np.float32(in_q[0])) * ws.astype(np.float64) / np.float64(np.float32(out_q[0]))
    params = dict(x=list(x_shape), k=list(k), stride=list(s), padding=pad, out_hw=list(out_hw), oc=oc, in_q=list(in_q),
                  out_q=list(out_q), bias=b is not None, act=act)
    return Draw("TRANSPOSE_CONV", model, [x], params, wraps(bound, m))
