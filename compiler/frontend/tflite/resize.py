"""TFLite RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR (v1-4: float32 and int8; v3 added
half_pixel_centers) → nn.resize2d in NHWC with ``convention='tflite'`` (TFLite's coordinate
arithmetic, ops/resize.py). TensorFlow's options map to ONNX coordinate modes:

    bilinear  align_corners → align_corners, half_pixel_centers → half_pixel, neither → asymmetric
    nearest   align_corners → align_corners + round half away (round_prefer_ceil on c >= 0),
              half_pixel_centers → tf_half_pixel_for_nn + floor, neither → asymmetric + floor

int8: QDQ form (legalize_qdq runs it on the int8 bytes) when input and output share (scale, zero
point), as the TFLite converter makes them; otherwise the int8 op directly on the bytes, as TFLM does
(it never rescales a resize).
"""
from __future__ import annotations

from ...ir import call
from .registry import Graph, Op, constant, converter, finish, is_int8, real


@converter("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", max_version=4)
def convert_resize(g: Graph, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    if len(x.shape) != 4:
        raise op.error(f"{op.name} needs a 4-D NHWC input")
    size = [int(v) for v in constant(op, op.inputs[1] if len(op.inputs) > 1 else None, "size").reshape(-1)]
    if len(size) != 2 or min(size) < 1:
        raise op.error(f"size {size} must be two positive ints (new height, new width)")
    align, half = bool(op.opt("alignCorners", False)), bool(op.opt("halfPixelCenters", False))
    if align and half:
        raise op.error("align_corners and half_pixel_centers are both set", "TensorFlow allows one of them")
    bilinear = op.name == "RESIZE_BILINEAR"
    mode = ("align_corners" if align else ("half_pixel" if bilinear else "tf_half_pixel_for_nn") if half
            else "asymmetric")
    attrs = dict(method="linear" if bilinear else "nearest", coordinate_transformation_mode=mode,
                 nearest_mode="round_prefer_ceil" if align else "floor", size=tuple(size), convention="tflite",
                 layout="NHWC")
    if is_int8(x) and x.q != out.q:
        return call("nn.resize2d", g.value(x), span=op.span, **attrs)
    return finish(call("nn.resize2d", real(g, x, op), span=op.span, **attrs), op)
