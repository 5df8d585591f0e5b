"""The TFLM twin fuzzer's int8 draws at the shapes where the SIMD kernels (arm_dsp, arm_mve) branch, and
the quantization their requantization blocks must get right (see twin_draw.py for the base draws and
the wrap rule). Every draw lists its shape classes in ``params["classes"]`` (the campaign's coverage
table counts them):

- image: ``w1`` ([N, H, 1, C]: a 1-D temporal conv, the keyword spotter's shape), ``h1`` ([N, 1, W, C]),
  ``1x1`` ([N, 1, 1, C]), ``2d``; ``batch2``;
- channels 1..67 (``c%4``: not a multiple of 4, ``c%16``: a multiple of 4 but not of 16, ``c16``);
- kernel 1..7: ``k1x1``, ``1xK``, ``Kx1``, ``KxK``, ``KxL``; ``stride``, ``dilation``, ``same`` / ``valid``;
  ``mult>1`` (depth multiplier);
- quantization: ``m-tiny`` (per-channel multipliers 2^-33..2^-22, the Q31 shift near -31, large
  biases so the outputs are not all the zero point), ``m>1`` (multipliers above 1), ``m-spread``
  (per-channel multipliers 2^-12..2^6 around the usual), ``w-extreme`` (weights ±127 and -128),
  ``zp-ends`` (input and output zero points at -128 / 127);
- chains: ``residual`` (an ADD in the conv's epilogue; ``residual-self``: of the conv's own input),
  ``rows`` (FULLY_CONNECTED over rows of several axes), ``poly`` (conv → dw → conv, the chain
  poly_fuse joins into one kernel).
"""
from __future__ import annotations

import math

import numpy as np

from tests.builders import tflm_twin_models as tm
from tests.builders.tflm_twin_models import Net
from tests.fuzz.twin_draw import ACTS, Draw, conv_wrap, f32, int8_data, log_scale, max_dev, pick, wraps

ODD_CHANNELS = (1, 2, 3, 5, 6, 7, 9, 10, 13, 15, 17, 18, 19, 23, 25, 31, 33, 35, 47, 63, 65, 66, 67)
MAX_MACS = 3_000_000                      # keeps TFLM, gcc and qemu runs short


def channels(rng, hi: int = 67) -> int:
    """1..hi: uniform, or one of the sizes a SIMD tail handles (not multiples of 4 or 16), or a multiple."""
    r = rng.random()
    if r < 0.4:
        return int(rng.integers(1, hi + 1))
    if r < 0.75:
        return min(pick(rng, ODD_CHANNELS), hi)
    return min(pick(rng, (4, 8, 12, 16, 20, 32, 48, 64)), hi)


def channel_class(c: int) -> str:
    return "c%4" if c % 4 else "c%16" if c % 16 else "c16"


def zp_end(rng, p: float = 0.5) -> int:
    return pick(rng, [-128, 127]) if rng.random() < p else int(rng.integers(-128, 128))


def image(rng, lo_c: int = 1) -> tuple[tuple, list]:
    """An NHWC input shape of one of the image classes, and its classes."""
    n = 1 if rng.random() < 0.85 else 2
    kind = pick(rng, ["w1", "w1", "w1", "h1", "h1", "1x1", "2d", "2d", "2d"])
    c = max(channels(rng), lo_c)
    long = int(rng.integers(1, 25))
    h, w = {"w1": (long, 1), "h1": (1, long), "1x1": (1, 1),
            "2d": (int(rng.integers(1, 13)), int(rng.integers(1, 13)))}[kind]
    return (n, h, w, c), [image_class(h, w)] + (["batch2"] if n == 2 else []) + [channel_class(c)]


def image_class(h: int, w: int) -> str:
    return "1x1" if h == w == 1 else "w1" if w == 1 else "h1" if h == 1 else "2d"


