"""TFLite's custom DETECTION_POSTPROCESS (``TFLite_Detection_PostProcess``: SSD box decoding and
non-maximum suppression) → ``vision.detection_postprocess`` (compiler/ops/detection.py), its four
outputs (boxes [1, N, 4], classes [1, N], scores [1, N], count [1], float32) sliced from one packed
result.

Options are read by key as TFLM's Init reads them (``detections_per_class`` 100 and ``use_regular_nms``
false when absent; the thresholds and scales as float32). Inputs: float32 as TFLM. uint8 inputs as
TFLite's kernel takes them (TFLM's takes float only): uint8 box encodings come with uint8 anchors, each
dequantized with its own scale and zero point, (q − zero point) · scale in float (TFLite's Dequantizer);
uint8 class predictions likewise, whatever the box encodings' type. Refused with one error line: int8
inputs (neither TFLM nor TFLite runs them), anchors whose type differs from the box encodings', batch > 1,
an IoU threshold outside (0, 1], max_detections < 1 (TFLM fails on them), outputs whose shapes are not
[1, N, 4], [1, N], [1, N], [1]."""
from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from ...ir import call
from .registry import MULTI_OUTPUTS, Graph, Op, converter, reshape

NAME = "CUSTOM 'TFLite_Detection_PostProcess'"
MULTI_OUTPUTS.add(NAME)
REQUIRED = ("max_detections", "max_classes_per_detection", "nms_score_threshold", "nms_iou_threshold",
            "num_classes", "y_scale", "x_scale", "h_scale", "w_scale")


def _options(op: Op) -> dict:
    raw = op.options if isinstance(op.options, (bytes, bytearray)) else b""
    try:
        m = flexbuffers.Loads(bytes(raw)) if raw else {}
    except Exception:  # noqa: BLE001 - damaged options: one error line
        raise op.error("custom options are not a readable flexbuffer map") from None
    missing = [k for k in REQUIRED if not isinstance(m, dict) or k not in m]
    if missing:
        raise op.error(f"custom options lack {missing}")
    f32 = lambda k: float(np.float32(m[k]))  # noqa: E731
    out = {k: int(m[k]) for k in ("max_detections", "max_classes_per_detection", "num_classes")}
    out.update({k: f32(k) for k in ("nms_score_threshold", "nms_iou_threshold", "y_scale", "x_scale", "h_scale",
                                    "w_scale")})
    out["detections_per_class"] = int(m["detections_per_class"]) if m.get("detections_per_class") is not None else 100
    out["use_regular_nms"] = bool(m["use_regular_nms"]) if m.get("use_regular_nms") is not None else False
    return out


def _float(g: Graph, op: Op, t):
    if t.dtype == "float32":
        return g.value(t)
    if t.dtype == "uint8" and t.quantized and t.scale.size == 1:
        v = g.value(t)
        return call("qnn.dequantize", v, scale=float(np.float32(t.scale[0])), zero_point=int(t.zero_point[0]),
                    axis=0, span=op.span)
    raise op.error(f"input '{t.name}' {t} must be float32, or uint8 quantized per tensor (TFLite's kernel)")


def _check_options(op: Op, o: dict) -> None:
    if not (0 < o["nms_iou_threshold"] <= 1) or o["max_detections"] < 1 or o["max_classes_per_detection"] < 1 \
            or (o["use_regular_nms"] and o["detections_per_class"] < 1):
        raise op.error(f"options {o} outside what TFLM runs (0 < nms_iou_threshold <= 1, max_detections >= 1, "
                       "max_classes_per_detection >= 1, detections_per_class >= 1)")


def _check(op: Op, o: dict) -> int:
    """The slot count N of the outputs; raises on options, outputs or inputs TFLM / TFLite do not run."""
    if len(op.inputs) != 3 or len(op.outputs) != 4 or any(t is None for t in op.inputs):
        raise op.error(f"expects 3 inputs and 4 outputs, got {len(op.inputs)} and {len(op.outputs)}")
    boxes, _, anchors = op.inputs
    ob, oc, os_, on = op.outputs
    n = ob.shape[1] if len(ob.shape) == 3 else 0
    _check_options(op, o)
    want = o["max_detections"] * (1 if o["use_regular_nms"] else o["max_classes_per_detection"])
    if ob.shape != (1, n, 4) or oc.shape != (1, n) or os_.shape != (1, n) or on.shape != (1,) or n < want \
            or any(t.dtype != "float32" for t in op.outputs):
        raise op.error(f"outputs {[str(t) for t in op.outputs]}: needs float32 [1, N, 4], [1, N], [1, N], [1] with "
                       f"N >= {want}")
    if len(boxes.shape) != 3 or boxes.shape[0] != 1:
        raise op.error("batch 1 only (TFLM's kernel)")
    if anchors.dtype != boxes.dtype:
        raise op.error(f"anchors {anchors} with box encodings {boxes}: TFLite's kernel reads the anchors in the box "
                       "encodings' type")
    return n


@converter(NAME, max_version=1, types=("float32", "uint8"))
def convert_detection_postprocess(g: Graph, op: Op):
    o = _options(op)
    n = _check(op, o)
    ins = [_float(g, op, t) for t in op.inputs]
    packed = call("vision.detection_postprocess", *ins, slots=n, span=op.span, **o)
    parts, at = [], 0
    for shape in ((1, n, 4), (1, n), (1, n), (1,)):
        size = int(np.prod(shape))
        parts.append(reshape(call("slice_view", packed, offset=at, newshape=(size,), span=op.span), shape, op.span))
        at += size
    return parts
