"""nn.max_pool2d / nn.avg_pool2d (ONNX MaxPool-12, AveragePool-19, with dilations).

Output size: floor or ceil((H + pt + pb - ((K - 1)·d + 1)) / s) + 1 (d the dilation); with
``ceil_mode`` a last window that would start inside the bottom/right padding is dropped (PyTorch and
onnxruntime rule; onnx shape inference before opset 22 gets this wrong, so we compute it ourselves).
Window tap r of output row i reads input row i·s + r·d - pt. Average pooling divides by the number of
taps inside the image (``count_include_pad=0``) or inside image + explicit pads (``=1``); taps in the
extra ceil_mode region never count. GlobalAveragePool is avg_pool2d over the whole image.
``input_layout`` 'NCHW' on an NHWC pool: the input is stored NCHW and read through that permutation
(``passes/fold_input_transpose``, as ``nn.conv2d``); None: stored in ``layout``.
"""
import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType
from .conv import from_nchw, to_nchw


def pool_out_size(size: int, k: int, s: int, pb: int, pe: int, ceil_mode: bool, d: int = 1) -> int:
    """Output length of one spatial axis (module doc); ``d`` the dilation."""
    span = size + pb + pe - ((k - 1) * d + 1)
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + pb:
        out -= 1
    return out


class Pool2D(OpDef):
    pattern, num_inputs = OpPattern.OUT_ELEMWISE_FUSABLE, 1
    cost_family = "pool"
    attrs = {"pool_size": (1, 1), "strides": (1, 1), "padding": (0, 0, 0, 0), "ceil_mode": False,
             "count_include_pad": False, "layout": "NCHW", "dilation": (1, 1),
             "input_layout": None}

    def infer(self, args, attrs):
        (x,) = args
        if x.ndim != 4:
            raise TinyfuseError(f"{self.name}: need a 4-D input, got {x.shape}")
        n, c, h, w = to_nchw(np.empty(x.shape, np.bool_), attrs.get("input_layout") or attrs["layout"]).shape
        (kh, kw), (sh, sw), (pt, pl, pb, pr) = attrs["pool_size"], attrs["strides"], attrs["padding"]
        dh, dw = attrs.get("dilation", (1, 1))
        oh = pool_out_size(h, kh, sh, pt, pb, attrs["ceil_mode"], dh)
        ow = pool_out_size(w, kw, sw, pl, pr, attrs["ceil_mode"], dw)
        if oh <= 0 or ow <= 0:
            raise TinyfuseError(f"{self.name}: empty output for input {h}x{w}, window {kh}x{kw}")
        return TensorType((n, c, oh, ow) if attrs["layout"] == "NCHW" else (n, oh, ow, c), x.dtype)

    def compute(self, x, pool_size, strides, padding, ceil_mode, count_include_pad, layout, dilation=(1, 1),
                input_layout=None):
        xn = to_nchw(x, input_layout or layout).astype(np.float64)
        n, c, h, w = xn.shape
        (kh, kw), (sh, sw), (pt, pl, pb, pr), (dh, dw) = pool_size, strides, padding, dilation
        oh, ow = pool_out_size(h, kh, sh, pt, pb, ceil_mode, dh), pool_out_size(w, kw, sw, pl, pr, ceil_mode, dw)
        eb = max(0, (oh - 1) * sh + (kh - 1) * dh + 1 - (h + pt + pb))  # extra rows of the ceil_mode region
        er = max(0, (ow - 1) * sw + (kw - 1) * dw + 1 - (w + pl + pr))
        pads = ((0, 0), (0, 0), (pt, pb + eb), (pl, pr + er))
        fill = -np.inf if self.name == "nn.max_pool2d" else 0.0
        xp = np.pad(xn, pads, constant_values=fill)
        inside = np.pad(np.ones((h, w)), pads[2:])                       # real taps
        counted = np.pad(np.ones((h + pt + pb, w + pl + pr)), ((0, eb), (0, er)))  # image + explicit pads
        acc = np.full((n, c, oh, ow), fill)
        cnt = np.zeros((oh, ow))
        for r in range(kh):
            for s in range(kw):
                r0, s0 = r * dh, s * dw
                win = (slice(r0, r0 + sh * (oh - 1) + 1, sh), slice(s0, s0 + sw * (ow - 1) + 1, sw))
                tap = xp[(slice(None), slice(None)) + win]
                acc = np.maximum(acc, tap) if fill == -np.inf else acc + tap
                cnt += (counted if count_include_pad else inside)[win]
        out = acc if fill == -np.inf else acc / cnt
        return from_nchw(out, layout).astype(x.dtype)


@register_op
class MaxPool2D(Pool2D):
    name = "nn.max_pool2d"
    moves_data = True


@register_op
class AvgPool2D(Pool2D):
    name = "nn.avg_pool2d"
