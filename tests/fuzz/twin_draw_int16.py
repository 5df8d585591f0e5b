"""The TFLM twin fuzzer's int16 (16x8) draws: random one-op and two-op .tflite models with int16
activations (zero point 0 where TFLM's int16 kernel needs it), int8 weights and int64 (or int32, or no)
bias, compared byte for byte with TFLM (tests/fuzz/tflm_twin.py; the ``int16`` group). Each ``draw_*``
takes a numpy Generator and returns a Draw; ``wrap`` marks the outputs where TFLM's arithmetic leaves
int32 (its 64-bit requantization truncates a result beyond int32, its int32 one shifts left past it),
which tinyfuse saturates instead (twin_draw.py)."""
from __future__ import annotations

import math

import numpy as np

from tests.builders import tflm_twin_models as tm
from tests.builders.tflm_twin_models import Net
from tests.fuzz.twin_draw import (ACTS, Draw, _conv_geometry, dim, f32, int8_data, log_scale, max_dev, pick,
                                  weight_scales, wraps, zero_point)
from tests.fuzz.twin_draw_ops import _bcast, _m, shape_of

I16 = "int16"


def q16(rng, zp: bool = False) -> tuple[float, int]:
    """An int16 activation (scale, zero point): scales 2^-16..2^-4, zero point 0 (or, ``zp``, any)."""
    return log_scale(rng, -16, -4), (int(rng.integers(-300, 301)) if zp and rng.random() < 0.5 else 0)


def int16_data(rng, shape, zp: int = 0) -> np.ndarray:
    """A third uniform over int16, a third normal around the zero point, a third small values."""
    r = rng.random()
    if r < 0.34:
        return rng.integers(-32768, 32768, shape).astype(np.int16)
    spread = rng.uniform(50, 12000) if r < 0.67 else rng.uniform(1, 40)
    return np.clip(np.round(zp + rng.normal(0, spread, shape)), -32768, 32767).astype(np.int16)


def _wrap64(bound, m) -> np.ndarray:
    """Where |acc| ≤ bound times the real multiplier m may leave int32 (TFLM's 64-bit requantization
    truncates there; tinyfuse saturates)."""
    return np.asarray(bound, np.float64) * np.asarray(m, np.float64) >= 2.0 ** 30


def _bias(rng, n: int):
    """int64 bias (most draws), int32, or none; values of int16 accumulator size."""
    r = rng.random()
    if r < 0.15:
        return None
    b = rng.integers(-2 ** 20, 2 ** 20 + 1, n) * int(rng.integers(1, 200))
    return b.astype(np.int64 if r < 0.8 else np.int32)


def _acc_q(rng, in_q, ws, taps: int) -> tuple[float, int]:
    typical = in_q[0] * float(np.median(ws)) * 8000 * 60 * math.sqrt(taps)
    return f32(typical * 2.0 ** rng.uniform(-5, 4) / 32768), 0


# ----------------------------------------------------------------------------- weighted ops
def _conv(rng, net, x_t, x_shape, in_q, depthwise: bool, spread: bool = True, geometry=None, oc: int = 0):
    """One 16x8 conv layer; ``spread`` False: weight scales within a factor 4 (fewer channels where TFLM's
    arithmetic leaves int32, for chains, where one such channel masks the whole output); ``geometry``
    (kernel, stride, dilation, padding) and ``oc``: drawn when not given."""
    k, s, d, pad = geometry or _conv_geometry(rng, x_shape, depthwise)
    mult = (int(rng.integers(1, 4)) if geometry is None or rng.random() < 0.3 else 1) if depthwise else 0
    oc = x_shape[3] * mult if depthwise else (oc or dim(rng, 9))
    w = rng.integers(-127, 128, (1, *k, oc) if depthwise else (oc, *k, x_shape[3])).astype(np.int8)
    ws = weight_scales(rng, oc) if spread else (2.0 ** rng.uniform(-10, -4) * rng.uniform(0.5, 2.0, oc)).astype(np.float32)
    b = _bias(rng, oc)
    if depthwise and (b is None or b.dtype != np.int64):   # TFLM's int16 depthwise reads an int64 bias
        b = np.zeros(oc, np.int64) if b is None else b.astype(np.int64)
    out_q = _acc_q(rng, in_q, ws, k[0] * k[1] * (1 if depthwise else x_shape[3]))
    act = pick(rng, ACTS)
    y, y_shape = tm.conv(net, x_t, x_shape, in_q, w, b, ws, out_q, s, pad, d, act, mult, dtype=I16)
    wsum = np.abs(w.astype(np.int64)).sum(axis=(0, 1, 2)) if mult else np.abs(w.astype(np.int64)).reshape(oc, -1).sum(1)
    bound = 32768 * wsum + (0 if b is None else np.abs(b.astype(np.int64)))
    m = np.float64(np.float32(in_q[0])) * ws.astype(np.float64) / np.float64(np.float32(out_q[0]))
    wrap = wraps(bound, m) if b is not None and b.dtype == np.int32 else _wrap64(bound, m)
    params = dict(k=list(k), stride=list(s), dilation=list(d), padding=pad, mult=mult, oc=oc, out_q=list(out_q),
                  act=act, bias=None if b is None else str(b.dtype))
    return y, y_shape, out_q, wrap, params


