"""int8 average pool for Helium (arm_mve, Cortex-M55): qnn.avg_pool2d, NHWC in and out, any window,
stride and padding (the padded taps are domain cuts, as in ``lower/pool.py``; dilation 1, no
count_include_pad: the op's int8 rules). Per output pixel four channels at a time as int32 lanes (the
last C % 4 tail-predicated), summed over the window's real taps; each lane then through TFLM's
rounding division (tf_avg_round, by the compile-time tap count of ``pool.window_counts``) and the
group's epilogue (codegen_templates/pool/arm_mve.c.j2). Exact: the same integer sums and division."""
from __future__ import annotations

import numpy as np

from ..codegen.templates import c_literal, template
from ..poly import Statement
from ..poly.isl_helpers import box
from .kernel import Kernel, affine, flat_index
from .pool import window_counts
from .registry import implements
from .simd import HEADERS, require


@implements("avg_pool.arm_mve")
def avg_pool_mve(fn, ctx) -> Kernel:
    """The Helium int8 average pool (module doc)."""
    anchor, epi, pool, name = ctx.unpack(fn)
    (x,) = anchor.args
    a = anchor.attrs
    require(a["layout"] == "NHWC" and (a["input_layout"] or "NHWC") == "NHWC", "NHWC input and output only")
    require(x.ty.dtype == "int8" and anchor.ty.dtype in ("int8", "int32"), f"dtype {x.ty.dtype}")
    N, H, W, C = x.ty.shape
    OH, OW = anchor.ty.shape[1:3]
    (KH, KW), (sh, sw), (pt, pl, _, _) = a["pool_size"], a["strides"], a["padding"]
    require(tuple(a.get("dilation", (1, 1))) == (1, 1), "dilated window")
    counts = window_counts(H, W, a, OH, OW).astype(np.int32)
    table = None if np.all(counts == counts.flat[0]) else pool.ref(counts, key=("count", id(anchor)))
    t = template("pool/arm_mve.c.j2").module
    Q, tail = C // 4, C % 4
    dims = ("n", "h", "w", "q")
    taps = f"0 <= r < {KH} and 0 <= s < {KW} and 0 <= {sh}h + r - {pt} < {H} and 0 <= {sw}w + s - {pl} < {W}"

    def acc(n, h, w, q, r, s, k=4):
        ih, iw = affine((h, sh), (r, 1), (str(-pt), 1)), affine((w, sw), (s, 1), (str(-pl), 1))
        return t.S_acc(f"p0 + {flat_index(x.ty.shape, [n, ih, iw, affine((q, 4))])}", k)

    def out(n, h, w, q, k=4):
        div = f"{table}[{flat_index((OH, OW), [h, w])}]" if table else c_literal(int(counts.flat[0]), "int32")
        lanes = []
        for j in range(k):
            o = [n, h, w, affine((q, 4), (str(j), 1))]
            lines, value = epi.code(o, f"({anchor.ty.ctype})acc" if epi.ops else "acc")
            lanes.append((f"tf_avg_round(vgetq_lane_s32(vacc, {j}), {div})", lines, value,
                          f"out[{flat_index(anchor.ty.shape, o)}]"))
        return t.S_out(lanes, fn.body.ty.ctype)

    stmts = []
    for tag, lo, hi, k in (("", 0, Q, 4), ("_t", Q, Q + 1, tail)):
        if hi <= lo or k == 0:
            continue
        ob = box(dims[:3], (N, OH, OW)) + f" and {lo} <= q < {hi}"
        stmts += [Statement(f"S_init{tag}", dims, ob, dims + ("0", "0", "0"), lambda **c: t.S_init()),
                  Statement(f"S_acc{tag}", dims + ("r", "s"), f"{ob} and {taps}", dims + ("1", "r", "s"),
                            lambda k=k, **c: acc(**c, k=k)),
                  Statement(f"S_out{tag}", dims, ob, dims + ("2", "0", "0"), lambda k=k, **c: out(**c, k=k))]
    macros, loops = ctx.loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, ["int32x4_t vacc;"], macros,
                  macs=N * OH * OW * C * KH * KW, headers=list(HEADERS))


__all__ = ["avg_pool_mve"]
