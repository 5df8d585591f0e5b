"""nn.max_pool2d_indices: the Indices output of ONNX MaxPool-12 (int64), NCHW.

For each output position the window's taps inside the image are scanned row by row (r, then s);
the first tap holding the maximum wins (onnxruntime's ``x > max`` scan; the first real tap is always
taken, so an all ``-inf`` window points at its first tap). Its index is flattened
over the whole input tensor [N, C, H, W]: ``((n·C + c)·H + h)·W + w`` (``storage_order`` 0, row
major) or ``(n·C + c)·H·W + w·H + h`` (1, column major), as ONNX MaxPool specifies. Windows,
strides, pads, dilations and ceil_mode are nn.max_pool2d's (ops/pool.py).
"""
import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpPattern, register_op
from ..ir.types import TensorType
from .pool import Pool2D, pool_out_size


def flat_source(n, c, h, w, shape, storage_order: int):
    """The ONNX Indices value of input element (n, c, h, w) of an NCHW ``shape``."""
    _, C, H, W = shape
    if storage_order:
        return (n * C + c) * H * W + w * H + h
    return ((n * C + c) * H + h) * W + w


@register_op
class MaxPool2DIndices(Pool2D):
    name, pattern = "nn.max_pool2d_indices", OpPattern.OPAQUE
    attrs = {**Pool2D.attrs, "storage_order": 0}

    def infer(self, args, attrs):
        if attrs["layout"] != "NCHW" or attrs["storage_order"] not in (0, 1):
            raise TinyfuseError(f"{self.name}: NCHW with storage_order 0 or 1 only, got {attrs['layout']}, "
                                f"{attrs['storage_order']}")
        return TensorType(super().infer(args, attrs).shape, "int64")

    def compute(self, x, pool_size, strides, padding, ceil_mode, count_include_pad, layout, dilation=(1, 1),
                storage_order=0, input_layout=None):     # NCHW only (infer): input_layout is never set
        n, c, h, w = x.shape
        (kh, kw), (sh, sw), (pt, pl, pb, pr), (dh, dw) = pool_size, strides, padding, dilation
        oh, ow = pool_out_size(h, kh, sh, pt, pb, ceil_mode, dh), pool_out_size(w, kw, sw, pl, pr, ceil_mode, dw)
        best = np.full((n, c, oh, ow), -np.inf)
        out = np.zeros((n, c, oh, ow), np.int64)
        nn, cc = np.meshgrid(np.arange(n), np.arange(c), indexing="ij")
        for i in range(oh):
            for j in range(ow):
                first = np.ones((n, c), bool)
                for r in range(kh):
                    for s in range(kw):
                        ih, iw = i * sh + r * dh - pt, j * sw + s * dw - pl
                        if not (0 <= ih < h and 0 <= iw < w):
                            continue
                        v = x[:, :, ih, iw].astype(np.float64)
                        take = (v > best[:, :, i, j]) | first
                        best[:, :, i, j] = np.where(take, v, best[:, :, i, j])
                        idx = flat_source(nn, cc, ih, iw, x.shape, storage_order)
                        out[:, :, i, j] = np.where(take, idx, out[:, :, i, j])
                        first[:] = False
        return out
