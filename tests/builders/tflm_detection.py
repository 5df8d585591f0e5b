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


def ssd(rng, cells: int = 4, per_cell: int = 2, classes: int = 5, channels: int = 8, int8: bool = False,
        **options) -> tuple[bytes, np.ndarray]:
    """A small SSD head as exporters ship it: feature map [1, cells, cells, channels] → 1x1 CONV_2D box and
    class predictors → RESHAPE to [1, B, 4] and [1, B, classes + 1] → LOGISTIC on the classes →
    DETECTION_POSTPROCESS over B = cells² · per_cell grid anchors. ``int8``: an int8 feature map, int8
    convolutions and LOGISTIC, DEQUANTIZE before the post-processing (as TFLite's converter emits
    it). Returns the model and one feature map."""
    m = SignalNet()
    b, k = cells * cells * per_cell, classes + 1
    x_q = (0.05, -3) if int8 else None
    x = m.input((1, cells, cells, channels), "int8" if int8 else "float32", q=x_q)
    heads = []
    for width, out_q in ((4, (0.04, 2)), (k, (0.1, -10))):
        w = rng.normal(0, 0.5, (per_cell * width, 1, 1, channels)).astype(np.float32)
        bias = rng.normal(0, 0.3, per_cell * width).astype(np.float32)
        if int8:
            sw = float(np.abs(w).max() / 127)
            wq, bq = (sw, 0), (float(np.float32(x_q[0]) * np.float32(sw)), 0)
            wt = m.const(np.round(w / sw).astype(np.int8), q=wq)
            bt = m.const(np.round(bias / bq[0]).astype(np.int32), q=bq)
        else:
            wt, bt = m.const(w), m.const(bias)
        y = m.tensor((1, cells, cells, per_cell * width), "int8" if int8 else "float32", q=out_q if int8 else None)
        m.builtin("CONV_2D", [x, wt, bt], y, "Conv2DOptions", padding=m.S.Padding.VALID, strideH=1, strideW=1)
        r = m.tensor((1, b, width), "int8" if int8 else "float32", q=out_q if int8 else None)
        m.builtin("RESHAPE", [y, m.const(np.array([1, b, width], np.int32))], r)
        heads.append(r)
    scores = m.tensor((1, b, k), "int8" if int8 else "float32", q=(1 / 256, -128) if int8 else None)
    m.builtin("LOGISTIC", [heads[1]], scores)
    heads[1] = scores
    if int8:
        heads = [_dequantize(m, t, (1, b, w)) for t, w in zip(heads, (4, k))]
    side = np.arange(cells, dtype=np.float32)
    centres = [((r + 0.5) / cells, (c + 0.5) / cells) for r in side for c in side for _ in range(per_cell)]
    sizes = [(0.3, 0.3), (0.5, 0.25)] * (b // 2)
    an = np.array([(*cy_cx, *hw) for cy_cx, hw in zip(centres, sizes)], np.float32)
    opts = dict(max_detections=6, max_classes_per_detection=1, nms_score_threshold=0.3, nms_iou_threshold=0.5,
                y_scale=10.0, x_scale=10.0, h_scale=5.0, w_scale=5.0, num_classes=classes) | options
    n = opts["max_detections"]
    outs = [m.tensor((1, n, 4), "float32"), m.tensor((1, n), "float32"), m.tensor((1, n), "float32"),
            m.tensor((1,), "float32")]
    m.op("TFLite_Detection_PostProcess", [*heads, m.const(an)], outs, **opts)
    feature = rng.normal(0, 1, (1, cells, cells, channels))
    feature = np.clip(np.round(feature / x_q[0]) + x_q[1], -128, 127).astype(np.int8) if int8 else \
        feature.astype(np.float32)
    return m.build(outs), feature


def _dequantize(m, t, shape):
    f = m.tensor(shape, "float32")
    m.builtin("DEQUANTIZE", [t], f)
    return f
