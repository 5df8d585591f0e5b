"""int8 one-op cases with an exact oracle: the same seeded integers and quantization parameters go into
a one-op int8 TFLite model (../shared/tools/tflm_oneop.py), run by TFLite Micro, and into its ONNX QDQ
twin (qdq.py), which tinyfuse compiles. A Case holds both models, the inputs and TFLM's output."""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass

import numpy as np
import onnx

from tests.builders.qdq import (binary, concatenation, conv2d, depthwise_conv2d, fully_connected, pool2d, reshape,
                                unary)
from tests.conftest import ort_run, shared_or_skip
def tflm_oneop():
    """The ../shared/tools/tflm_oneop.py module (one-op int8 TFLite builders and ``run`` through TFLM);
    skips outside CI and fails in CI when ../shared is absent."""
    tools = shared_or_skip("tools", "tflm_oneop.py").parent
    if str(tools) not in sys.path:
        sys.path.insert(0, str(tools))
    import tflm_oneop
    return tflm_oneop


@dataclass
class Case:
    kind: str
    tflm: bytes
    model: onnx.ModelProto
    inputs: list[np.ndarray]             # int8, in model input order
    want: np.ndarray                     # TFLM output
    desc: str                            # quantization parameters, for failure messages

    @property
    def feeds(self):
        return {vi.name: x for vi, x in zip(self.model.graph.input, self.inputs)}


# ----------------------------------------------------------------------------- random parameters
def _f32(v) -> float:
    return float(np.float32(v))


def _act_q(rng, lo=0.01, hi=0.1):
    return (_f32(rng.uniform(lo, hi)), int(rng.integers(-100, 101)))


def _i8(rng, shape, zp=0, spread=55):
    """int8 activations around the zero point (real values around 0), some saturated."""
    return np.clip(np.round(zp + rng.normal(0, spread, shape)), -128, 127).astype(np.int8)


def _out_q(rng, probe: onnx.ModelProto, feeds) -> tuple[float, int]:
    """An output (scale, zero point) fitted to the real output range of the float probe: a few
    percent saturate, the zero point is jittered (and is never forced to -128)."""
    y = ort_run(probe, feeds)[0].astype(np.float64)
    lo, hi = min(np.percentile(y, 1), 0.0), max(np.percentile(y, 99), 0.0)
    scale = max(hi - lo, 1e-3) / 255 * rng.uniform(0.7, 1.1)
    zp = int(np.clip(np.round(-128 - lo / scale) + rng.integers(-12, 13), -128, 127))
    return _f32(scale), zp


# ----------------------------------------------------------------------------- case builders
# Each returns a Case: seeded int8 inputs, weights and quantization put into both the TFLite model and
# its QDQ twin, the output quantization fitted to the twin's float output, TFLM's output as ``want``.
def conv_case(kind, seed, x_shape, out_ch, k, stride=(1, 1), padding="SAME", dilation=(1, 1),
               act="NONE", mult=1):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    in_q = _act_q(rng)
    x = _i8(rng, x_shape, in_q[1])
    if kind == "conv":
        w = rng.integers(-127, 128, (out_ch, *k, x_shape[3])).astype(np.int8)            # OHWI
        taps = k[0] * k[1] * x_shape[3]
    else:
        out_ch = x_shape[3] * mult
        w = rng.integers(-127, 128, (1, *k, out_ch)).astype(np.int8)                     # 1HWC
        taps = k[0] * k[1]
    w_scales = rng.uniform(0.002, 0.02, out_ch).astype(np.float32)
    lim = int(1500 * np.sqrt(taps))
    bias = rng.integers(-lim, lim + 1, out_ch).astype(np.int32)
    geo = dict(stride=stride, padding=padding, dilation=dilation)
    if kind == "conv":
        build_onnx = functools.partial(conv2d, x_shape, w, bias, in_q, w_scales, **geo)
        build_tflm = functools.partial(oneop.conv2d, x_shape, w, bias, in_q, w_scales, **geo)
    else:
        build_onnx = functools.partial(depthwise_conv2d, x_shape, w, bias, in_q, w_scales,
                                       depth_multiplier=mult, **geo)
        build_tflm = functools.partial(oneop.depthwise_conv2d, x_shape, w, bias, in_q, w_scales,
                                       depth_multiplier=mult, **geo)
    out_q = _out_q(rng, build_onnx(None, activation="NONE", probe=True), {"x": x})
    model, tflm = build_onnx(out_q, activation=act), build_tflm(out_q, activation=act)
    return _case(kind, tflm, model, [x], f"in_q={in_q} out_q={out_q} w_scales[:3]={w_scales[:3]}")


