"""The TFLM twin fuzzer's draws of element-wise, pooling, lookup-table and data-movement ops and of the
two-op chains (see twin_draw.py for the quantization draws and the wrap rule). Each ``draw_*`` takes a
numpy Generator and returns a Draw."""
from __future__ import annotations

import math

import numpy as np

from tests.builders import tflm_twin_models as tm
from tests.builders.tflm_twin_models import Net
from tests.fuzz.twin_draw import (ACTS, Draw, act_q, conv_params, conv_wrap, dim, f32, int8_data, log_scale, max_dev, pick,
                                  rescaled, wraps, zero_point, _conv_input, _conv_layer, _conv_summary)



def shape_of(rng, lo=1, hi=4, size=6) -> tuple:
    return tuple(dim(rng, size) for _ in range(int(rng.integers(lo, hi + 1))))


def _bcast(rng, shape) -> tuple:
    """``shape`` itself, with some dims set to 1, or a trailing part of it."""
    r = rng.random()
    if r < 0.4:
        return shape
    if r < 0.75:
        return tuple(1 if rng.random() < 0.5 else d for d in shape)
    return shape[int(rng.integers(0, len(shape))):]


def _m(*scales_num_den) -> float:
    num, den = scales_num_den
    return float(np.prod([np.float64(np.float32(s)) for s in num]) / np.prod([np.float64(np.float32(s)) for s in den]))


# ----------------------------------------------------------------------------- element-wise
def draw_binary(rng, opcode: str) -> Draw:
    a_shape = shape_of(rng, 1, 4 if rng.random() < 0.85 else 6, 5)
    b_shape = _bcast(rng, a_shape)
    if rng.random() < 0.3:
        a_shape, b_shape = b_shape, a_shape
    out_shape = np.broadcast_shapes(a_shape, b_shape)
    a_q, b_q = act_q(rng), act_q(rng)
    if rng.random() < 0.3:                           # equal scales: rounding ties
        b_q = (a_q[0], b_q[1])
    a, b = int8_data(rng, a_shape, a_q[1]), int8_data(rng, b_shape, b_q[1])
    if opcode == "MUL":
        out_q = (f32(a_q[0] * b_q[0] * 120 * 2.0 ** rng.uniform(-4, 4) * (2.0 ** -16 if rng.random() < 0.1 else 1)),
                 zero_point(rng))
        wrap = bool(wraps(max_dev(a, a_q[1]) * max_dev(b, b_q[1]), _m((a_q[0], b_q[0]), (out_q[0],))))
    else:
        out_q, wrap = rescaled(rng, (max(a_q[0], b_q[0]), 0), -2 if rng.random() < 0.9 else -26, 3), False
    act, const_b = pick(rng, ACTS), rng.random() < 0.2
    net = Net()
    x_a = net.input(a_shape, a_q)
    x_b = net.const(b, b_q) if const_b else net.input(b_shape, b_q)
    y = tm.binary(net, opcode, x_a, x_b, out_shape, out_q, act)
    params = dict(a=list(a_shape), b=list(b_shape), a_q=list(a_q), b_q=list(b_q), out_q=list(out_q), act=act,
                  const_b=const_b)
    return Draw(opcode, net.build([y]), [a] if const_b else [a, b], params, wrap)


def draw_pool(rng, opcode: str) -> Draw:
    x_shape = (dim(rng, 2), dim(rng, 10), dim(rng, 10), dim(rng, 7))
    q = act_q(rng)
    for _ in range(20):
        f = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
        s = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        pad = pick(rng, ["SAME", "VALID"])
        if all(tm.out_size(n, k, st, 1, pad) > 0 for n, k, st in zip(x_shape[1:3], f, s)):
            break
    else:
        f, s, pad = (1, 1), (1, 1), "SAME"
    act = pick(rng, ACTS)
    net = Net()
    y, _ = tm.pool(net, opcode, net.input(x_shape, q), x_shape, q, f, s, pad, act)
    params = dict(x=list(x_shape), q=list(q), filter=list(f), stride=list(s), padding=pad, act=act)
    return Draw(opcode, net.build([y]), [int8_data(rng, x_shape, q[1])], params)


