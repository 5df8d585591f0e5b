"""vision.detection_postprocess → one kernel (codegen_templates/detection/ref.c.j2): box decoding,
TFLM's single-class NMS (a stable merge sort, greedy IoU suppression), regular or fast multi-class
selection. Scratch: the decoded boxes, the kept scores and indices, the sort buffers."""
from __future__ import annotations

from ..codegen.templates import template
from ..ir import Constant
from .kernel import Kernel
from .registry import lowering


def _double(v: float) -> str:
    return repr(float(v))


@lowering("vision.detection_postprocess")
def lower_detection(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    boxes, scores, _ = (a.ty for a in anchor.args)
    a = anchor.attrs
    b, e, k_all = boxes.shape[1], boxes.shape[2], scores.shape[2]
    n = a["slots"]
    per_class = min(a["detections_per_class"], b)
    r = n + per_class
    t = max(b, r)
    k = min(a["max_classes_per_detection"], a["num_classes"])
    d = dict(sy=_double(a["y_scale"]), sx=_double(a["x_scale"]), sh=_double(a["h_scale"]), sw=_double(a["w_scale"]),
             regular=a["use_regular_nms"], classes=a["num_classes"], off=k_all - a["num_classes"], per_class=per_class,
             k=k, stride=a["max_classes_per_detection"], max_det=a["max_detections"])
    module = template("detection/ref.c.j2").make_module(vars=dict(
        B=b, E=e, K=k_all, N=n, T=t, R=r, score_th=repr(float(a["nms_score_threshold"])) + "f",
        iou_th=repr(float(a["nms_iou_threshold"])) + "f"))
    names = [pool.ref(x) if isinstance(x, Constant) else epi.param_names[id(x)] for x in anchor.args]
    body = module.detection(*names, d)
    extra = 16 * r if a["use_regular_nms"] else 4 * b * k
    scratch = 4 * (6 * b + 3 * b + t) + b + 4 + extra
    return Kernel(name, [p.ty for p in fn.params], anchor.ty, str(body), [], macs=b * (k_all + 8),
                  scratch_bytes=scratch)
