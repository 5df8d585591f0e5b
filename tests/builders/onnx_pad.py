"""Float ONNX Pad → Conv / MaxPool / AveragePool graphs for fold_pad (issue 14): which fold (the
consumer's padding stands for the pad value) and which must not (another value, a channel pad, a crop,
a max-pool window left with no real pixel, an average pool that excludes its own pads)."""
from __future__ import annotations

import numpy as np
from onnx import helper

from tests.builders.float_models import model_of, rand

X = rand(1, 3, 9, 8, seed=1)
W = rand(4, 3, 3, 3, seed=2)
DW = rand(3, 1, 3, 3, seed=3)


def _pad(pads, value=None):
    """Pad-13 node P → 'p' (value: the constant_value input, absent when None)."""
    ins = ["x", "pads"] + (["v"] if value is not None else [])
    return helper.make_node("Pad", ins, ["p"], mode="constant")


def _case(pads, value, consumer, inits):
    inits = {"pads": np.array(pads, np.int64), **inits}
    if value is not None:
        inits["v"] = np.array(value, np.float32)
    return model_of([_pad(pads, value), consumer], {"x": X}, ["y"], inits=inits)


CONV = helper.make_node("Conv", ["p", "w"], ["y"], strides=[2, 1])
DWCONV = helper.make_node("Conv", ["p", "dw"], ["y"], group=3, pads=[1, 0, 0, 1])
MAXP = helper.make_node("MaxPool", ["p"], ["y"], kernel_shape=[3, 3], strides=[2, 2])
AVGP = helper.make_node("AveragePool", ["p"], ["y"], kernel_shape=[3, 2], strides=[2, 2])
AVGP_PADDED = helper.make_node("AveragePool", ["p"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
HW = [0, 0, 1, 0, 0, 0, 2, 1]                 # (N, C, H, W) begins, then ends: top 1, bottom 2, right 1

CASES = {   # name: (model, folds)
    "conv-asym-zero": (_case(HW, None, CONV, {"w": W}), True),
    "conv-explicit-zero": (_case(HW, 0.0, CONV, {"w": W}), True),
    "depthwise-plus-own-pads": (_case(HW, None, DWCONV, {"dw": DW}), True),
    "conv-value-not-zero": (_case(HW, 0.5, CONV, {"w": W}), False),
    "conv-channel-pad": (_case([0, 1, 1, 0, 0, 0, 1, 1], None, CONV, {"w": rand(4, 4, 3, 3, seed=4)}), False),
    "conv-pad-beyond-window": (_case([0, 0, 3, 0, 0, 0, 0, 0], None, CONV, {"w": W}), False),
    "conv-crop": (_case([0, 0, -1, 1, 0, 0, 1, 1], None, CONV, {"w": W}), False),
    "maxpool-minus-inf": (_case(HW, -np.inf, MAXP, {}), True),
    "maxpool-zero": (_case(HW, None, MAXP, {}), False),
    "maxpool-all-pad-window": (_case([0, 0, 3, 0, 0, 0, 0, 0], -np.inf, MAXP, {}), False),
    "avgpool-zero": (_case(HW, None, AVGP, {}), True),
    "avgpool-own-pads-excluded": (_case(HW, None, AVGP_PADDED, {}), False),
    "avgpool-value-not-zero": (_case(HW, 1.5, AVGP, {}), False),
}


def qdq_pad_conv(seed: int = 0, pads_hw=((0, 1), (1, 1)), value: float = 0.0, x_shape=(1, 10, 11, 4)):
    """int8 QDQ twin of a PyTorch-style explicit pad: int8 NHWC input → Transpose (NCHW) → DQ → Pad
    (``value``, H and W) → Q (the same q) → DQ → 3x3/2 Conv (no pads of its own, per-channel weights)
    → Relu → Q → Transpose (NHWC). Returns (model, int8 input)."""
    from tests.builders.qdq import _Graph
    rng = np.random.default_rng(seed)
    in_q, out_q, o = (0.04, -7), (0.05, -100), 6
    g = _Graph()
    x = g.dq(g.nchw_input("x", x_shape), in_q)
    (t, b), (l, r) = pads_hw
    pads = g.const("pads", np.array([0, 0, t, l, 0, 0, b, r], np.int64))
    p = g.node("Pad", [x, pads, g.const("v", np.float32(value))], "pad", mode="constant")
    p = g.dq(g.node("QuantizeLinear", [p, g.const("sp", np.float32(in_q[0])), g.const("zp", np.int8(in_q[1]))],
                    "qp"), in_q)
    ws = rng.uniform(0.005, 0.02, o).astype(np.float32)
    w = g.dq_const(rng.integers(-127, 128, (o, x_shape[3], 3, 3)).astype(np.int8), ws, np.int8, axis=0)
    bias = g.dq_const(rng.integers(-400, 400, o).astype(np.int32), np.float32(in_q[0]) * ws, np.int32, axis=0)
    y = g.node("Relu", [g.node("Conv", [p, w, bias], "conv", kernel_shape=[3, 3], strides=[2, 2])])
    x0 = rng.integers(-128, 128, x_shape, dtype=np.int8)
    return g.finish(y, out_q, probe=False, nchw=True), x0