def draw_conv(rng, depthwise: bool = False) -> Draw:
    x_shape = (1 if rng.random() < 0.85 else 2, dim(rng, 9), dim(rng, 9), dim(rng, 6 if rng.random() < 0.8 else 20))
    in_q = q16(rng)
    x = int16_data(rng, x_shape)
    net = Net()
    y, _, _, wrap, params = _conv(rng, net, net.input(x_shape, in_q, I16), x_shape, in_q, depthwise)
    op = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    return Draw(op + "(i16)", net.build([y]), [x], dict(x=list(x_shape), in_q=list(in_q), **params), wrap)


def draw_conv_simd(rng) -> Draw:
    """A 16x8 CONV_2D in the shape classes of the arm_dsp s16 kernel: pointwise with C % 4 == 0 (input read
    in place), C % 4 != 0 and windows (im2col pairs, zero-padded reduction), long reductions (the step
    loop), 1..16 output channels (blocks of 3 and their tails), 1..2 batches."""
    c = pick(rng, [4, 8, 12, 16, 32, 3, 5, 6, 1])
    x_shape = (1 if rng.random() < 0.85 else 2, int(rng.integers(1, 8)), int(rng.integers(1, 8)), c)
    geometry = ((1, 1), (1, 1), (1, 1), "VALID") if rng.random() < 0.4 else None
    in_q = q16(rng)
    x = int16_data(rng, x_shape)
    net = Net()
    y, _, _, wrap, params = _conv(rng, net, net.input(x_shape, in_q, I16), x_shape, in_q, False,
                                  geometry=geometry, oc=int(rng.integers(1, 17)))
    return Draw("SIMD CONV_2D(i16)", net.build([y]), [x], dict(x=list(x_shape), in_q=list(in_q), **params), wrap)


def draw_dw_simd(rng) -> Draw:
    """A 16x8 DEPTHWISE_CONV_2D in the shape classes of the arm_dsp s16 kernel: even and odd channel counts
    (channel pairs and the last single channel), multiplier 1 mostly (pairs) or 2..3 (single channels),
    3x3 windows with SAME padding (the zero row) beside drawn ones (odd tap counts: the zero-weight tap)."""
    c = pick(rng, [2, 4, 8, 16, 24, 3, 7, 1])
    x_shape = (1, int(rng.integers(1, 10)), int(rng.integers(1, 10)), c)
    geometry = ((3, 3), (int(rng.integers(1, 3)),) * 2, (1, 1), "SAME") if rng.random() < 0.5 else None
    in_q = q16(rng)
    x = int16_data(rng, x_shape)
    net = Net()
    y, _, _, wrap, params = _conv(rng, net, net.input(x_shape, in_q, I16), x_shape, in_q, True, geometry=geometry)
    return Draw("SIMD DEPTHWISE_CONV_2D(i16)", net.build([y]), [x], dict(x=list(x_shape), in_q=list(in_q), **params),
                wrap)