def draw_lut(rng, opcode: str) -> Draw:
    """SOFTMAX (beta), LOGISTIC, TANH (fixed output q), RELU, RELU6, LEAKY_RELU, HARD_SWISH."""
    x_shape = shape_of(rng, 1, 4)
    in_q = (log_scale(rng, -8, 0) if rng.random() < 0.8 else log_scale(rng, -14, 4), zero_point(rng))
    fixed = {"SOFTMAX": (1 / 256, -128), "LOGISTIC": (1 / 256, -128), "TANH": (1 / 128, 0)}
    out_q = fixed.get(opcode) or (in_q if opcode == "RELU6" and rng.random() < 0.7 else rescaled(rng, in_q, -2, 2))
    net, params, wrap = Net(), dict(x=list(x_shape), in_q=list(in_q), out_q=list(out_q)), False
    x_t, y_t = net.input(x_shape, in_q), net.act(x_shape, out_q)
    if opcode == "SOFTMAX":
        params["beta"] = beta = 1.0 if rng.random() < 0.6 else f32(rng.uniform(0.1, 3))
        y = net.op(opcode, [x_t], y_t, "SoftmaxOptions", beta=beta)
    elif opcode == "LEAKY_RELU":
        params["alpha"] = alpha = f32(rng.uniform(0.01, 1.5))
        y = net.op(opcode, [x_t], y_t, "LeakyReluOptions", alpha=alpha)
        wrap = bool(wraps(255, _m((in_q[0], alpha), (out_q[0],))) or wraps(255, _m((in_q[0],), (out_q[0],))))
    else:
        y = net.op(opcode, [x_t], y_t)
        wrap = opcode == "RELU" and bool(wraps(255, _m((in_q[0],), (out_q[0],))))
    return Draw(opcode, net.build([y]), [int8_data(rng, x_shape, in_q[1])], params, wrap)


def draw_prelu(rng) -> Draw:
    x_shape = (1, dim(rng, 6), dim(rng, 6), dim(rng, 7))
    in_q, alpha_q = act_q(rng), (log_scale(rng, -8, 0), zero_point(rng))
    out_q = rescaled(rng, in_q, -2, 2)
    a_shape = pick(rng, [(x_shape[3],), (1, 1, x_shape[3]), x_shape[1:]])
    alpha = int8_data(rng, a_shape, alpha_q[1])
    x = int8_data(rng, x_shape, in_q[1])
    net = Net()
    y = net.op("PRELU", [net.input(x_shape, in_q), net.const(alpha, alpha_q)], net.act(x_shape, out_q))
    wrap = bool(wraps(255, _m((in_q[0],), (out_q[0],))) or
                wraps(max_dev(x, in_q[1]) * max_dev(alpha, alpha_q[1]), _m((in_q[0], alpha_q[0]), (out_q[0],))))
    params = dict(x=list(x_shape), alpha=list(a_shape), in_q=list(in_q), alpha_q=list(alpha_q), out_q=list(out_q))
    return Draw("PRELU", net.build([y]), [x], params, wrap)


def draw_quantize(rng, float_input: bool) -> Draw:
    """QUANTIZE int8 → int8 (TFLM requantizes) or float32 → int8; DEQUANTIZE via ``draw_dequantize``."""
    x_shape = shape_of(rng, 1, 4)
    out_q = act_q(rng)
    net = Net()
    if float_input:                                  # values on and near the rounding ties
        k = rng.integers(-300, 300, x_shape) + rng.choice([0.0, 0.5, -0.5, 0.25, 0.4999], x_shape)
        x = (k * np.float64(out_q[0])).astype(np.float32)
        y = net.op("QUANTIZE", [net.input(x_shape, None)], net.act(x_shape, out_q))
        return Draw("QUANTIZE(f32)", net.build([y]), [x], dict(x=list(x_shape), out_q=list(out_q)))
    in_q = act_q(rng)
    out_q = rescaled(rng, in_q, -4, 4)
    y = net.op("QUANTIZE", [net.input(x_shape, in_q)], net.act(x_shape, out_q))
    wrap = bool(wraps(255, _m((in_q[0],), (out_q[0],))))
    return Draw("QUANTIZE", net.build([y]), [int8_data(rng, x_shape, in_q[1])],
                dict(x=list(x_shape), in_q=list(in_q), out_q=list(out_q)), wrap)


