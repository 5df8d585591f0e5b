"""TensorFlow's dilated convolution without a dilated kernel: SPACE_TO_BATCH_ND → CONV_2D (or
DEPTHWISE_CONV_2D, stride 1, VALID) → BATCH_TO_SPACE_ND, with TensorFlow's with_space_to_batch
paddings and crops (SAME: the dilated conv's SAME padding, plus rows/columns at the bottom/right up to
a multiple of the rate, cropped afterwards), and the same conv as one CONV_2D with dilation factors
(the oracle model TFLite Micro runs). int8 (per-channel weights, int32 bias) or float32."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tests.builders.tflm_twin_models import ACT, PAD, Net


@dataclass
class DilatedCase:
    chain: bytes          # S2B → conv → B2S
    direct: bytes         # one conv with dilation (rate, rate)
    inputs: list
    out_shape: tuple


def _tf_pads(n: int, k: int, d: int, padding: str) -> tuple[list[int], list[int]]:
    """([before, after] paddings, [0, extra] crops) of one spatial axis, as with_space_to_batch."""
    total = (k - 1) * d if padding == "SAME" else 0
    before, after = total // 2, total - total // 2
    extra = -(n + total) % d
    return [before, after + extra], [0, extra]


def _conv(net: Net, x, shape, p: dict, padding: str, dilation: int, out_shape):
    """The conv operator of ``p`` (int8 or float weights, bias) on ``x`` of ``shape``."""
    q8 = p["in_q"] is not None
    if p["depthwise"]:
        w = net.weights(p["w"], p["w_scales"], 3) if q8 else net.const(p["w"])
    else:
        w = net.weights(p["w"], p["w_scales"], 0) if q8 else net.const(p["w"])
    b = net.bias(p["b"], p["in_q"][0], p["w_scales"]) if q8 else net.const(p["b"])
    fields = dict(padding=PAD[padding], strideH=1, strideW=1, dilationHFactor=dilation, dilationWFactor=dilation,
                  fusedActivationFunction=ACT[p["act"]])
    out = net.act(out_shape, p["out_q"])
    if p["depthwise"]:
        return net.op("DEPTHWISE_CONV_2D", [x, w, b], out, "DepthwiseConv2DOptions", depthMultiplier=1, **fields)
    return net.op("CONV_2D", [x, w, b], out, "Conv2DOptions", **fields)


def dilated_case(seed: int, dtype: str, depthwise: bool, hw=(9, 7), c: int = 3, k: int = 3, rate: int = 2,
                 padding: str = "SAME", act: str = "NONE") -> DilatedCase:
    rng = np.random.default_rng(seed)
    n = 1
    oc = c if depthwise else 5
    q8 = dtype == "int8"
    shape_w = (1, k, k, c) if depthwise else (oc, k, k, c)
    p = dict(depthwise=depthwise, act=act, in_q=(0.05, 3) if q8 else None, out_q=(0.08, -7) if q8 else None)
    if q8:
        p["w"] = rng.integers(-127, 128, shape_w).astype(np.int8)
        p["w_scales"] = (rng.uniform(0.5, 2.0, oc) * 0.01).astype(np.float32)
        p["b"] = rng.integers(-2000, 2000, oc).astype(np.int32)
        x = rng.integers(-128, 128, (n, *hw, c)).astype(np.int8)
    else:
        p["w"] = rng.standard_normal(shape_w).astype(np.float32)
        p["b"] = rng.standard_normal(oc).astype(np.float32)
        x = rng.standard_normal((n, *hw, c)).astype(np.float32)
    pads, crops = zip(*(_tf_pads(s, k, rate, padding) for s in hw))
    padded = [s + sum(pp) for s, pp in zip(hw, pads)]
    inner = (n * rate * rate, padded[0] // rate, padded[1] // rate, c)
    conv_out = (inner[0], inner[1] - k + 1, inner[2] - k + 1, oc)
    out = (n, conv_out[1] * rate - sum(crops[0]), conv_out[2] * rate - sum(crops[1]), oc)

    net = Net()
    xt = net.input((n, *hw, c), p["in_q"], dtype)
    s2b = net.op("SPACE_TO_BATCH_ND", [xt, net.const(np.array([rate, rate], np.int32)),
                                       net.const(np.array(pads, np.int32))], net.act(inner, p["in_q"]),
                 "SpaceToBatchNDOptions")
    y = _conv(net, s2b, inner, p, "VALID", 1, conv_out)
    z = net.op("BATCH_TO_SPACE_ND", [y, net.const(np.array([rate, rate], np.int32)),
                                     net.const(np.array(crops, np.int32))], net.act(out, p["out_q"]),
               "BatchToSpaceNDOptions")
    chain = net.build([z])

    net2 = Net()
    x2 = net2.input((n, *hw, c), p["in_q"], dtype)
    direct = net2.build([_conv(net2, x2, (n, *hw, c), p, padding, rate, out)])
    return DilatedCase(chain, direct, [x], out)