def geometry(rng, x_shape) -> tuple[tuple, tuple, tuple, str, list]:
    """kernel, stride, dilation, padding (a non-empty output) and their classes; 1-D images mostly get
    1-D kernels along their long axis."""
    h, w = x_shape[1:3]
    for _ in range(30):
        kh, kw = int(rng.integers(1, 8)), int(rng.integers(1, 8))
        r = rng.random()
        if (w == 1 and r < 0.85) or r < 0.15:
            kw = 1
        elif (h == 1 and r < 0.85) or r < 0.3:
            kh = 1
        elif r < 0.4:
            kh = kw
        s = (1, 1) if rng.random() < 0.5 else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        d = (1, 1) if rng.random() < 0.75 else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        pad = pick(rng, ["SAME", "VALID"])
        if all(tm.out_size(n, k, ss, dd, pad) > 0 for n, k, ss, dd in zip((h, w), (kh, kw), s, d)):
            break
    else:
        kh, kw, s, d, pad = 1, 1, (1, 1), (1, 1), "SAME"
    kcls = "k1x1" if kh == kw == 1 else "1xK" if kh == 1 else "Kx1" if kw == 1 else "KxK" if kh == kw else "KxL"
    cls = [kcls, pad.lower()] + (["stride"] if s != (1, 1) else []) + (["dilation"] if d != (1, 1) else [])
    return (kh, kw), s, d, pad, cls


