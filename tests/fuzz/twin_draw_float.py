"""float32 TFLM twins for the arm_fpu kernels (and the portable float ones): CONV_2D, DEPTHWISE_CONV_2D,
FULLY_CONNECTED and a conv → dw → conv (+ residual) chain, at the SIMD shape classes of
twin_draw_simd.py, compared with TFLM's float reference kernels within a bound, not byte for byte.

Why a bound and which one. TFLM sums the products of one output in its loop order with a rounding
after every multiply and add; tinyfuse's arm_fpu kernels use fused multiply-adds in 4x4 register
blocks and another order. For a sum of n products (plus the bias) accumulated in float32 in any order,
with or without fusing, the rounding error of either side is at most gamma(n+1) · S, where
S = |b| + Σ|x_i·w_i| and gamma(k) = k·u / (1 − k·u), u = 2^-24 (Higham, Accuracy and Stability of
Numerical Algorithms, 2nd ed., eq. 3.5 / Lemma 3.1; one rounding fewer per fused step only lowers it).
The two results may therefore differ by at most 2·gamma(n+1)·S per output (``Draw.tol``, computed in
float64 from the drawn tensors). RELU, RELU6 and RELU_N1_TO_1 are 1-Lipschitz, so the clamp keeps the
bound; in a chain a layer fed inputs that differ by e differs by at most Σ|w|·e more (the bound is
carried layer to layer), and an ADD of two values sums their bounds (its own rounding, u·|sum|, is
added too). A wrong index, a lost tap or a wrong channel moves an output by a whole product (order S),
orders of magnitude beyond this bound (n·u ≤ 2e-4 for the largest draw), so the comparison still
catches every indexing defect the int8 comparison does.
"""
from __future__ import annotations

import numpy as np

from tests.builders import tflm_twin_models as tm
from tests.builders.tflm_twin_models import Net
from tests.fuzz.twin_draw import ACTS, Draw, pick
from tests.fuzz.twin_draw_simd import channel_class, channels, geometry, image

U = 2.0 ** -24


def gamma(n) -> np.ndarray:
    n = np.asarray(n, np.float64)
    return n * U / (1 - n * U)


def f32_data(rng, shape) -> np.ndarray:
    """Normal values at a random magnitude 2^-4..2^4, a tenth exact zeros, some negative zeros."""
    x = rng.standard_normal(shape) * 2.0 ** rng.uniform(-4, 4)
    x[rng.random(shape) < 0.1] = 0.0
    return x.astype(np.float32)


def _pads(n, k, s, d, padding) -> tuple[int, int]:
    out = tm.out_size(n, k, s, d, padding)
    total = max((out - 1) * s + (k - 1) * d + 1 - n, 0) if padding == "SAME" else 0
    return out, total // 2


def conv_abs(x: np.ndarray, w: np.ndarray, stride, dilation, padding, mult: int = 0) -> np.ndarray:
    """Σ over the taps of x·w in float64 for NHWC x and w OHWI (or 1HWC depthwise with multiplier
    ``mult`` > 0), TFLite's SAME/VALID padding (pad before = total // 2): pass |x|, |w| to get S."""
    n, h, wd, c = x.shape
    kh, kw = w.shape[1:3]
    (oh, ph), (ow, pw) = (_pads(sz, k, s, d, padding) for sz, k, s, d in zip((h, wd), (kh, kw), stride, dilation))
    oc = w.shape[3] if mult else w.shape[0]
    out = np.zeros((n, oh, ow, oc))
    xp = np.pad(x.astype(np.float64), ((0, 0), (ph, ph + kh * dilation[0] + stride[0] * oh),
                                       (pw, pw + kw * dilation[1] + stride[1] * ow), (0, 0)))
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dilation[0], j * dilation[1]
            xs = xp[:, r0:r0 + stride[0] * oh:stride[0], c0:c0 + stride[1] * ow:stride[1], :]
            if mult:
                out += np.repeat(xs, mult, axis=3) * w[0, i, j, :].astype(np.float64)
            else:
                out += np.einsum("nhwc,oc->nhwo", xs, w[:, i, j, :].astype(np.float64))
    return out


