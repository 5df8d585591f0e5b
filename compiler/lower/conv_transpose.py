"""conv2d_transpose (+ epilogue) → isl statements, in the output-stationary gather form: for each
output pixel (h, w) the reduction runs over the input pixels (i, j) and kernel taps (r, s) that
reach it, sh·i + dh·r = h + pt and sw·j + dw·s = w + pl (ops/conv_transpose.py). The equalities are
part of the isl domain, so isl's AST generator emits strided tap loops (``r += sh`` from the right
residue) and the exact division for i: no branch, no scatter, no scratch accumulator. Groups as in
conv2d: output channel k = g·M + m, input channel ci = g·Cg + c."""
from ..codegen.templates import template
from ..ops.conv_transpose import Conv2DTranspose
from ..poly.isl_helpers import box
from .kernel import Kernel, affine, flat_index
from .reduction_nest import Reduction, reduction_kernel
from .registry import lowering


@lowering("nn.conv2d_transpose", "qnn.conv2d_transpose")
def lower_conv2d_transpose(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    x, wt = anchor.args
    a = anchor.attrs
    (N, C, H, W), (G, Cg, M, KH, KW) = Conv2DTranspose.dims(x.ty, wt.ty, a)
    (sh, sw), (dh, dw), (pt, pl, _, _) = a["strides"], a["dilation"], a["padding"]
    nhwc = a["data_layout"] == "NHWC"
    OH, OW = anchor.ty.shape[1:3] if nhwc else anchor.ty.shape[2:4]
    wname = pool.ref(wt)
    t = template("conv2d_transpose/ref.c.j2").module
    offset = -a.get("input_zero_point", 0)   # qnn.conv2d_transpose: TFLM's input_offset

    outer = ("n", "h", "w", "g", "m")
    out_box = box(outer, (N, OH, OW, G, M))
    taps = (f"0 <= r < {KH} and 0 <= s < {KW} and 0 <= c < {Cg} and 0 <= i < {H} and 0 <= j < {W} and "
            f"{sh}i + {dh}r = h + {pt} and {sw}j + {dw}s = w + {pl}")

    def out_idx(n, h, w, g, m):
        k = affine((g, M), (m, 1))
        return [n, h, w, k] if nhwc else [n, k, h, w]

    def mac(**d):                      # d: n, h, w, g, m, r, i, s, j, c as isl names them
        ci, k = affine((d["g"], Cg), (d["c"], 1)), affine((d["g"], M), (d["m"], 1))
        n, i, j, r, s = d["n"], d["i"], d["j"], d["r"], d["s"]
        xi = flat_index(x.ty.shape, [n, i, j, ci] if nhwc else [n, ci, i, j])
        wi = flat_index(wt.ty.shape, [k, r, s, d["c"]] if a["kernel_layout"] == "OHWI" else [ci, d["m"], r, s])
        return t.S_mac(f"p0[{xi}]", f"{wname}[{wi}]", offset)

    macs = N * H * W * C * M * KH * KW     # every input pixel scatters KH·KW·M products (taps cut at the border count)
    return reduction_kernel(fn, ctx, anchor, epi, t, Reduction(outer, out_box, (("r", "i", "s", "j", "c"), taps), mac,
                                                               out_idx, macs))
