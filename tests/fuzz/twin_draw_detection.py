"""The TFLM twin fuzzer's draw of DETECTION_POSTPROCESS (float32, tests/builders/tflm_detection.py):
random anchors, encodings, scores (some on a few levels, for ties), regular or fast NMS, thresholds,
background column, wide encodings. Fast-NMS draws put the anchors on a grid with small encodings, so
no two boxes overlap and every slot TFLM writes is the whole output."""
from __future__ import annotations

import functools

import numpy as np

from tests.builders import tflm_detection as td
from tests.fuzz.twin_draw import Draw, dim, pick


def _grid(b: int) -> np.ndarray:
    side = int(np.ceil(np.sqrt(b)))
    cells = [(i // side, i % side) for i in range(b)]
    return np.array([[(r + 0.5) / side, (c + 0.5) / side, 0.5 / side, 0.5 / side] for r, c in cells], np.float32)


def draw_detection(rng, regular: bool) -> Draw:
    b, classes = int(rng.integers(1, 120)), dim(rng, 12)
    bg, e = bool(rng.random() < 0.7), pick(rng, [4, 4, 4, 5, 8])
    opts = dict(use_regular_nms=regular, max_detections=dim(rng, 20), nms_iou_threshold=float(rng.uniform(0.05, 1.0)),
                nms_score_threshold=float(rng.uniform(0, 0.9)) if regular else 0.0,
                y_scale=float(rng.uniform(1, 20)), x_scale=float(rng.uniform(1, 20)),
                h_scale=float(rng.uniform(1, 10)), w_scale=float(rng.uniform(1, 10)))
    if regular:
        opts["detections_per_class"] = dim(rng, 30)
    boxes, scores = td.inputs(rng, b, classes, bg, e)
    if rng.random() < 0.3:
        scores = (np.round(scores * 4) / 4).astype(np.float32)
    anchors = td.anchors(rng, b) if regular else _grid(b)
    if not regular:          # no overlaps, at least max_detections boxes: TFLM writes every slot
        boxes = (boxes * 0.01).astype(np.float32)
        opts["max_detections"] = min(opts["max_detections"], b)
    model = td.model(b, classes, anchors, background=bg, e=e, **opts)
    params = dict(b=b, num_classes=classes, background=bg, e=e, **opts)
    return Draw(f"DETECTION_POSTPROCESS({'regular' if regular else 'fast'})", model, [boxes, scores], params)


DRAWS = {"DETECTION_POSTPROCESS(regular)": functools.partial(draw_detection, regular=True),
         "DETECTION_POSTPROCESS(fast)": functools.partial(draw_detection, regular=False)}