def draw_dequantize(rng) -> Draw:
    x_shape, q = shape_of(rng, 1, 4), act_q(rng)
    net = Net()
    y = net.op("DEQUANTIZE", [net.input(x_shape, q)], net.act(x_shape, None))
    return Draw("DEQUANTIZE", net.build([y]), [int8_data(rng, x_shape, q[1])], dict(x=list(x_shape), q=list(q)))


def draw_mean(rng) -> Draw:
    from tests.builders.tflm_cases import tflm_oneop
    x_shape = shape_of(rng, 2, 4, 7)
    rank = len(x_shape)
    axes = sorted(set(int(a) for a in rng.choice(rank, int(rng.integers(1, rank + 1)), replace=False)))
    raw_axes = [a - rank if rng.random() < 0.3 else a for a in axes]
    keep = bool(rng.random() < 0.5)
    in_q = act_q(rng)
    out_q = rescaled(rng, in_q, -3, 2)
    x = int8_data(rng, x_shape, in_q[1])
    n = int(np.prod([x_shape[a] for a in axes]))
    q, shift = tflm_oneop().quantize_multiplier(_m((in_q[0],), (out_q[0],)))
    shift -= min(n.bit_length() - 1, 32, 31 + shift)
    wrap = n * max_dev(x, in_q[1]) * 2.0 ** max(shift, 0) >= 2.0 ** 31 - 1
    out_shape = [1 if i in axes else d for i, d in enumerate(x_shape) if keep or i not in axes]
    net = Net()
    y = net.op("MEAN", [net.input(x_shape, in_q), net.const(np.array(raw_axes, np.int32))], net.act(out_shape, out_q),
               "ReducerOptions", keepDims=keep)
    params = dict(x=list(x_shape), axes=raw_axes, keep=keep, in_q=list(in_q), out_q=list(out_q))
    return Draw("MEAN", net.build([y]), [x], params, bool(wrap))


def draw_resize(rng, opcode: str) -> Draw:
    from tests.builders.resize_models import tflite_resize
    x_shape = (dim(rng, 2), dim(rng, 7), dim(rng, 7), dim(rng, 5))
    size = (int(rng.integers(1, 2 * x_shape[1] + 3)), int(rng.integers(1, 2 * x_shape[2] + 3)))
    align, half = pick(rng, [(False, False), (True, False), (False, True)])
    q = act_q(rng)
    kind = "bilinear" if opcode == "RESIZE_BILINEAR" else "nearest"
    model = tflite_resize(kind, x_shape, size, align, half, q=q)
    params = dict(x=list(x_shape), size=list(size), align_corners=align, half_pixel_centers=half, q=list(q))
    return Draw(opcode, model, [int8_data(rng, x_shape, q[1])], params)