def draw_fc(rng, simd: bool = False) -> Draw:
    """A 16x8 FULLY_CONNECTED; ``simd``: the arm_dsp s16 kernel's shape classes (K of whole groups of 4
    or with a tail, up to 160; 1..6 rows; 1..16 columns)."""
    k, n = (int(rng.integers(1, 161)), int(rng.integers(1, 17))) if simd else (dim(rng, 40), dim(rng, 12))
    x_shape = (int(rng.integers(1, 7)) if simd else dim(rng, 4), k)
    in_q = q16(rng)
    x = int16_data(rng, x_shape)
    w = rng.integers(-127, 128, (n, k)).astype(np.int8)
    per_channel = rng.random() < 0.5
    ws = weight_scales(rng, n) if per_channel else weight_scales(rng, 1)
    b = _bias(rng, n)
    out_q, act = _acc_q(rng, in_q, ws, k), pick(rng, ACTS)
    net = Net()
    ins = [net.input(x_shape, in_q, I16), net.weights(w, ws if per_channel else ws[0], 0),
           None if b is None else net.bias(b, in_q[0], np.broadcast_to(ws, (n,)))]
    y = net.op("FULLY_CONNECTED", ins, net.act((x_shape[0], n), out_q, dtype=I16), "FullyConnectedOptions",
               fusedActivationFunction=tm.ACT[act])
    bound = max_dev(x, 0) * np.abs(w.astype(np.int64)).sum(axis=1) + (0 if b is None else np.abs(b.astype(np.int64)))
    if per_channel:
        m = np.float64(np.float32(in_q[0])) * ws.astype(np.float64) / np.float64(np.float32(out_q[0]))
    else:
        m = np.float64(np.float32(in_q[0]) * np.float32(ws[0])) / np.float64(np.float32(out_q[0]))
    wrap = wraps(bound, m) if b is not None and b.dtype == np.int32 else _wrap64(bound, m)
    params = dict(x=list(x_shape), n=n, in_q=list(in_q), out_q=list(out_q), per_channel=per_channel, act=act,
                  bias=None if b is None else str(b.dtype))
    return Draw(("SIMD " if simd else "") + "FULLY_CONNECTED(i16)", net.build([y]), [x], params, wrap)


# ----------------------------------------------------------------------------- element-wise
def draw_binary(rng, opcode: str) -> Draw:
    """ADD / SUB (any zero points, TFLM's 15-bit headroom) and MUL (zero points 0)."""
    a_shape = shape_of(rng, 1, 4, 5)
    b_shape = _bcast(rng, a_shape)
    if rng.random() < 0.3:
        a_shape, b_shape = b_shape, a_shape
    out_shape = np.broadcast_shapes(a_shape, b_shape)
    zp = opcode != "MUL"
    a_q, b_q = q16(rng, zp), q16(rng, zp)
    if rng.random() < 0.3:
        b_q = (a_q[0], b_q[1])
    a, b = int16_data(rng, a_shape, a_q[1]), int16_data(rng, b_shape, b_q[1])
    if opcode == "MUL":
        out_q = (f32(a_q[0] * b_q[0] * 2 ** 15 * 2.0 ** rng.uniform(-4, 3)), 0)
        wrap = bool(wraps(max_dev(a, 0) * max_dev(b, 0), _m((a_q[0], b_q[0]), (out_q[0],))))
    else:
        out_q = (f32(max(a_q[0], b_q[0]) * 2.0 ** rng.uniform(-1.5, 3)), int(rng.integers(-300, 301)) if zp and
                 rng.random() < 0.3 else 0)
        wrap = False
    act = pick(rng, ACTS)
    net = Net()
    y = tm.binary(net, opcode, net.input(a_shape, a_q, I16), net.input(b_shape, b_q, I16), out_shape, out_q, act, I16)
    params = dict(a=list(a_shape), b=list(b_shape), a_q=list(a_q), b_q=list(b_q), out_q=list(out_q), act=act)
    return Draw(opcode + "(i16)", net.build([y]), [a, b], params, wrap)


