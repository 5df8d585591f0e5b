"""conv2d (+ epilogue) → isl statements. Groups and depthwise (any channel multiplier) are one form:
output channel k = g*M + m, input channel ci = g*Cg + c. Padding is a domain cut (a padded tap is not
an instance), so the loop bounds carry it and the body has no branch. An NHWC conv with ``input_layout``
'NCHW' reads its input at [n, ci, ih, iw] (the model input's layout transpose folded into the reads,
``passes/fold_input_transpose``)."""
from ...codegen.templates import template
from ...ops.conv import Conv2D
from ...poly.isl_helpers import box
from ..kernel import Kernel, affine, flat_index
from ..reduction_nest import reduction_kernel
from ..registry import lowering


@lowering("nn.conv2d", "qnn.conv2d")
def lower_conv2d(fn, anchor, epi, pool, name) -> Kernel:
    x, wt = anchor.args
    a = anchor.attrs
    (N, C, H, W), (O, Cg, KH, KW) = Conv2D.dims(x.ty, wt.ty, a)
    G = a["groups"]
    M = O // G
    (sh, sw), (dh, dw), (pt, pl, _, _) = a["strides"], a["dilation"], a["padding"]
    nhwc = a["data_layout"] == "NHWC"
    x_nhwc = (a["input_layout"] or a["data_layout"]) == "NHWC"
    OH, OW = anchor.ty.shape[1:3] if nhwc else anchor.ty.shape[2:4]
    wname = pool.ref(wt)
    t = template("conv2d/ref.c.j2").module
    offset = -a.get("input_zero_point", 0)   # qnn.conv2d: CMSIS-NN input_offset

    outer = ("n", "h", "w", "g", "m")
    out_box = box(outer, (N, OH, OW, G, M))
    taps = (f"0 <= r < {KH} and 0 <= s < {KW} and 0 <= c < {Cg} and "
            f"0 <= {sh}h + {dh}r - {pt} < {H} and 0 <= {sw}w + {dw}s - {pl} < {W}")

    def out_idx(n, h, w, g, m):
        k = affine((g, M), (m, 1))
        return [n, h, w, k] if nhwc else [n, k, h, w]

    def mac(n, h, w, g, m, r, s, c):
        ih, iw = affine((h, sh), (r, dh), (str(-pt), 1)), affine((w, sw), (s, dw), (str(-pl), 1))
        ci, k = affine((g, Cg), (c, 1)), affine((g, M), (m, 1))
        xi = flat_index(x.ty.shape, [n, ih, iw, ci] if x_nhwc else [n, ci, ih, iw])
        wi = flat_index(wt.ty.shape, [k, r, s, c] if a["kernel_layout"] == "OHWI" else [k, c, r, s])
        return t.S_mac(f"p0[{xi}]", f"{wname}[{wi}]", offset)

    return reduction_kernel(fn, anchor, epi, t, name, outer, out_box, (("r", "s", "c"), taps), mac, out_idx,
                            macs=N * OH * OW * O * KH * KW * Cg)
