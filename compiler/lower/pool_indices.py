"""nn.max_pool2d_indices (NCHW, int64 out): the max pool's statements (lower/pool.py: padding and
the ceil_mode tail are domain cuts) tracking, beside the running maximum, the ONNX flat index of
the first tap that holds it (ops/pool_indices.py ``flat_source``, printed as C)."""
import numpy as np

from ..codegen.templates import c_literal, template
from ..poly import Statement
from ..poly.isl_helpers import box
from .kernel import Kernel, affine, flat_index
from .registry import lowering


@lowering("nn.max_pool2d_indices")
def lower_pool_indices(fn, ctx) -> Kernel:
    """The Kernel of one nn.max_pool2d_indices (no epilogue: the op is OPAQUE)."""
    anchor, epi, pool, name = ctx.unpack(fn)
    (x,) = anchor.args
    a = anchor.attrs
    N, C, H, W = x.ty.shape
    OH, OW = anchor.ty.shape[2:4]
    (KH, KW), (sh, sw), (pt, pl, _, _) = a["pool_size"], a["strides"], a["padding"]
    dh, dw = a.get("dilation", (1, 1))
    t = template("pool/indices.c.j2").module
    lowest = c_literal(-np.inf if x.ty.dtype.startswith("float") else np.iinfo(x.ty.dtype).min, x.ty.dtype)
    dims = ("n", "c", "h", "w")
    ob = box(dims, (N, C, OH, OW))
    rd, sd = ("r" if dh == 1 else f"{dh}r"), ("s" if dw == 1 else f"{dw}s")
    taps = f"0 <= r < {KH} and 0 <= s < {KW} and 0 <= {sh}h + {rd} - {pt} < {H} and 0 <= {sw}w + {sd} - {pl} < {W}"

    def acc(n, c, h, w, r, s):
        ih, iw = affine((h, sh), (r, dh), (str(-pt), 1)), affine((w, sw), (s, dw), (str(-pl), 1))
        if a["storage_order"]:
            src = f"({n} * {C} + {c}) * {H * W} + ({iw}) * {H} + ({ih})"
        else:
            src = f"(({n} * {C} + {c}) * {H} + ({ih})) * {W} + ({iw})"
        return t.S_acc(f"p0[{flat_index(x.ty.shape, [n, c, ih, iw])}]", src)

    def store(n, c, h, w):
        return t.S_out(f"out[{flat_index(anchor.ty.shape, [n, c, h, w])}]")

    stmts = [
        Statement("S_init", dims, ob, dims + ("0", "0", "0"), lambda **c: t.S_init(lowest)),
        Statement("S_acc", dims + ("r", "s"), f"{ob} and {taps}", dims + ("1", "r", "s"), acc),
        Statement("S_out", dims, ob, dims + ("2", "0", "0"), store),
    ]
    macros, loops = ctx.loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [f"{x.ty.ctype} acc;", "int64_t arg;"],
                  macros, macs=N * OH * OW * C * KH * KW)
