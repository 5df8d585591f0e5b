"""nn.conv2d_transpose / qnn.conv2d_transpose: 2-D transposed convolution (ONNX ConvTranspose-11,
TFLite TRANSPOSE_CONV, MediaPipe's Convolution2DTransposeBias), the adjoint of ``nn.conv2d``.

Sizes: input N x C x H x W (NCHW) or N x H x W x C (NHWC); G groups, each of Cg = C / G input
channels and M output channels (O = G·M); kernel KH x KW; strides (sh, sw); dilations (dh, dw).
Weight layouts: 'IOHW' [C, M, KH, KW] (ONNX's) with NCHW, 'OHWI' [O, KH, KW, Cg] (TFLite's, extended
to groups) with NHWC.

``padding`` (top, left, bottom, right) is what is cropped from the full scatter result, as ONNX's
``pads``; ONNX's ``output_padding`` / ``output_shape`` and TFLite's explicit output shape arrive
folded into it (a negative bottom/right crop adds rows/columns no tap reaches: bias only). So with
the ONNX ConvTranspose formula

    OH = sh·(H − 1) + dh·(KH − 1) + 1 − pt − pb        (likewise OW)
    y[n, g·M + m, oh, ow] = Σ_{c, r, s, ih, iw : sh·ih + dh·r = oh + pt, sw·iw + dw·s = ow + pl}
                            x[n, g·Cg + c, ih, iw] · W[g·Cg + c, m, r, s]

(each input pixel scatters its KH x KW window, spaced by the dilation, at ``stride · position −
pad``). The int8 form sums (x − input_zero_point)·W into int32 like TFLM's reference
``integer_ops::TransposeConv`` (int32 accumulator, bias added before the per-channel requantize).
"""
import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType
from .conv import from_nchw, to_nchw
from .qnn import Int32Accumulation


def conv_transpose_out_size(size: int, k: int, stride: int, pad_begin: int, pad_end: int, dilation: int) -> int:
    """ONNX ConvTranspose: stride·(size − 1) + dilation·(k − 1) + 1 − pad_begin − pad_end."""
    return stride * (size - 1) + dilation * (k - 1) + 1 - pad_begin - pad_end


