"""Build a Visual-Wake-Words-like int8 .tflite: MobileNetV1 with depth multiplier 0.25 on a 96x96x3
image, 2 classes: the layer shapes of the MLPerf Tiny VWW reference model (vww_96_int8.tflite), with
seeded (not trained) weights.

    input  [1, 96, 96, 3] int8 (scale 1/128, zero point 0: an image in [-1, 1))
    conv   3x3 stride 2, 8 channels, SAME, ReLU6                                  [1, 48, 48, 8]
    13 x { depthwise 3x3 (stride 2 where MobileNetV1 has it), SAME, ReLU6
           pointwise 1x1, ReLU6 }    widths 16 32 32 64 64 128x6 256 256         ... [1, 3, 3, 256]
    AVERAGE_POOL_2D 3x3 → RESHAPE [1, 256] → FULLY_CONNECTED 2 → SOFTMAX          [1, 2]

Quantization follows the TFLite int8 spec (as the TFLite converter writes it): int8 activations with
a per-tensor (scale, zero point) calibrated on the float network (numpy, the same seeded weights, on
``--calib`` seeded images: the 99.9th percentile of each ReLU6 output, and the logits' range), int8
weights with per-output-channel symmetric scales, int32 biases with scale s_in * s_w[c]. The
operators are built with tflite-micro's model editor (tests/builders/tflm_twin_models.Net, over
../shared/tools/tflm_oneop.py), so TFLite Micro runs the file as the exact oracle.

Usage (from the repository root):

    PYTHONPATH=.imp .venv/bin/python examples/build_vww.py OUTDIR    -> OUTDIR/vww_96_int8.tflite,
                                                                        OUTDIR/vww_96_int8.io.npz

The .io.npz holds one seeded int8 input ('input') and TFLM's output for it ('tflm').
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.builders.tflm_twin_models import Net, conv, pool  # noqa: E402

# (stride of the depthwise, output channels of the pointwise) per block; alpha = 0.25 of MobileNetV1's
# 64 128 128 256 256 512x6 1024 1024.
BLOCKS = [(1, 16), (2, 32), (1, 32), (2, 64), (1, 64), (2, 128), (1, 128), (1, 128), (1, 128), (1, 128),
          (1, 128), (2, 256), (1, 256)]
FIRST = 8
IN_Q = (1 / 128, 0)
SIZE, CLASSES = 96, 2


def same_pads(n: int, k: int, s: int) -> tuple[int, int]:
    """TFLite SAME padding (before, after) of one spatial axis: the extra pad goes after."""
    total = max((-(-n // s) - 1) * s + k - n, 0)
    return total // 2, total - total // 2


def conv_float(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int, depthwise: bool) -> np.ndarray:
    """Float NHWC conv (w OHWI) or depthwise (w 1HWC), SAME padding, + bias. x [N, H, W, C] float64."""
    k = w.shape[1]
    (pt, pb), (pl, pr) = (same_pads(n, k, stride) for n in x.shape[1:3])
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(1, 2))[:, ::stride, ::stride]
    if depthwise:                                     # win [N, OH, OW, C, kh, kw]
        return np.einsum("nhwcij,ijc->nhwc", win, w[0]) + b
    return np.einsum("nhwcij,oijc->nhwo", win, w) + b


def quantize_weights(w: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel symmetric int8 weights along ``axis``: (int8 w, float32 scales)."""
    red = tuple(i for i in range(w.ndim) if i != axis)
    scales = (np.maximum(np.abs(w).max(axis=red), 1e-8) / 127).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    return np.clip(np.round(w / scales.reshape(shape)), -127, 127).astype(np.int8), scales


def relu6_q(y: np.ndarray) -> tuple[float, int]:
    """Output (scale, zero point) of a ReLU6 activation: [0, min(6, 99.9th percentile)] over 256 steps."""
    hi = float(min(6.0, max(np.percentile(y, 99.9), 1e-3)))
    return float(np.float32(hi / 255)), -128


def range_q(y: np.ndarray) -> tuple[float, int]:
    """(scale, zero point) covering [min(y, 0), max(y, 0)] (the logits)."""
    lo, hi = min(float(y.min()), 0.0), max(float(y.max()), 0.0)
    scale = float(np.float32(max(hi - lo, 1e-3) / 255))
    return scale, int(np.clip(np.round(-128 - lo / scale), -128, 127))