def fc_case(seed, batch, k, n, act="NONE", per_channel=False):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    in_q = _act_q(rng)
    x = _i8(rng, (batch, k), in_q[1])
    w = rng.integers(-127, 128, (n, k)).astype(np.int8)
    w_scale = (rng.uniform(0.002, 0.02, n).astype(np.float32) if per_channel
               else _f32(rng.uniform(0.002, 0.02)))
    lim = int(1500 * np.sqrt(k))
    bias = rng.integers(-lim, lim + 1, n).astype(np.int32)
    out_q = _out_q(rng, fully_connected(x.shape, w, bias, in_q, w_scale, None, probe=True), {"x": x})
    model = fully_connected(x.shape, w, bias, in_q, w_scale, out_q, activation=act)
    tflm = oneop.fully_connected(x.shape, w, bias, in_q, w_scale, out_q, activation=act)
    return _case("fc", tflm, model, [x], f"in_q={in_q} w_scale={w_scale} out_q={out_q}")


def binary_case(kind, seed, a_shape, b_shape, act="NONE"):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    a_q, b_q = _act_q(rng, 0.01, 0.1), _act_q(rng, 0.01, 0.1)
    a, b = _i8(rng, a_shape, a_q[1]), _i8(rng, b_shape, b_q[1])
    op = {"add": "Add", "mul": "Mul"}[kind]
    out_q = _out_q(rng, binary(op, a_shape, b_shape, a_q, b_q, None, probe=True), {"a": a, "b": b})
    model = binary(op, a_shape, b_shape, a_q, b_q, out_q, activation=act)
    tflm = getattr(oneop, kind)(a_shape, b_shape, a_q, b_q, out_q, activation=act)
    return _case(kind, tflm, model, [a, b], f"a_q={a_q} b_q={b_q} out_q={out_q}")


def pool_case(kind, seed, x_shape, filter, stride, padding="VALID", act="NONE"):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    q = _act_q(rng, 0.01, 0.1)
    x = _i8(rng, x_shape, q[1], spread=30)    # the max of 25 taps must not always saturate
    op, fn = {"avg_pool": ("AveragePool", oneop.average_pool2d), "max_pool": ("MaxPool", oneop.max_pool2d)}[kind]
    geo = dict(filter=filter, stride=stride, padding=padding, activation=act)
    return _case(kind, fn(x_shape, q, **geo), pool2d(op, x_shape, q, **geo), [x], f"q={q}")


def unary_case(kind, seed, x_shape, full_range=False):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    in_q = _act_q(rng, 0.015, 0.06)      # real inputs within about ±8: few saturated outputs
    if full_range:                       # every int8 value once: the whole lookup table
        x = rng.permutation(np.arange(-128, 128)).astype(np.int8).reshape(x_shape)
    else:
        x = _i8(rng, x_shape, in_q[1], spread=40)
    op, fn = {"softmax": ("Softmax", oneop.softmax), "logistic": ("Sigmoid", oneop.logistic),
              "tanh": ("Tanh", oneop.tanh)}[kind]
    return _case(kind, fn(x_shape, in_q), unary(op, x_shape, in_q), [x], f"in_q={in_q}")


def concat_case(seed, shapes):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    q = _act_q(rng)
    xs = [_i8(rng, s, q[1]) for s in shapes]
    tflm = oneop.concatenation(shapes, 3, [q] * len(shapes), q)
    return _case("concat", tflm, concatenation(shapes, q), xs, f"q={q}")


def reshape_case(seed, x_shape, new_shape):
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    q = _act_q(rng)
    x = _i8(rng, x_shape, q[1])
    return _case("reshape", oneop.reshape(x_shape, new_shape, q), reshape(x_shape, new_shape, q), [x], f"q={q}")


def _case(kind, tflm, model, inputs, desc) -> Case:
    (want,) = tflm_oneop().run(tflm, inputs)
    return Case(kind, tflm, model, inputs, want, desc)
