"""TFLite's custom DETECTION_POSTPROCESS (``TFLite_Detection_PostProcess``, the SSD head), as TFLM's
kernel computes it (tflite-micro kernels/detection_postprocess.cc): one OPAQUE op,
``vision.detection_postprocess(boxes f32 [1, B, E], scores f32 [1, B, C + off], anchors f32 [B, 4])``
(E >= 4, off = 1 with a background class in column 0) → float32 packed [4N + N + N + 1]: the
detection boxes [N, 4] (ymin, xmin, ymax, xmax), classes [N], scores [N], and their count.

- Decoding (float, through double as TFLM): yc = y / sy · ah + ay, xc likewise, half_h = 0.5 ·
  exp(h / sh) · ah, half_w likewise, each rounded to float; box = (yc − half_h, xc − half_w, yc + half_h,
  xc + half_w) in float.
- Single-class NMS (NonMaxSuppressionSingleClassHelper): the scores >= the score threshold, sorted
  decreasing by a stable sort (ties: lower anchor first); greedily keep the best active box and drop
  every later one whose IoU with it exceeds the IoU threshold, until ``max`` boxes.
- Regular NMS (``use_regular_nms``): per class (columns off..), NMS with ``detections_per_class``, merged
  with the best so far and cut to the top N = ``max_detections`` (value decreasing, earlier entry
  first on ties); unused slots are zeros. Fast NMS: per anchor the ``max_classes_per_detection`` best
  classes (value decreasing, lower class first), NMS on each anchor's best score with N = max_detections.
  For k = max_classes_per_detection > 1 each selected box fills k slots (``k · box + col``) and the count
  is the number of boxes, as TFLite's kernel: TFLM's advances its slot per class and writes past its
  outputs. Fast NMS leaves slots past the count as TFLM does not write them (zeros here).

When a decoded box has ymin >= ymax or xmin >= xmax TFLM's kernel fails (ValidateBoxes); this op
computes its outputs anyway.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType

F32 = np.float32


def decode(boxes: np.ndarray, anchors: np.ndarray, scale) -> np.ndarray:
    """[B, 4] float32 corners of DecodeCenterSizeBoxes."""
    sy, sx, sh, sw = (float(F32(v)) for v in scale)
    out = np.zeros((boxes.shape[0], 4), np.float32)
    for i, (b, a) in enumerate(zip(boxes.astype(np.float64), anchors.astype(np.float64))):
        y, x, h, w = b[:4]
        ay, ax, ah, aw = a
        yc, xc = F32(y / sy * ah + ay), F32(x / sx * aw + ax)
        hh, hw = F32(0.5 * math.exp(h / sh) * ah), F32(0.5 * math.exp(w / sw) * aw)
        out[i] = (yc - hh, xc - hw, yc + hh, xc + hw)
    return out


def iou(boxes: np.ndarray, i: int, j: int) -> np.float32:
    bi, bj = boxes[i], boxes[j]
    area_i, area_j = (bi[2] - bi[0]) * (bi[3] - bi[1]), (bj[2] - bj[0]) * (bj[3] - bj[1])
    if area_i <= 0 or area_j <= 0:
        return F32(0)
    ih = max(F32(min(bi[2], bj[2]) - max(bi[0], bj[0])), F32(0))
    iw = max(F32(min(bi[3], bj[3]) - max(bi[1], bj[1])), F32(0))
    inter = F32(ih * iw)
    return F32(inter / F32(F32(area_i + area_j) - inter))


def nms(boxes, scores: np.ndarray, limit: int, score_th: float, iou_th: float) -> list[int]:
    keep = [i for i in range(scores.size) if scores[i] >= F32(score_th)]
    order = sorted(range(len(keep)), key=lambda k: -scores[keep[k]])      # stable: ties keep index order
    active, selected = [True] * len(keep), []
    for a in range(len(keep)):
        if len(selected) >= min(len(keep), limit) or not any(active):
            break
        if not active[a]:
            continue
        active[a] = False
        selected.append(keep[order[a]])
        for b in range(a + 1, len(keep)):
            if active[b] and iou(boxes, keep[order[a]], keep[order[b]]) > F32(iou_th):
                active[b] = False
    return selected


def top(values, k: int) -> list[int]:
    """The k best positions, value decreasing, lower position first on ties."""
    return sorted(range(len(values)), key=lambda i: (-values[i], i))[:k]


ATTRS = {"max_detections": 0, "max_classes_per_detection": 1, "detections_per_class": 100,
         "use_regular_nms": False, "nms_score_threshold": 0.0, "nms_iou_threshold": 0.5, "num_classes": 1,
         "y_scale": 1.0, "x_scale": 1.0, "h_scale": 1.0, "w_scale": 1.0, "slots": 0}


def _regular(boxes, scores, a, off):
    best_i, best_v = [], []
    for c in range(a["num_classes"]):
        col = scores[:, c + off]
        sel = nms(boxes, col, a["detections_per_class"], a["nms_score_threshold"], a["nms_iou_threshold"])
        idx = best_i + [s * scores.shape[1] + c + off for s in sel]
        val = best_v + [col[s] for s in sel]
        order = top(val, min(len(val), a["max_detections"]))
        best_i, best_v = [idx[o] for o in order], [val[o] for o in order]
    return [(i // scores.shape[1], i % scores.shape[1] - off, v) for i, v in zip(best_i, best_v)], len(best_i)


def _fast(boxes, scores, a, off):
    k = min(a["max_classes_per_detection"], a["num_classes"])
    ranks = [top(row[off:], k) for row in scores]
    best = np.array([scores[r, off + ranks[r][0]] for r in range(scores.shape[0])], np.float32)
    sel = nms(boxes, best, a["max_detections"], a["nms_score_threshold"], a["nms_iou_threshold"])
    stride = a["max_classes_per_detection"]
    out = {stride * n + c: (s, ranks[s][c], scores[s, off + ranks[s][c]]) for n, s in enumerate(sel) for c in range(k)}
    return out, len(sel)


@register_op
class DetectionPostProcess(OpDef):
    name, pattern, num_inputs = "vision.detection_postprocess", OpPattern.OPAQUE, 3
    attrs = ATTRS

    def infer(self, args, attrs):
        boxes, scores, anchors = args
        ok = boxes.ndim == scores.ndim == 3 and anchors.ndim == 2 and boxes.shape[0] == scores.shape[0] == 1
        b = boxes.shape[1] if ok else 0
        ok = ok and boxes.shape[2] >= 4 and scores.shape[1] == b and anchors.shape == (b, 4) and \
            0 <= scores.shape[2] - attrs["num_classes"] <= 1 and attrs["num_classes"] >= 1 and \
            all(t.dtype == "float32" for t in args) and attrs["slots"] >= 1
        if not ok:
            raise TinyfuseError(f"{self.name}: boxes {boxes}, scores {scores}, anchors {anchors} do not fit "
                                f"{attrs['num_classes']} classes (float32 [1, B, >= 4], [1, B, C or C + 1], [B, 4])")
        n = attrs["slots"]
        return TensorType((6 * n + 1,), "float32")

    def compute(self, boxes, scores, anchors, **a):
        dec = decode(boxes[0], anchors, (a["y_scale"], a["x_scale"], a["h_scale"], a["w_scale"]))
        sc = scores[0].astype(np.float32)
        off = sc.shape[1] - a["num_classes"]
        n = a["slots"]
        out_b, out_c, out_s = np.zeros((n, 4), np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
        if a["use_regular_nms"]:
            rows, count = _regular(dec, sc, a, off)
            slots = dict(enumerate(rows))
        else:
            slots, count = _fast(dec, sc, a, off)
        for k, (anchor, cls, score) in slots.items():
            out_b[k], out_c[k], out_s[k] = dec[anchor], cls, score
        return np.concatenate([out_b.reshape(-1), out_c, out_s, [np.float32(count)]]).astype(np.float32)