def layers(seed: int):
    """The float layers, seeded: [(kind, w, b, stride)], kind 'conv' (OHWI) or 'dw' (1HWC); He-scaled."""
    rng = np.random.default_rng(seed)
    out = [("conv", rng.standard_normal((FIRST, 3, 3, 3)) * np.sqrt(2 / 27), rng.normal(0, .1, FIRST), 2)]
    cin = FIRST
    for stride, cout in BLOCKS:
        out.append(("dw", rng.standard_normal((1, 3, 3, cin)) * np.sqrt(2 / 9), rng.normal(0, .1, cin), stride))
        out.append(("conv", rng.standard_normal((cout, 1, 1, cin)) * np.sqrt(2 / cin), rng.normal(0, .1, cout), 1))
        cin = cout
    fc = (rng.standard_normal((CLASSES, cin)) * np.sqrt(1 / cin), rng.normal(0, .1, CLASSES))
    return out, fc


def calibrate(convs, fc, images: np.ndarray):
    """The float network on ``images`` [N, 96, 96, 3]: each conv's output q (ReLU6), and the logits' q."""
    x, qs = images.astype(np.float64), []
    for kind, w, b, stride in convs:
        x = np.clip(conv_float(x, w, b, stride, kind == "dw"), 0, 6)
        qs.append(relu6_q(x))
        x = np.round(x / qs[-1][0]) * qs[-1][0]       # what the int8 network carries on
    logits = x.mean(axis=(1, 2)) @ fc[0].T + fc[1]
    return qs, range_q(logits)


def build(seed: int = 0, calib: int = 4) -> bytes:
    """The .tflite bytes of the VWW-like int8 model (see the module docstring)."""
    convs, fc = layers(seed)
    images = np.random.default_rng(seed + 1).uniform(-1, 1, (calib, SIZE, SIZE, 3))
    qs, logit_q = calibrate(convs, fc, images)
    net = Net()
    shape, q = (1, SIZE, SIZE, 3), IN_Q
    x = net.input(shape, q)
    for (kind, w, b, stride), out_q in zip(convs, qs):
        wq, ws = quantize_weights(w, 3 if kind == "dw" else 0)
        bq = np.round(b / (np.float32(q[0]) * ws)).astype(np.int32)
        x, shape = conv(net, x, shape, q, wq, bq, ws, out_q, (stride, stride), "SAME", (1, 1), "RELU6",
                        depth_mult=1 if kind == "dw" else 0)
        q = out_q
    x, shape = pool(net, "AVERAGE_POOL_2D", x, shape, q, shape[1:3], (1, 1), "VALID", "NONE")
    flat = net.op("RESHAPE", [x, net.const(np.array([1, shape[3]], np.int32))], net.act((1, shape[3]), q),
                  "ReshapeOptions", newShape=[1, shape[3]])
    wq, ws = quantize_weights(fc[0], 0)
    ws = np.float32(ws.max())                          # FULLY_CONNECTED: per-tensor weight scale
    wq = np.clip(np.round(fc[0] / ws), -127, 127).astype(np.int8)
    logits = net.op("FULLY_CONNECTED", [flat, net.weights(wq, ws, 0),
                                        net.bias(np.round(fc[1] / (np.float32(q[0]) * ws)).astype(np.int32),
                                                 q[0], [ws] * CLASSES)],
                    net.act((1, CLASSES), logit_q), "FullyConnectedOptions")
    probs = net.op("SOFTMAX", [logits], net.act((1, CLASSES), (1 / 256, -128)), "SoftmaxOptions", beta=1.0)
    return net.build([probs])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--calib", type=int, default=4, help="seeded calibration images (default 4)")
    args = ap.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    model = build(args.seed, args.calib)
    path = args.outdir / "vww_96_int8.tflite"
    path.write_bytes(model)
    from tests.builders.tflm_cases import tflm_oneop
    img = np.random.default_rng(args.seed + 2).uniform(-1, 1, (1, SIZE, SIZE, 3))
    x = np.clip(np.round(img * 128), -128, 127).astype(np.int8)
    (y,) = tflm_oneop().run(model, [x])
    np.savez(path.with_suffix(".io.npz"), input=x, tflm=y)
    print(f"wrote {path} ({len(model)} bytes) and {path.with_suffix('.io.npz').name}; TFLM output {y.tolist()}")


if __name__ == "__main__":
    main()
