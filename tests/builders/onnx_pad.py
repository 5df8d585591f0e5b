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
    "conv-crop": (_case([0, 0, -1, 1, 0, 0, 1, 1], None, CONV, {"w": W}), False),
    "maxpool-minus-inf": (_case(HW, -np.inf, MAXP, {}), True),
    "maxpool-zero": (_case(HW, None, MAXP, {}), False),
    "maxpool-all-pad-window": (_case([0, 0, 3, 0, 0, 0, 0, 0], -np.inf, MAXP, {}), False),
    "avgpool-zero": (_case(HW, None, AVGP, {}), True),
    "avgpool-own-pads-excluded": (_case(HW, None, AVGP_PADDED, {}), False),
    "avgpool-value-not-zero": (_case(HW, 1.5, AVGP, {}), False),
}