def draw_pool(rng, opcode: str) -> Draw:
    x_shape = (dim(rng, 2), dim(rng, 9), dim(rng, 9), dim(rng, 7))
    q = q16(rng)
    for _ in range(20):
        f, s = (int(rng.integers(1, 7)), int(rng.integers(1, 7))), (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        pad = pick(rng, ["SAME", "VALID"])
        if all(tm.out_size(n, k, st, 1, pad) > 0 for n, k, st in zip(x_shape[1:3], f, s)):
            break
    else:
        f, s, pad = (1, 1), (1, 1), "SAME"
    act = pick(rng, ACTS)
    net = Net()
    y, _ = tm.pool(net, opcode, net.input(x_shape, q, I16), x_shape, q, f, s, pad, act, I16)
    params = dict(x=list(x_shape), q=list(q), filter=list(f), stride=list(s), padding=pad, act=act)
    return Draw(opcode + "(i16)", net.build([y]), [int16_data(rng, x_shape)], params)


def draw_activation(rng, opcode: str) -> Draw:
    """SOFTMAX int16 → int16 (1/32768, 0) or int8 → int16 (1/65536, -32768); LOGISTIC / TANH int16 →
    int16 (2^-15, 0), input scales on and off the powers of two TFLM treats apart."""
    x_shape = shape_of(rng, 1, 4)
    net = Net()
    if opcode == "SOFTMAX" and rng.random() < 0.35:             # int8 in, int16 out
        in_q = (log_scale(rng, -8, 0), zero_point(rng))
        x, x_t = int8_data(rng, x_shape, in_q[1]), net.input(x_shape, in_q)
        out_q = (1 / 65536, -32768)
    else:
        in_q = ((2.0 ** -int(rng.integers(10, 14)) if rng.random() < 0.3 else log_scale(rng, -16, -8)), 0)
        x, x_t = int16_data(rng, x_shape), net.input(x_shape, in_q, I16)
        out_q = (1 / 32768, 0)
    y_t = net.act(x_shape, out_q, dtype=I16)
    params = dict(x=list(x_shape), in_q=list(in_q), in_dtype=str(x.dtype))
    if opcode == "SOFTMAX":
        params["beta"] = beta = 1.0 if rng.random() < 0.7 else f32(rng.uniform(0.3, 2))
        y = net.op(opcode, [x_t], y_t, "SoftmaxOptions", beta=beta)
    else:
        y = net.op(opcode, [x_t], y_t)
    return Draw(opcode + "(i16)", net.build([y]), [x], params)


def draw_quantize(rng) -> Draw:
    """QUANTIZE float32 → int16, int8 ↔ int16, int16 → int16, int16 → int32; DEQUANTIZE int16 → float32."""
    x_shape = shape_of(rng, 1, 4)
    kind = pick(rng, ["f32>i16", "i8>i16", "i16>i8", "i16>i16", "i16>i32", "dequantize"])
    net = Net()
    if kind == "f32>i16":
        out_q = q16(rng, True)
        k = rng.integers(-40000, 40000, x_shape) + rng.choice([0.0, 0.5, -0.5, 0.25, 0.4999], x_shape)
        x = (k * np.float64(out_q[0])).astype(np.float32)
        y = net.op("QUANTIZE", [net.input(x_shape, None)], net.act(x_shape, out_q, dtype=I16))
        return Draw("QUANTIZE(i16)", net.build([y]), [x], dict(kind=kind, x=list(x_shape), out_q=list(out_q)))
    if kind == "i8>i16":
        in_q = (log_scale(rng, -8, 0), zero_point(rng))
        x, x_t = int8_data(rng, x_shape, in_q[1]), net.input(x_shape, in_q)
    else:
        in_q = q16(rng, True)
        x, x_t = int16_data(rng, x_shape, in_q[1]), net.input(x_shape, in_q, I16)
    if kind == "dequantize":
        y = net.op("DEQUANTIZE", [x_t], net.act(x_shape, None))
        return Draw("QUANTIZE(i16)", net.build([y]), [x], dict(kind=kind, x=list(x_shape), in_q=list(in_q)))
    out_dtype = {"i8>i16": I16, "i16>i8": "int8", "i16>i16": I16, "i16>i32": "int32"}[kind]
    span = {"int8": (-8, 2), I16: (-5, 5), "int32": (-12, -6)}[out_dtype]
    out_q = (f32(in_q[0] * 2.0 ** rng.uniform(*span)), zero_point(rng) if out_dtype == "int8" else 0)
    y = net.op("QUANTIZE", [x_t], net.act(x_shape, out_q, dtype=out_dtype))
    wrap = bool(wraps(max_dev(x, in_q[1]), _m((in_q[0],), (out_q[0],))))
    return Draw("QUANTIZE(i16)", net.build([y]), [x], dict(kind=kind, x=list(x_shape), in_q=list(in_q),
                                                          out_q=list(out_q)), wrap)


# ----------------------------------------------------------------------------- data movement, mean
def draw_move(rng) -> Draw:
    """CONCATENATION (one q), RESHAPE, PAD (zero or a constant value)."""
    kind = pick(rng, ["CONCATENATION", "RESHAPE", "PAD"])
    x_shape = shape_of(rng, 1, 4)
    q = q16(rng)
    x = int16_data(rng, x_shape)
    net = Net()
    x_t = net.input(x_shape, q, I16)
    if kind == "CONCATENATION":
        axis = int(rng.integers(0, len(x_shape)))
        other = tuple(dim(rng, 4) if i == axis else d for i, d in enumerate(x_shape))
        out_shape = tuple(d + o if i == axis else d for i, (d, o) in enumerate(zip(x_shape, other)))
        y = net.op(kind, [x_t, net.input(other, q, I16)], net.act(out_shape, q, dtype=I16), "ConcatenationOptions",
                   axis=axis)
        return Draw("MOVE(i16)", net.build([y]), [x, int16_data(rng, other)], dict(kind=kind, x=list(x_shape),
                                                                                  other=list(other), axis=axis))
    if kind == "RESHAPE":
        out_shape = (int(np.prod(x_shape)),) if rng.random() < 0.5 else (1, *x_shape[::-1])
        y = net.op(kind, [x_t, net.const(np.array(out_shape, np.int32))], net.act(out_shape, q, dtype=I16),
                   "ReshapeOptions", newShape=list(out_shape))
        return Draw("MOVE(i16)", net.build([y]), [x], dict(kind=kind, x=list(x_shape), out=list(out_shape)))
    pads = rng.integers(0, 3, (len(x_shape), 2)).astype(np.int32)
    out_shape = tuple(int(d + p.sum()) for d, p in zip(x_shape, pads))
    ins = [x_t, net.const(pads)]
    if rng.random() < 0.4:
        ins.append(net.const(np.array([int(rng.integers(-32768, 32768))], np.int16), q))
    y = net.op("PADV2" if len(ins) == 3 else "PAD", ins, net.act(out_shape, q, dtype=I16))
    return Draw("MOVE(i16)", net.build([y]), [x], dict(kind=kind, x=list(x_shape), pads=pads.tolist(),
                                                      value=len(ins) == 3))


def draw_mean(rng) -> Draw:
    x_shape = shape_of(rng, 2, 4, 7)
    rank = len(x_shape)
    axes = sorted(set(int(a) for a in rng.choice(rank, int(rng.integers(1, rank + 1)), replace=False)))
    keep = bool(rng.random() < 0.5)
    in_q = q16(rng)
    out_q = (f32(in_q[0] * 2.0 ** rng.uniform(-3, 2)), 0)
    x = int16_data(rng, x_shape)
    out_shape = [1 if i in axes else d for i, d in enumerate(x_shape) if keep or i not in axes]
    net = Net()
    y = net.op("MEAN", [net.input(x_shape, in_q, I16), net.const(np.array(axes, np.int32))],
               net.act(out_shape, out_q, dtype=I16), "ReducerOptions", keepDims=keep)
    n = int(np.prod([x_shape[a] for a in axes]))
    wrap = bool(n * max_dev(x, 0) * max(_m((in_q[0],), (out_q[0],)), 1.0) / n >= 2.0 ** 30)
    return Draw("MEAN(i16)", net.build([y]), [x], dict(x=list(x_shape), axes=axes, keep=keep, in_q=list(in_q),
                                                      out_q=list(out_q)), wrap)


def draw_chain(rng) -> Draw:
    """DEPTHWISE → CONV → ADD of the block's input where the shapes allow, all int16 (a DS-CNN block)."""
    x_shape = (1, dim(rng, 7), dim(rng, 7), dim(rng, 6))
    in_q = q16(rng)
    x = int16_data(rng, x_shape)
    net = Net()
    x_t = net.input(x_shape, in_q, I16)
    y, y_shape, q1, wrap1, p1 = _conv(rng, net, x_t, x_shape, in_q, True, spread=False)
    z, z_shape, q2, wrap2, p2 = _conv(rng, net, y, y_shape, q1, False, spread=False)
    out_q = (f32(max(q2[0], in_q[0]) * 2.0 ** rng.uniform(-1, 2)), 0)
    if z_shape == x_shape:
        z = tm.binary(net, "ADD", z, x_t, z_shape, out_q, "NONE", I16)
    wrap = bool(np.any(wrap1)) or bool(np.any(wrap2))
    return Draw("DW>CONV>ADD(i16)", net.build([z]), [x], dict(x=list(x_shape), dw=p1, conv=p2, out_q=list(out_q)),
                wrap)