def weights(rng, shape) -> tuple[np.ndarray, list]:
    """int8 weights: uniform, at the int8 ends (``w-extreme``), or mostly zero (``w-sparse``: 50-95 %
    zeros, or 2 of every 4 along the reduction axis), which the cost model gives the sparse kernels."""
    r = rng.random()
    if r < 0.12:
        return rng.choice(np.array([-127, 127], np.int8), shape), ["w-extreme"]
    if r < 0.18:
        return rng.choice(np.array([-128, -127, 127, 0], np.int8), shape), ["w-extreme"]
    w = rng.integers(-127, 128, shape).astype(np.int8)
    if r < 0.24:
        w[rng.random(shape) < rng.uniform(0.5, 0.95)] = 0
        return w, ["w-sparse"]
    if r < 0.28:
        quads = -(-shape[-1] // 4) * 4
        keep = np.argsort(rng.random((*shape[:-1], quads // 4, 4)), axis=-1)[..., :2]
        mask = np.zeros((*shape[:-1], quads // 4, 4), bool)
        np.put_along_axis(mask, keep, True, axis=-1)
        w[~mask.reshape(*shape[:-1], quads)[..., :shape[-1]]] = 0
        return w, ["w-sparse", "w-2:4"]
    return w, []


def multipliers(rng, n: int, taps: int) -> tuple[np.ndarray, list]:
    """Per-channel requantization multipliers s_in·s_w/s_out: usual ones (the real output spread / 40),
    or a class of extreme ones (module doc)."""
    usual = 2.0 ** rng.uniform(-4, 3, n) / (120 * math.sqrt(taps))
    r = rng.random()
    if r < 0.15:
        m = np.where(rng.random(n) < 0.7, 2.0 ** rng.uniform(-33, -22, n), usual)
        return m, ["m-tiny"]
    if r < 0.3:
        return np.where(rng.random(n) < 0.5, 2.0 ** rng.uniform(0, 8, n), usual), ["m>1"]
    if r < 0.45:
        return usual * 2.0 ** rng.uniform(-12, 6, n), ["m-spread"]
    return usual, []


def quant(rng, x_shape, oc: int, taps: int, w_shape) -> dict:
    """Input, output and weight quantization, weights and bias of a weighted op with ``oc`` channels."""
    ends = rng.random() < 0.5
    in_q = (log_scale(rng, -10, 0), zp_end(rng, 1.0 if ends else 0.15))
    out_q = (log_scale(rng, -10, 0), zp_end(rng, 1.0 if ends else 0.15))
    m, mcls = multipliers(rng, oc, taps)
    ws = np.maximum(m * out_q[0] / in_q[0], 2.0 ** -120).astype(np.float32)
    w, wcls = weights(rng, w_shape)
    x = int8_data(rng, x_shape, in_q[1])
    lim = 2 ** 30 if "m-tiny" in mcls else 20000 * int(rng.integers(1, 30))
    b = rng.integers(-lim, lim + 1, oc).astype(np.int64) if rng.random() < 0.9 else None
    return dict(in_q=in_q, out_q=out_q, ws=ws, w=w, b=b, x=x,
                classes=mcls + wcls + (["zp-ends"] if ends else []))


def _fit_bias(q: dict, wsum: np.ndarray) -> None:
    """Bias + the largest accumulator stay inside int32 (TFLM adds them in int32: no wrap there)."""
    if q["b"] is None:
        return
    room = np.maximum(2 ** 31 - 2 - max_dev(q["x"], q["in_q"][1]) * wsum, 0)
    q["b"] = np.clip(q["b"], -room, room).astype(np.int32)


def compile_options(rng, params: dict) -> dict:
    """Sparse weights compile with ``sparse="on"`` 60 % of the time (class ``sparse-on``: every kernel the
    sparse variant can run takes it, not only those the cost model picks); a quarter of the draws build
    a random ``tinyfuse tune`` configuration (``tune``: twin_run.tuned_build; class ``tuned``); some take a
    real-time option: ``skip-zero`` (zero activations skipped), ``wcet`` (constant-time epilogues),
    ``steps`` (step fission: under qemu ``<name>_step`` runs too and must give the same bytes)."""
    options = {}
    if "w-sparse" in params["classes"] and rng.random() < 0.6:
        params["classes"].append("sparse-on")
        options["sparse"] = "on"
    if rng.random() < 0.25:
        params["classes"].append("tuned")
        options["tune"] = int(rng.integers(1 << 30))
    r = rng.random()                  # the real-time options (README "Real-time mode")
    if r < 0.08:
        params["classes"].append("skip-zero")
        options["realtime"] = {"skip_zero_activations": True}
    elif r < 0.16:
        params["classes"].append("wcet")
        options["realtime"] = {"wcet": True}
    elif r < 0.22:
        params["classes"].append("steps")
        options["realtime"] = {"max_step_instructions": int(2 ** rng.uniform(10, 15))}
    return options


def _macs(x_shape, k, oc, cin) -> int:
    return int(np.prod(x_shape[:3])) * k[0] * k[1] * oc * cin


def conv_layer(rng, x_shape, depthwise: bool, same_shape: bool = False) -> dict:
    """A random (depthwise) conv on ``x_shape``: the twin_draw ``conv_params`` dict plus classes;
    ``same_shape``: stride 1, SAME padding, as many output channels as input ones (a residual block)."""
    k, s, d, pad, gcls = geometry(rng, x_shape)
    c = x_shape[3]
    mult = (1 if rng.random() < 0.55 else int(rng.integers(2, 5))) if depthwise else 0
    oc = c * mult if depthwise else channels(rng)
    if same_shape:
        s, pad, mult, oc = (1, 1), "SAME", (1 if depthwise else 0), c
        gcls = [g for g in gcls if g not in ("stride", "valid")] + (["same"] if "same" not in gcls else [])
    while _macs(x_shape, k, oc, 1 if depthwise else c) > MAX_MACS and oc > 1 and not depthwise:
        oc = max(1, oc // 2)
    w_shape = (1, *k, oc) if depthwise else (oc, *k, c)
    q = quant(rng, x_shape, oc, k[0] * k[1] * (1 if depthwise else c), w_shape)
    wsum = np.abs(q["w"].astype(np.int64)).sum(axis=(0, 1, 2)) if depthwise else \
        np.abs(q["w"].astype(np.int64)).reshape(oc, -1).sum(1)
    _fit_bias(q, wsum)
    if q["b"] is None and depthwise:           # TFLM's depthwise crashes without its bias (tflm_oneop)
        q["b"] = np.zeros(oc, np.int32)
    cls = gcls + q["classes"] + (["mult>1"] if mult > 1 else []) + ([channel_class(oc)] if not depthwise else [])
    return dict(w=q["w"], b=q["b"], ws=q["ws"], k=k, stride=s, dilation=d, padding=pad, mult=mult, oc=oc,
                out_q=q["out_q"], in_q=q["in_q"], x=q["x"], act=pick(rng, ACTS), classes=cls)


def _layer(net, x_t, x_shape, p):
    return tm.conv(net, x_t, x_shape, p["in_q"], p["w"], p["b"], p["ws"], p["out_q"], p["stride"], p["padding"],
                   p["dilation"], p["act"], p["mult"])


def summary(x_shape, p) -> dict:
    m = np.float64(np.float32(p["in_q"][0])) * p["ws"].astype(np.float64) / np.float64(np.float32(p["out_q"][0]))
    return dict(x=list(x_shape), in_q=list(p["in_q"]), k=list(p["k"]), stride=list(p["stride"]),
                dilation=list(p["dilation"]), padding=p["padding"], mult=p["mult"], oc=p["oc"], act=p["act"],
                out_q=list(p["out_q"]), bias=p["b"] is not None,
                m_log2=[round(float(np.log2(m.min())), 2), round(float(np.log2(m.max())), 2)])


def _shrink(x_shape, cap: int = 16) -> tuple:
    return (x_shape[0], min(x_shape[1], cap), min(x_shape[2], cap), x_shape[3])


def draw_conv(rng, depthwise: bool = False) -> Draw:
    """CONV_2D / DEPTHWISE_CONV_2D at the SIMD shape classes."""
    x_shape, cls = image(rng)
    p = conv_layer(rng, x_shape, depthwise)
    net = Net()
    y, _ = _layer(net, net.input(x_shape, p["in_q"]), x_shape, p)
    op = "SIMD DEPTHWISE_CONV_2D" if depthwise else "SIMD CONV_2D"
    params = dict(summary(x_shape, p), classes=cls + p["classes"])
    return Draw(op, net.build([y]), [p["x"]], params, conv_wrap(p["x"], p["in_q"], p),
                options=compile_options(rng, params))


def _residual(rng, net, y, y_shape, y_q, x_t, x, x_shape, x_q, params) -> tuple:
    """ADD of the conv's output and a second input (full or per channel) or of the conv's own input
    (same shape): (output tensor, extra graph inputs)."""
    self_ok = tuple(x_shape) == tuple(y_shape)
    z_q = (log_scale(rng, -10, 0), zp_end(rng, 0.4))
    out_q = (f32(max(y_q[0], z_q[0]) * 2.0 ** rng.uniform(-2, 3)), zp_end(rng, 0.4))
    act = pick(rng, ACTS)
    if self_ok and rng.random() < 0.5:
        out = tm.binary(net, "ADD", y, x_t, y_shape, out_q, act)
        params.update(residual="self", out_q=list(out_q), act2=act)
        params["classes"] += ["residual", "residual-self"]
        return out, []
    z_shape = pick(rng, [y_shape, y_shape, (1, 1, 1, y_shape[-1])]) if len(y_shape) == 4 else y_shape
    z = int8_data(rng, z_shape, z_q[1])
    out = tm.binary(net, "ADD", y, net.input(z_shape, z_q), y_shape, out_q, act)
    params.update(residual=list(z_shape), z_q=list(z_q), out_q=list(out_q), act2=act)
    params["classes"] += ["residual"]
    return out, [z]


def draw_conv_add(rng, depthwise: bool = False) -> Draw:
    """CONV+ADD / DW+ADD: a residual add the epilogue fuses (another input, or the conv's own input)."""
    x_shape, cls = image(rng)
    x_shape = _shrink(x_shape)
    p = conv_layer(rng, x_shape, depthwise, same_shape=rng.random() < 0.5)
    net = Net()
    x_t = net.input(x_shape, p["in_q"])
    y, y_shape = _layer(net, x_t, x_shape, p)
    params = dict(summary(x_shape, p), classes=cls + p["classes"])
    out, extra = _residual(rng, net, y, y_shape, p["out_q"], x_t, p["x"], x_shape, p["in_q"], params)
    op = "DW+ADD" if depthwise else "SIMD CONV+ADD"
    return Draw(op, net.build([out]), [p["x"], *extra], params, conv_wrap(p["x"], p["in_q"], p),
                options=compile_options(rng, params))


def draw_fc_rows(rng, residual: bool = False) -> Draw:
    """FULLY_CONNECTED whose rows span several axes ([N, 4, 1, C], [N, H, 1, C], [N, 1, W, C], ...),
    keep_num_dims or not, per-channel or per-tensor; ``residual``: + an ADD of a second input."""
    k = channels(rng)
    x_shape = pick(rng, [(dim1(rng), 4, 1, k), (dim1(rng), int(rng.integers(1, 9)), 1, k), (1, 1, int(rng.integers(1, 9)), k),
                         (1, 1, 1, k), (int(rng.integers(1, 6)), k), (dim1(rng), int(rng.integers(1, 4)), int(rng.integers(1, 4)), k)])
    n = channels(rng)
    keep = residual or rng.random() < 0.5
    per_channel = rng.random() < 0.6
    q = quant(rng, x_shape, n, k, (n, k))
    if not per_channel:
        q["ws"] = q["ws"][:1]
    _fit_bias(q, np.abs(q["w"].astype(np.int64)).sum(axis=1))
    rows = int(np.prod(x_shape)) // k
    out_shape = tuple(x_shape[:-1]) + (n,) if keep else (rows, n)
    act = pick(rng, ACTS)
    net = Net()
    ws_b = np.broadcast_to(q["ws"], (n,))
    ins = [net.input(x_shape, q["in_q"]), net.weights(q["w"], q["ws"] if per_channel else q["ws"][0], 0),
           None if q["b"] is None else net.bias(q["b"], q["in_q"][0], ws_b)]
    y = net.op("FULLY_CONNECTED", ins, net.act(out_shape, q["out_q"]), "FullyConnectedOptions",
               fusedActivationFunction=tm.ACT[act], keepNumDims=bool(keep))
    cls = ["rows"] + (["rows-4d"] if len(x_shape) == 4 else []) + \
        (["rows>1axis"] if sum(d > 1 for d in x_shape[:-1]) > 1 else []) + [channel_class(k)] + q["classes"]
    params = dict(x=list(x_shape), n=n, in_q=list(q["in_q"]), out_q=list(q["out_q"]), keep=keep,
                  per_channel=per_channel, bias=q["b"] is not None, act=act, classes=cls)
    bound = max_dev(q["x"], q["in_q"][1]) * np.abs(q["w"].astype(np.int64)).sum(axis=1) + \
        (0 if q["b"] is None else np.abs(q["b"].astype(np.int64)))
    if per_channel:
        m = np.float64(np.float32(q["in_q"][0])) * q["ws"].astype(np.float64) / np.float64(np.float32(q["out_q"][0]))
    else:
        m = np.float64(np.float32(q["in_q"][0]) * np.float32(q["ws"][0])) / np.float64(np.float32(q["out_q"][0]))
    inputs, op = [q["x"]], "SIMD FULLY_CONNECTED"
    if residual:
        y, extra = _residual(rng, net, y, out_shape, q["out_q"], None, None, (), None, params)
        inputs, op = inputs + extra, "FC+ADD"
    return Draw(op, net.build([y]), inputs, params, wraps(bound, m), options=compile_options(rng, params))


def dim1(rng) -> int:
    return 1 if rng.random() < 0.8 else 2


def _pointwise(rng, x_shape, in_q, oc, act_choices=ACTS) -> dict:
    """A 1x1 conv layer inside a chain: usual multipliers (a wrap inside a chain masks every output)."""
    c = x_shape[3]
    w, _ = weights(rng, (oc, 1, 1, c))
    out_q = (log_scale(rng, -8, 0), zp_end(rng, 0.3))
    m = 2.0 ** rng.uniform(-4, 2, oc) / (120 * math.sqrt(c))
    ws = np.maximum(m * out_q[0] / in_q[0], 2.0 ** -120).astype(np.float32)
    b = rng.integers(-3000, 3001, oc).astype(np.int32)
    return dict(w=w, b=b, ws=ws, k=(1, 1), stride=(1, 1), dilation=(1, 1), padding="SAME", mult=0, oc=oc,
                out_q=out_q, in_q=in_q, act=pick(rng, act_choices))


def _chain_wrap(p) -> bool:
    """Whether an inner layer (inputs anywhere in int8) may wrap TFLM's int32 shift."""
    wsum = np.abs(p["w"].astype(np.int64)).sum(axis=(0, 1, 2)) if p["mult"] else \
        np.abs(p["w"].astype(np.int64)).reshape(p["oc"], -1).sum(1)
    m = np.float64(np.float32(p["in_q"][0])) * p["ws"].astype(np.float64) / np.float64(np.float32(p["out_q"][0]))
    return bool(np.any(wraps(255 * wsum + np.abs(p["b"].astype(np.int64)), m)))


def draw_poly_chain(rng) -> Draw:
    """conv 1x1 (expand) → depthwise KxK → conv 1x1 (project) [+ the block's input]: the inverted
    residual poly_fuse joins into one line-buffered kernel (DSP / Helium stages)."""
    n = 1
    kind = pick(rng, ["2d", "2d", "w1", "h1"])
    long = int(rng.integers(4, 17))
    h, w = {"2d": (int(rng.integers(3, 13)), int(rng.integers(3, 13))), "w1": (long, 1), "h1": (1, long)}[kind]
    cls_img = image_class(h, w)
    c = channels(rng, 24)
    e = c * int(rng.integers(2, 7)) if rng.random() < 0.7 else channels(rng, 64)
    e = min(e, 96)
    x_shape = (n, h, w, c)
    in_q = (log_scale(rng, -8, 0), zp_end(rng, 0.3))
    x = int8_data(rng, x_shape, in_q[1])
    p1 = _pointwise(rng, x_shape, in_q, e, ["RELU", "RELU6", "NONE"])
    k = pick(rng, [3, 3, 5]) if kind == "2d" else 1
    kk = (k, k) if kind == "2d" else (pick(rng, [3, 5]), 1) if kind == "w1" else (1, pick(rng, [3, 5]))
    s = pick(rng, [1, 1, 2])
    stride = (s, s) if kind == "2d" else (s, 1) if kind == "w1" else (1, s)
    dw_w, _ = weights(rng, (1, *kk, e))
    out_q2 = (log_scale(rng, -8, 0), zp_end(rng, 0.3))
    m2 = 2.0 ** rng.uniform(-4, 2, e) / (120 * math.sqrt(kk[0] * kk[1]))
    p2 = dict(w=dw_w, b=rng.integers(-3000, 3001, e).astype(np.int32), k=kk, stride=stride, dilation=(1, 1),
              padding="SAME", mult=1, oc=e, out_q=out_q2, in_q=p1["out_q"], act=pick(rng, ["RELU", "RELU6", "NONE"]),
              ws=np.maximum(m2 * out_q2[0] / p1["out_q"][0], 2.0 ** -120).astype(np.float32))
    net = Net()
    x_t = net.input(x_shape, in_q)
    y1, s1 = _layer(net, x_t, x_shape, p1)
    y2, s2 = _layer(net, y1, s1, p2)
    proj = c if (s == 1 and rng.random() < 0.6) else channels(rng, 32)
    p3 = _pointwise(rng, s2, p2["out_q"], proj, ["NONE"])
    y3, s3 = _layer(net, y2, s2, p3)
    classes = [cls_img, "poly", channel_class(c), channel_class(e)] + (["stride"] if s > 1 else [])
    params = dict(x=list(x_shape), in_q=list(in_q), expand=e, k=list(kk), stride=list(stride), project=proj,
                  acts=[p1["act"], p2["act"]], classes=classes)
    out, inputs = y3, [x]
    if tuple(s3) == x_shape and rng.random() < 0.6:
        out, extra = _residual(rng, net, y3, s3, p3["out_q"], x_t, x, x_shape, in_q, params)
        inputs += extra
    wrap = any(_chain_wrap(p) for p in (p1, p2, p3))
    return Draw("CONV>DW>CONV", net.build([out]), inputs, params, wrap, options=compile_options(rng, params))


def draw_pool(rng) -> Draw:
    """AVERAGE_POOL_2D / MAX_POOL_2D at the image classes (arm_mve has an average pool)."""
    x_shape, cls = image(rng)
    q = (log_scale(rng, -10, 0), zp_end(rng, 0.4))
    opcode = "AVERAGE_POOL_2D" if rng.random() < 0.85 else "MAX_POOL_2D"
    for _ in range(30):
        f = (int(rng.integers(1, 8)) if x_shape[1] > 1 else 1, int(rng.integers(1, 8)) if x_shape[2] > 1 else 1)
        s = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        pad = pick(rng, ["SAME", "VALID"])
        if all(tm.out_size(n, k, st, 1, pad) > 0 for n, k, st in zip(x_shape[1:3], f, s)):
            break
    else:
        f, s, pad = (1, 1), (1, 1), "SAME"
    act = pick(rng, ACTS)
    net = Net()
    y, _ = tm.pool(net, opcode, net.input(x_shape, q), x_shape, q, f, s, pad, act)
    params = dict(x=list(x_shape), q=list(q), pool=opcode, filter=list(f), stride=list(s), padding=pad, act=act,
                  classes=cls + [pad.lower()] + (["stride"] if s != (1, 1) else []))
    return Draw("SIMD POOL", net.build([y]), [int8_data(rng, x_shape, q[1])], params)