# ----------------------------------------------------------------------------- two-op chains
def draw_chain(rng, kind: str) -> Draw:
    """CONV+ADD (a residual add of a second input), CONV+POOL, DW+CONV (depthwise then pointwise)."""
    x_shape, in_q, x = _conv_input(rng, kind == "DW+CONV")
    p = conv_params(rng, x_shape, in_q, kind == "DW+CONV")
    net = Net()
    y, y_shape = _conv_layer(net, net.input(x_shape, in_q), x_shape, in_q, p)
    wrap, inputs, params = conv_wrap(x, in_q, p), [x], dict(first=_conv_summary(x_shape, in_q, p))
    if kind == "CONV+ADD":
        z_shape = pick(rng, [y_shape, (1, 1, 1, y_shape[3])])
        z_q = act_q(rng)
        out_q = rescaled(rng, (max(p["out_q"][0], z_q[0]), 0), -2, 3)
        act = pick(rng, ACTS)
        out = tm.binary(net, "ADD", y, net.input(z_shape, z_q), y_shape, out_q, act)
        inputs.append(int8_data(rng, z_shape, z_q[1]))
        params.update(z=list(z_shape), z_q=list(z_q), out_q=list(out_q), act=act)
    elif kind == "CONV+POOL":
        opcode = pick(rng, ["MAX_POOL_2D", "AVERAGE_POOL_2D"])
        f = (min(2, y_shape[1]), min(2, y_shape[2]))
        out, _ = tm.pool(net, opcode, y, y_shape, p["out_q"], f, f, "VALID", "NONE")
        params.update(pool=opcode, filter=list(f))
    else:
        q2 = dict(in_q=p["out_q"], oc=dim(rng, 8))
        w2 = rng.integers(-127, 128, (q2["oc"], 1, 1, y_shape[3])).astype(np.int8)
        ws2 = (2.0 ** rng.uniform(-9, -5, q2["oc"])).astype(np.float32)
        b2 = rng.integers(-3000, 3001, q2["oc"]).astype(np.int32)
        out_q2 = (f32(p["out_q"][0] * float(np.median(ws2)) * 120 * math.sqrt(y_shape[3]) * 2.0 ** rng.uniform(-3, 2)),
                  zero_point(rng))
        out, _ = tm.conv(net, y, y_shape, p["out_q"], w2, b2, ws2, out_q2, (1, 1), "SAME", (1, 1), "NONE")
        bound2 = 255 * np.abs(w2.astype(np.int64)).reshape(q2["oc"], -1).sum(1) + np.abs(b2.astype(np.int64))
        m2 = np.float64(np.float32(p["out_q"][0])) * ws2.astype(np.float64) / np.float64(np.float32(out_q2[0]))
        wrap = bool(np.any(wrap)) or bool(np.any(wraps(bound2, m2)))
        params.update(oc2=q2["oc"], out_q2=list(out_q2))
    return Draw(kind, net.build([out]), inputs, params, wrap)


def draw_chain2(rng, kind: str) -> Draw:
    """CONV+MEAN (a global average over H, W), CONV+SOFTMAX (over the channels), CONV+LEAKY_RELU."""
    from tests.builders.tflm_cases import tflm_oneop
    x_shape, in_q, x = _conv_input(rng, False)
    p = conv_params(rng, x_shape, in_q, False)
    net = Net()
    y, y_shape = _conv_layer(net, net.input(x_shape, in_q), x_shape, in_q, p)
    wrap, params = conv_wrap(x, in_q, p), dict(first=_conv_summary(x_shape, in_q, p))
    if kind == "CONV+MEAN":
        out_q = rescaled(rng, p["out_q"], -2, 2)
        n = y_shape[1] * y_shape[2]
        q, shift = tflm_oneop().quantize_multiplier(_m((p["out_q"][0],), (out_q[0],)))
        shift -= min(n.bit_length() - 1, 32, 31 + shift)
        wrap = bool(np.any(wrap)) or n * 255 * 2.0 ** max(shift, 0) >= 2.0 ** 31 - 1
        keep = bool(rng.random() < 0.5)
        out_shape = (y_shape[0], 1, 1, y_shape[3]) if keep else (y_shape[0], y_shape[3])
        out = net.op("MEAN", [y, net.const(np.array([1, 2], np.int32))], net.act(out_shape, out_q), "ReducerOptions",
                     keepDims=keep)
        params.update(out_q=list(out_q), keep=keep)
    elif kind == "CONV+SOFTMAX":
        beta = 1.0 if rng.random() < 0.6 else f32(rng.uniform(0.1, 3))
        out = net.op("SOFTMAX", [y], net.act(y_shape, (1 / 256, -128)), "SoftmaxOptions", beta=beta)
        params.update(beta=beta)
        wrap = bool(np.any(wrap))                    # softmax mixes the channels
    else:
        alpha, out_q = f32(rng.uniform(0.01, 1.5)), rescaled(rng, p["out_q"], -2, 2)
        out = net.op("LEAKY_RELU", [y], net.act(y_shape, out_q), "LeakyReluOptions", alpha=alpha)
        params.update(alpha=alpha, out_q=list(out_q))
    return Draw(kind, net.build([out]), [x], params, wrap)
