"""DETECTION_POSTPROCESS (``TFLite_Detection_PostProcess``) models for tests: B anchors (a constant
[B, 4] of centre-size anchors), box encodings [1, B, E] and class scores [1, B, C + background] as
inputs, the four float32 outputs. float32 models run in TFLM (and LiteRT); models with uint8 inputs (and
uint8 anchors with uint8 box encodings) run in LiteRT only."""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_signal import SignalNet


def anchors(rng, b: int) -> np.ndarray:
    """Centre-size anchors (y, x, h, w) in [0, 1], some of them overlapping."""
    centres = rng.uniform(0.05, 0.95, (b, 2))
    sizes = rng.uniform(0.05, 0.4, (b, 2))
    return np.concatenate([centres, sizes], axis=1).astype(np.float32)


def model(b: int, classes: int, anchor_values: np.ndarray, *, background: bool = True, e: int = 4,
          qbox=None, qscore=None, qanchor=None, dtype: str = "float32", **options) -> bytes:
    """The one-op model; ``options``: the flexbuffer keys (max_detections, max_classes_per_detection,
    detections_per_class, use_regular_nms, nms_score_threshold, nms_iou_threshold, y/x/h/w_scale); num_classes
    is ``classes``. ``qbox`` / ``qscore`` / ``qanchor``: (scale, zero point) of quantized (``dtype``) box
    encodings, class predictions, anchors (then ``anchor_values`` are the quantized values)."""
    m = SignalNet()
    k = classes + int(background)
    boxes = m.input((1, b, e), dtype if qbox else "float32", q=qbox)
    scores = m.input((1, b, k), dtype if qscore else "float32", q=qscore)
    opts = dict(max_detections=10, max_classes_per_detection=1, nms_score_threshold=0.3, nms_iou_threshold=0.5,
                y_scale=10.0, x_scale=10.0, h_scale=5.0, w_scale=5.0, num_classes=classes) | options
    n = opts["max_detections"] * (1 if opts.get("use_regular_nms") else opts["max_classes_per_detection"])
    outs = [m.tensor((1, n, 4), "float32"), m.tensor((1, n), "float32"), m.tensor((1, n), "float32"),
            m.tensor((1,), "float32")]
    m.op("TFLite_Detection_PostProcess", [boxes, scores, m.const(anchor_values, q=qanchor)], outs, **opts)
    return m.build(outs)


def inputs(rng, b: int, classes: int, background: bool = True, e: int = 4) -> list[np.ndarray]:
    """Box encodings around 0 (centre shifts, log sizes) and scores in [0, 1] (a few high)."""
    boxes = rng.normal(0, 1, (1, b, e)) * np.array([1.0, 1.0, 0.5, 0.5] + [1.0] * (e - 4))
    scores = rng.uniform(0, 1, (1, b, classes + int(background))) ** 3
    return [boxes.astype(np.float32), scores.astype(np.float32)]


def quantize(x: np.ndarray, q, dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.clip(np.round(x / q[0]) + q[1], info.min, info.max).astype(dtype)


def dequantized(x: np.ndarray, q) -> np.ndarray:
    """(q − zero point) · scale in float32, as TFLite's Dequantizer."""
    return ((x.astype(np.float32) - np.float32(q[1])) * np.float32(q[0])).astype(np.float32)
