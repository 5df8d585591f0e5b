"""nn.conv2d: 2-D convolution with groups, strides, dilation and explicit asymmetric padding.

Layouts: ``data_layout`` 'NCHW' (ONNX Conv-11) with ``kernel_layout`` 'OIHW', or 'NHWC' with 'OHWI'
(the CMSIS-NN arm_convolve_s8 weight order) after ``convert_layout``. ``padding`` is
(top, left, bottom, right). Output size: floor((H + pt + pb - dh*(KH-1) - 1) / sh) + 1.
Depthwise is groups == C_in (channel multiplier = C_out / groups).
``input_layout`` 'NCHW' (set by ``passes/fold_input_transpose`` on an NHWC conv whose input was a
transposed NCHW model input): the input tensor is stored NCHW and read through that permutation, the
computation and the output stay in ``data_layout``; None: the input is stored in ``data_layout``.
"""
import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType


def conv_out_size(size: int, k: int, stride: int, pad_begin: int, pad_end: int, dilation: int) -> int:
    return (size + pad_begin + pad_end - dilation * (k - 1) - 1) // stride + 1


def to_nchw(x, layout):
    return x if layout == "NCHW" else x.transpose(0, 3, 1, 2)


def from_nchw(x, layout):
    return x if layout == "NCHW" else x.transpose(0, 2, 3, 1)


@register_op
class Conv2D(OpDef):
    name, pattern, num_inputs = "nn.conv2d", OpPattern.OUT_ELEMWISE_FUSABLE, 2
    horizontal, cost_feature = "conv", True   # cost family: from the geometry (cost.analytical.family)
    attrs = {"strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1,
             "data_layout": "NCHW", "kernel_layout": "OIHW", "input_layout": None}

    @staticmethod
    def dims(x: TensorType, w: TensorType, attrs):
        """(N, C, H, W) of the input and (O, I, KH, KW) of the weights, whatever the layouts."""
        n, c, h, wd = to_nchw(np.empty(x.shape, np.bool_), attrs.get("input_layout") or attrs["data_layout"]).shape
        kshape = w.shape if attrs["kernel_layout"] == "OIHW" else (w.shape[0], w.shape[3], w.shape[1], w.shape[2])
        return (n, c, h, wd), kshape

    def infer(self, args, attrs):
        x, w = args
        if x.ndim != 4 or w.ndim != 4:
            raise TinyfuseError(f"nn.conv2d: need 4-D input and weights, got {x.shape} and {w.shape}")
        (n, c, h, wd), (o, i, kh, kw) = self.dims(x, w, attrs)
        g = attrs["groups"]
        if c % g or o % g or i * g != c:
            raise TinyfuseError(f"nn.conv2d: input channels {c}, weight {w.shape} and group {g} disagree")
        (sh, sw), (dh, dw), (pt, pl, pb, pr) = attrs["strides"], attrs["dilation"], attrs["padding"]
        oh, ow = conv_out_size(h, kh, sh, pt, pb, dh), conv_out_size(wd, kw, sw, pl, pr, dw)
        if oh <= 0 or ow <= 0:
            raise TinyfuseError(f"nn.conv2d: output {oh}x{ow} is empty for input {h}x{wd}, kernel {kh}x{kw}")
        shape = (n, o, oh, ow) if attrs["data_layout"] == "NCHW" else (n, oh, ow, o)
        return TensorType(shape, x.dtype)

    def compute(self, x, w, strides, padding, dilation, groups, data_layout, kernel_layout, input_layout=None):
        xn = to_nchw(x, input_layout or data_layout).astype(np.float64)
        wn = (w if kernel_layout == "OIHW" else w.transpose(0, 3, 1, 2)).astype(np.float64)
        (sh, sw), (dh, dw), (pt, pl, pb, pr) = strides, dilation, padding
        n, c, h, wd = xn.shape
        o, cg, kh, kw = wn.shape
        oh, ow = conv_out_size(h, kh, sh, pt, pb, dh), conv_out_size(wd, kw, sw, pl, pr, dw)
        xp = np.pad(xn, ((0, 0), (0, 0), (pt, max(pb, 0)), (pl, max(pr, 0))))
        xg = xp.reshape(n, groups, cg, *xp.shape[2:])
        wg = wn.reshape(groups, o // groups, cg, kh, kw)
        out = np.zeros((n, groups, o // groups, oh, ow))
        for r in range(kh):
            for s in range(kw):
                patch = xg[:, :, :, r * dh: r * dh + sh * (oh - 1) + 1: sh, s * dw: s * dw + sw * (ow - 1) + 1: sw]
                out += np.einsum("ngchw,goc->ngohw", patch, wg[:, :, :, r, s])
        return from_nchw(out.reshape(n, o, oh, ow), data_layout).astype(x.dtype)
