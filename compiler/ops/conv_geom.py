"""Geometry of an NHWC/OHWI 2-D convolution (``nn.conv2d`` / ``qnn.conv2d``, see ``ops/conv.py``):
the one description every consumer shares (lowerings, the in-place proofs, line-buffer chains, the
cost model).

Sizes: input N x H x W x C, output N x OH x OW x K, kernel KH x KW, G groups of M = K / G output
channels reading Cg = C / G input channels each; strides (sh, sw), dilations (dh, dw), padding
(top pt, left pl, bottom pb, right pr); zp the input zero point (0 for float convs).

Kernel-shape notions, each with its own name:

- ``is_1x1``: a 1x1 kernel, any stride and padding (the cost model's ``pw`` family);
- ``unpadded``: no padding on any side (with ``is_1x1``: every tap reads a real input pixel);
- ``is_pointwise``: 1x1, stride 1, unpadded: output pixel p reads exactly input pixel p, so the
  input can be read in place as the reduction's rows (no im2col);
- ``nchw_input``: the input is stored N x C x H x W (``input_layout`` 'NCHW', a model input read
  through its layout transpose); consumers that read the input as NHWC bytes (SIMD im2col, in-place
  rules) decline such a conv, the portable readers index it as [n, c, h, w];
- ``depthwise``: G == C with channel multiplier M = 1 (TinyEngine's depthwise; a conv with C = 1 and
  K > 1 is not one).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import Call, Constant, Function
from ..ir.group import MalformedGroup, split_group


@dataclass(frozen=True)
class ConvGeom:
    """Sizes of an NHWC conv (module doc). All fields are ints; ``N`` is last so that hand-built
    batch-1 geometries can omit it (and ``nchw_input``)."""

    H: int
    W: int
    C: int
    OH: int
    OW: int
    K: int
    KH: int
    KW: int
    G: int
    M: int
    Cg: int
    sh: int
    sw: int
    dh: int
    dw: int
    pt: int
    pl: int
    pb: int
    pr: int
    zp: int
    N: int = 1
    nchw_input: bool = False

    @staticmethod
    def of_call(conv: Call) -> ConvGeom:
        """Geometry of an ``nn.conv2d`` / ``qnn.conv2d`` call in NHWC/OHWI layout (any batch, any
        dtype). Raises ValueError for another layout."""
        a = conv.attrs
        if a["data_layout"] != "NHWC" or a["kernel_layout"] != "OHWI":
            raise ValueError(f"layout {a['data_layout']}/{a['kernel_layout']}, not NHWC/OHWI")
        x, w = conv.args
        nchw = a.get("input_layout") == "NCHW"
        N, H, W, C = (x.ty.shape[0], *x.ty.shape[2:], x.ty.shape[1]) if nchw else x.ty.shape
        K, KH, KW, Cg = w.ty.shape
        _, OH, OW, _ = conv.ty.shape
        G = a["groups"]
        (sh, sw), (dh, dw), (pt, pl, pb, pr) = a["strides"], a["dilation"], a["padding"]
        return ConvGeom(H, W, C, OH, OW, K, KH, KW, G, K // G, Cg, sh, sw, dh, dw, pt, pl, pb, pr,
                        int(a.get("input_zero_point", 0)), N, nchw)

    @property
    def depthwise(self) -> bool:
        """Groups = input channels, channel multiplier 1."""
        return self.G == self.C and self.M == 1 and self.Cg == 1

    @property
    def is_1x1(self) -> bool:
        """1x1 kernel, whatever the stride and padding."""
        return self.KH == self.KW == 1

    @property
    def unpadded(self) -> bool:
        """No padding on any side."""
        return not (self.pt or self.pl or self.pb or self.pr)

    @property
    def is_pointwise(self) -> bool:
        """1x1, stride 1, unpadded: output pixel p reads input pixel p, every tap is real."""
        return self.is_1x1 and self.sh == self.sw == 1 and self.unpadded

    @property
    def family(self) -> str:
        """Cost-model family: ``pw`` (any 1x1), ``dw`` (depthwise, multiplier 1) or ``conv``."""
        if self.is_1x1:
            return "pw"
        return "dw" if self.depthwise else "conv"

    @property
    def offset(self) -> int:
        """Input offset added to every real input value: -zp (QUANT.md)."""
        return -self.zp

    @property
    def P(self) -> int:
        """Output pixels per image, OH * OW."""
        return self.OH * self.OW

    @property
    def reduction(self) -> int:
        """Terms summed per output element (the im2col column length): KH * KW * Cg."""
        return self.KH * self.KW * self.Cg

    @property
    def in_bytes(self) -> int:
        """Bytes of one int8 input image, H * W * C."""
        return self.H * self.W * self.C

    @property
    def out_bytes(self) -> int:
        """Bytes of one int8 output image, OH * OW * K."""
        return self.OH * self.OW * self.K

    @property
    def macs(self) -> int:
        """Multiply-accumulates of one image (padded taps counted, as papers count them)."""
        return self.OH * self.OW * self.K * self.reduction

    @property
    def plane(self) -> tuple[int, int]:
        """(rows, columns) of the padded input plane some window reaches (in-place depthwise)."""
        ph = max((self.OH - 1) * self.sh + (self.KH - 1) * self.dh + 1, 1)
        pw = max((self.OW - 1) * self.sw + (self.KW - 1) * self.dw + 1, 1)
        return ph, pw

    def taps_in_image(self, h: str, w: str) -> str:
        """isl constraints: the tap (r, s) of output (h, w) reads a real input pixel (padding cut)."""
        return (f"0 <= r < {self.KH} and 0 <= s < {self.KW} and "
                f"0 <= {self.sh}{h} + {self.dh}r - {self.pt} < {self.H} and "
                f"0 <= {self.sw}{w} + {self.dw}s - {self.pl} < {self.W}")


def conv_group(fn: Function) -> tuple[Call, list[Call], ConvGeom] | None:
    """(anchor, epilogue ops, geometry) of a fused group whose anchor is an int8 NHWC/OHWI batch-1
    ``qnn.conv2d`` with constant weights and an int8 result; None for any other group."""
    try:
        anchor, epi = split_group(fn)
    except MalformedGroup:
        return None
    if anchor is None or anchor.op != "qnn.conv2d" or fn.body.ty.dtype != "int8":
        return None
    a = anchor.attrs
    x, w = anchor.args
    if a["data_layout"] != "NHWC" or a["kernel_layout"] != "OHWI" or x.ty.dtype != "int8" \
            or not isinstance(w, Constant) or x.ty.shape[0] != 1:
        return None
    return anchor, epi, ConvGeom.of_call(anchor)


POOL_KINDS = {"qnn.avg_pool2d": "avg", "nn.max_pool2d": "max"}


def global_pool_group(fn: Function) -> tuple[Call, list[Call], ConvGeom, str] | None:
    """(anchor, epilogue ops, geometry, "avg" | "max") of a fused group whose anchor is an int8 NHWC
    batch-1 pool over the whole image (TFLite AVERAGE_POOL_2D / MAX_POOL_2D with the window = the
    input's H x W, no padding: output 1 x 1 x C); None for any other group. The geometry is the
    pool's *accumulation*: an identity 1x1 depthwise step per input pixel (OH = H, OW = W, K = C), as
    a line-buffer chain consumes the rows (``poly.linebuf``)."""
    try:
        anchor, epi = split_group(fn)
    except MalformedGroup:
        return None
    if anchor is None or anchor.op not in POOL_KINDS or fn.body.ty.dtype != "int8":
        return None
    a = anchor.attrs
    (x,) = anchor.args
    if a["layout"] != "NHWC" or a.get("input_layout") or x.ty.dtype != "int8" or len(x.ty.shape) != 4:
        return None
    N, H, W, C = x.ty.shape
    if N != 1 or tuple(a["pool_size"]) != (H, W) or any(a["padding"]) or \
            tuple(a.get("dilation", (1, 1))) != (1, 1) or tuple(anchor.ty.shape) != (1, 1, 1, C):
        return None
    geo = ConvGeom(H, W, C, H, W, C, 1, 1, C, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0)
    return anchor, epi, geo, POOL_KINDS[anchor.op]


__all__ = ["ConvGeom", "POOL_KINDS", "conv_group", "global_pool_group"]