def weight_to_iohw(w: np.ndarray, kernel_layout: str, groups: int) -> np.ndarray:
    """[C, M, KH, KW] from either layout (OHWI [G·M, KH, KW, Cg] → IOHW)."""
    if kernel_layout == "IOHW":
        return w
    o, kh, kw, cg = w.shape
    return w.reshape(groups, o // groups, kh, kw, cg).transpose(0, 4, 1, 2, 3).reshape(groups * cg, o // groups, kh, kw)


def weight_to_ohwi(w: np.ndarray, groups: int) -> np.ndarray:
    """IOHW [C, M, KH, KW] → OHWI [G·M, KH, KW, Cg] (the inverse of weight_to_iohw)."""
    c, m, kh, kw = w.shape
    return np.ascontiguousarray(w.reshape(groups, c // groups, m, kh, kw).transpose(0, 2, 3, 4, 1)
                                .reshape(groups * m, kh, kw, c // groups))


@register_op
class Conv2DTranspose(OpDef):
    name, pattern, num_inputs = "nn.conv2d_transpose", OpPattern.OUT_ELEMWISE_FUSABLE, 2
    attrs = {"strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1,
             "data_layout": "NCHW", "kernel_layout": "IOHW"}

    @staticmethod
    def dims(x: TensorType, w: TensorType, attrs):
        """(N, C, H, W) of the input and (G, Cg, M, KH, KW) of the weights, whatever the layouts."""
        n, c, h, wd = to_nchw(np.empty(x.shape, np.bool_), attrs["data_layout"]).shape
        g = attrs["groups"]
        if attrs["kernel_layout"] == "IOHW":
            ci, m, kh, kw = w.shape
            return (n, c, h, wd), (g, ci // g, m, kh, kw)
        o, kh, kw, cg = w.shape
        return (n, c, h, wd), (g, cg, o // g, kh, kw)

    def infer(self, args, attrs):
        x, w = args
        if x.ndim != 4 or w.ndim != 4:
            raise TinyfuseError(f"{self.name}: need 4-D input and weights, got {x.shape} and {w.shape}")
        g = attrs["groups"]
        (n, c, h, wd), (_, cg, m, kh, kw) = self.dims(x, w, attrs)
        w_in = w.shape[0] if attrs["kernel_layout"] == "IOHW" else w.shape[3] * g
        w_out = w.shape[1] * g if attrs["kernel_layout"] == "IOHW" else w.shape[0]
        if g < 1 or c % g or w_in != c or w_out % g:
            raise TinyfuseError(f"{self.name}: input channels {c}, weight {w.shape} "
                                f"({attrs['kernel_layout']}) and group {g} disagree")
        (sh, sw), (dh, dw), (pt, pl, pb, pr) = attrs["strides"], attrs["dilation"], attrs["padding"]
        oh = conv_transpose_out_size(h, kh, sh, pt, pb, dh)
        ow = conv_transpose_out_size(wd, kw, sw, pl, pr, dw)
        if oh <= 0 or ow <= 0:
            raise TinyfuseError(f"{self.name}: output {oh}x{ow} is empty for input {h}x{wd}, kernel {kh}x{kw}")
        o = g * m
        shape = (n, o, oh, ow) if attrs["data_layout"] == "NCHW" else (n, oh, ow, o)
        return TensorType(shape, x.dtype)

    def compute(self, x, w, strides, padding, dilation, groups, data_layout, kernel_layout):
        """Scatter form (module doc): each tap (r, s) adds x·W at rows sh·ih + dh·r − pt."""
        xn = to_nchw(x, data_layout).astype(np.float64)
        wn = weight_to_iohw(w, kernel_layout, groups).astype(np.float64)
        (sh, sw), (dh, dw), (pt, pl, pb, pr) = strides, dilation, padding
        n, c, h, wd = xn.shape
        _, m, kh, kw = wn.shape
        cg = c // groups
        full_h, full_w = sh * (h - 1) + dh * (kh - 1) + 1, sw * (wd - 1) + dw * (kw - 1) + 1
        top, left = max(0, -pt), max(0, -pl)        # rows/columns no tap reaches (negative crop)
        canvas = np.zeros((n, groups, m, full_h + top + max(0, -pb), full_w + left + max(0, -pr)))
        xg = xn.reshape(n, groups, cg, h, wd)
        wg = wn.reshape(groups, cg, m, kh, kw)
        for r in range(kh):
            for s in range(kw):
                r0, s0 = top + r * dh, left + s * dw
                canvas[:, :, :, r0: r0 + sh * (h - 1) + 1: sh, s0: s0 + sw * (wd - 1) + 1: sw] += \
                    np.einsum("ngchw,gcm->ngmhw", xg, wg[:, :, :, r, s])
        oh = conv_transpose_out_size(h, kh, sh, pt, pb, dh)
        ow = conv_transpose_out_size(wd, kw, sw, pl, pr, dw)
        y0, x0 = max(pt, 0), max(pl, 0)
        out = canvas[:, :, :, y0: y0 + oh, x0: x0 + ow].reshape(n, groups * m, oh, ow)
        return from_nchw(out, data_layout).astype(x.dtype)


@register_op
class QConv2DTranspose(Int32Accumulation, Conv2DTranspose):
    """int32 acc = Σ (x − input_zero_point)·W over the taps that reach each output (TFLM
    integer_ops::TransposeConv's accumulator, before bias and requantize)."""
    name = "qnn.conv2d_transpose"
    attrs = {**Conv2DTranspose.attrs, "input_zero_point": 0}