def _act(y: np.ndarray, act: str) -> np.ndarray:
    lo, hi = {"NONE": (-np.inf, np.inf), "RELU": (0, np.inf), "RELU6": (0, 6), "RELU_N1_TO_1": (-1, 1)}[act]
    return np.clip(y, lo, hi)


class Layer:
    """One float conv layer: its tensors, and the forward pass in float64 with its error bound."""

    def __init__(self, rng, x_shape, depthwise: bool, pointwise_oc: int | None = None, geo=None):
        c = x_shape[3]
        if pointwise_oc is not None:
            self.k, self.stride, self.dilation, self.padding, self.classes = (1, 1), (1, 1), (1, 1), "SAME", ["k1x1"]
        else:
            self.k, self.stride, self.dilation, self.padding, self.classes = geo or geometry(rng, x_shape)
        self.mult = (1 if rng.random() < 0.7 else int(rng.integers(2, 4))) if depthwise else 0
        self.oc = c * self.mult if depthwise else (pointwise_oc or channels(rng))
        shape = (1, *self.k, self.oc) if depthwise else (self.oc, *self.k, c)
        taps = self.k[0] * self.k[1] * (1 if depthwise else c)
        self.w = (rng.standard_normal(shape) / np.sqrt(taps) * 2.0 ** rng.uniform(-3, 3)).astype(np.float32)
        self.b = (rng.standard_normal(self.oc) * 2.0 ** rng.uniform(-4, 2)).astype(np.float32) \
            if rng.random() < 0.85 or depthwise else None
        self.act = pick(rng, ACTS)
        self.taps = taps
        self.classes = list(self.classes) + (["mult>1"] if self.mult > 1 else []) + [channel_class(self.oc)]

    def forward(self, x: np.ndarray, err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(float64 output, bound on |tinyfuse − TFLM| per output) from input x and its bound ``err``."""
        geo = (self.stride, self.dilation, self.padding, self.mult)
        y = conv_abs(x, self.w, *geo) + (0 if self.b is None else self.b.astype(np.float64))
        s = conv_abs(np.abs(x), np.abs(self.w), *geo) + (0 if self.b is None else np.abs(self.b.astype(np.float64)))
        carried = conv_abs(err, np.abs(self.w), *geo) if np.any(err) else 0.0
        return _act(y, self.act), 2 * gamma(self.taps + 1) * s * 1.01 + carried

    def build(self, net: Net, x_t, x_shape):
        ins = [x_t, net.const(self.w), None if self.b is None else net.const(self.b)]
        oh, ow = (tm.out_size(n, k, s, d, self.padding) for n, k, s, d in zip(x_shape[1:3], self.k, self.stride, self.dilation))
        shape = (x_shape[0], oh, ow, self.oc)
        fields = dict(padding=tm.PAD[self.padding], strideH=int(self.stride[0]), strideW=int(self.stride[1]),
                      dilationHFactor=int(self.dilation[0]), dilationWFactor=int(self.dilation[1]),
                      fusedActivationFunction=tm.ACT[self.act])
        if self.mult:
            if ins[2] is None:
                ins[2] = net.const(np.zeros(self.oc, np.float32))
            y = net.op("DEPTHWISE_CONV_2D", ins, net.act(shape), "DepthwiseConv2DOptions",
                       depthMultiplier=int(self.mult), **fields)
        else:
            y = net.op("CONV_2D", ins, net.act(shape), "Conv2DOptions", **fields)
        return y, shape

    def summary(self) -> dict:
        return dict(k=list(self.k), stride=list(self.stride), dilation=list(self.dilation), padding=self.padding,
                    mult=self.mult, oc=self.oc, act=self.act, bias=self.b is not None)


def _add(net, a_t, b_t, shape, a, ea, b, eb, act):
    out = net.op("ADD", [a_t, b_t], net.act(shape), "AddOptions", fusedActivationFunction=tm.ACT[act])
    y = a + b
    return out, _act(y, act), ea + eb + 2 * U * np.abs(y)


def draw_conv(rng, depthwise: bool = False) -> Draw:
    x_shape, cls = image(rng)
    x = f32_data(rng, x_shape)
    layer = Layer(rng, x_shape, depthwise)
    net = Net()
    y_t, _ = layer.build(net, net.input(x_shape), x_shape)
    _, tol = layer.forward(x, np.zeros(x.shape))
    op = "DEPTHWISE_CONV_2D(f32)" if depthwise else "CONV_2D(f32)"
    params = dict(x=list(x_shape), **layer.summary(), classes=cls + layer.classes)
    return Draw(op, net.build([y_t]), [x], params, tol=tol)


def draw_fc(rng) -> Draw:
    """float FULLY_CONNECTED with rows over several axes, keep_num_dims or not."""
    k, n = channels(rng), channels(rng)
    x_shape = pick(rng, [(1, 4, 1, k), (int(rng.integers(1, 3)), int(rng.integers(1, 9)), 1, k), (1, 1, 1, k),
                         (int(rng.integers(1, 6)), k), (1, int(rng.integers(1, 4)), int(rng.integers(1, 4)), k)])
    keep = rng.random() < 0.5
    x = f32_data(rng, x_shape)
    w = (rng.standard_normal((n, k)) / np.sqrt(k) * 2.0 ** rng.uniform(-3, 3)).astype(np.float32)
    b = (rng.standard_normal(n) * 2.0 ** rng.uniform(-4, 2)).astype(np.float32) if rng.random() < 0.8 else None
    act = pick(rng, ACTS)
    rows = int(np.prod(x_shape)) // k
    out_shape = tuple(x_shape[:-1]) + (n,) if keep else (rows, n)
    net = Net()
    ins = [net.input(x_shape), net.const(w), None if b is None else net.const(b)]
    y = net.op("FULLY_CONNECTED", ins, net.act(out_shape), "FullyConnectedOptions",
               fusedActivationFunction=tm.ACT[act], keepNumDims=bool(keep))
    x2 = x.reshape(rows, k).astype(np.float64)
    s = np.abs(x2) @ np.abs(w.T.astype(np.float64)) + (0 if b is None else np.abs(b.astype(np.float64)))
    tol = (2 * gamma(k + 1) * s * 1.01).reshape(out_shape)
    cls = ["rows"] + (["rows>1axis"] if sum(d > 1 for d in x_shape[:-1]) > 1 else []) + [channel_class(k)]
    params = dict(x=list(x_shape), n=n, keep=keep, act=act, bias=b is not None, classes=cls)
    return Draw("FULLY_CONNECTED(f32)", net.build([y]), [x], params, tol=tol)


def draw_chain(rng) -> Draw:
    """conv 1x1 → depthwise KxK → conv 1x1 (+ the input when the shapes allow): float."""
    x_shape, cls = image(rng)
    x_shape = (1, min(x_shape[1], 12), min(x_shape[2], 12), min(x_shape[3], 24))
    x = f32_data(rng, x_shape)
    e = min(x_shape[3] * int(rng.integers(1, 5)), 64)
    l1 = Layer(rng, x_shape, False, pointwise_oc=e)
    net = Net()
    x_t = net.input(x_shape)
    y1_t, s1 = l1.build(net, x_t, x_shape)
    l2 = Layer(rng, s1, True)
    y2_t, s2 = l2.build(net, y1_t, s1)
    l3 = Layer(rng, s2, False, pointwise_oc=x_shape[3] if rng.random() < 0.6 else channels(rng, 32))
    y3_t, s3 = l3.build(net, y2_t, s2)
    y, err = x.astype(np.float64), np.zeros(x.shape)
    for layer in (l1, l2, l3):
        y, err = layer.forward(y, err)
    classes = cls + ["chain"] + l2.classes
    out_t = y3_t
    if tuple(s3) == x_shape and rng.random() < 0.6:
        act = pick(rng, ACTS)
        out_t, y, err = _add(net, y3_t, x_t, s3, y, err, x.astype(np.float64), np.zeros(x.shape), act)
        classes += ["residual", "residual-self"]
    params = dict(x=list(x_shape), layers=[layer.summary() for layer in (l1, l2, l3)], classes=classes)
    return Draw("CONV>DW>CONV(f32)", net.build([out_t]), [x], params, tol=err)
