"""max/avg pool2d (+ epilogue). Padding and the ceil_mode tail are domain cuts; the average divisor
(ONNX AveragePool count_include_pad rule, dilated taps counted one by one) is computed at compile
time: a literal when every window has the same count, else a const table [OH][OW] in flash. An NHWC
pool with ``input_layout`` 'NCHW' reads its input at [n, c, ih, iw] (passes/fold_input_transpose)."""
import numpy as np

from ..codegen.templates import c_literal, template
from ..poly import Statement
from ..poly.isl_helpers import box
from .kernel import Kernel, affine, flat_index
from .registry import lowering


def _axis_counts(size: int, k: int, s: int, d: int, pb: int, pe: int, n_out: int, include_pad: bool):
    """Per output index of one axis: the taps i·s + r·d - pb (r < k) inside [0, size), or inside
    [-pb, size + pe) when ``include_pad``."""
    taps = np.arange(n_out)[:, None] * s + np.arange(k)[None, :] * d - pb
    lo, hi = (-pb, size + pe) if include_pad else (0, size)
    return ((taps >= lo) & (taps < hi)).sum(1)


def window_counts(H, W, attrs, oh, ow):
    """Divisor of each output position [oh, ow]: taps inside the image, or inside image + explicit
    pads when count_include_pad (the ceil_mode tail never counts); dilated taps counted one by one."""
    (kh, kw), (sh, sw), (pt, pl, pb, pr) = attrs["pool_size"], attrs["strides"], attrs["padding"]
    dh, dw = attrs.get("dilation", (1, 1))
    inc = attrs["count_include_pad"]
    rows = _axis_counts(H, kh, sh, dh, pt, pb, oh, inc)
    cols = _axis_counts(W, kw, sw, dw, pl, pr, ow, inc)
    return np.outer(rows, cols).astype(np.float64)


@lowering("nn.max_pool2d", "nn.avg_pool2d", "qnn.avg_pool2d")
def lower_pool(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    (x,) = anchor.args
    a = anchor.attrs
    kind = {"nn.max_pool2d": "max", "nn.avg_pool2d": "avg", "qnn.avg_pool2d": "qavg"}[anchor.op]
    nhwc = a["layout"] == "NHWC"
    x_nhwc = (a["input_layout"] or a["layout"]) == "NHWC"
    N, H, W, C = x.ty.shape if x_nhwc else (x.ty.shape[0],) + x.ty.shape[2:] + (x.ty.shape[1],)
    OH, OW = anchor.ty.shape[1:3] if nhwc else anchor.ty.shape[2:4]
    (KH, KW), (sh, sw), (pt, pl, _, _) = a["pool_size"], a["strides"], a["padding"]
    dh, dw = a.get("dilation", (1, 1))
    t = template("pool/ref.c.j2").module
    divisor = "1.0f"
    if kind != "max":   # qavg: int32 count of the real taps (count_include_pad=0, checked by the op)
        counts = window_counts(H, W, a, OH, OW)
        cdtype = "float32" if kind == "avg" else "int32"
        if np.all(counts == counts.flat[0]):
            divisor = c_literal(counts.flat[0], cdtype)
        else:
            divisor = pool.ref(counts.astype(cdtype), key=("count", id(anchor)))

    dtype = anchor.ty.dtype
    lowest = c_literal(-np.inf if dtype.startswith("float") else np.iinfo(dtype).min, dtype)

    dims = ("n", "h", "w", "c")
    ob = box(dims, (N, OH, OW, C))
    rd, sd = ("r" if dh == 1 else f"{dh}r"), ("s" if dw == 1 else f"{dw}s")
    taps = f"0 <= r < {KH} and 0 <= s < {KW} and 0 <= {sh}h + {rd} - {pt} < {H} and 0 <= {sw}w + {sd} - {pl} < {W}"

    def idx(n, h, w, c, layout_nhwc=nhwc):
        return [n, h, w, c] if layout_nhwc else [n, c, h, w]

    def acc(n, h, w, c, r, s):
        ih, iw = affine((h, sh), (r, dh), (str(-pt), 1)), affine((w, sw), (s, dw), (str(-pl), 1))
        return t.S_acc(kind, f"p0[{flat_index(x.ty.shape, idx(n, ih, iw, c, x_nhwc))}]")

    def store(n, h, w, c):
        o = idx(n, h, w, c)
        div = divisor if not divisor.startswith(pool.prefix) else f"{divisor}[{flat_index((OH, OW), [h, w])}]"
        # qavg: tf_avg_round's int32 result is the int8 average (within the range of the int8 taps):
        # the epilogue reads it as the anchor's type (no implicit narrowing: -Wconversion)
        lines, value = epi.code(o, f"({anchor.ty.ctype})acc" if kind == "qavg" and epi.ops else "acc")
        return t.S_out(kind, div, lines, value, f"out[{flat_index(anchor.ty.shape, o)}]", fn.body.ty.ctype,
                       wcet=ctx.options.wcet)

    stmts = [
        Statement("S_init", dims, ob, dims + ("0", "0", "0"), lambda **c: t.S_init(kind, lowest)),
        Statement("S_acc", dims + ("r", "s"), f"{ob} and {taps}", dims + ("1", "r", "s"), acc),
        Statement("S_out", dims, ob, dims + ("2", "0", "0"), store),
    ]
    macros, loops = ctx.loops_to_c(stmts)
    acc_type = "int32_t" if kind == "qavg" else anchor.ty.ctype
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [f"{acc_type} acc;"], macros,
                  macs=N * OH * OW * C * KH * KW)
