"""matmul (+ epilogue): out[o..., n] = sum_k a[o..., k] * b[k, n]. A constant b is stored transposed,
[N][K], so the reduction reads both operands contiguously (CMSIS-NN fully-connected order)."""
import numpy as np

from ..codegen.templates import template
from ..ir import Constant
from ..poly import Statement, loops_to_c
from ..poly.isl_helpers import box
from . import lowering
from .kernel import Kernel, flat_index


@lowering("nn.matmul")
def lower_matmul(fn, anchor, epi, pool, name) -> Kernel:
    a, b = anchor.args
    K, N = b.ty.shape
    out_shape = anchor.ty.shape
    t = template("matmul/ref.c.j2").module
    ctype = anchor.ty.ctype
    dims = tuple(f"o{i}" for i in range(len(out_shape)))
    if isinstance(b, Constant):
        bname = pool.ref(np.ascontiguousarray(b.value.T), key=("T", id(b)))
        b_at = lambda n, k: f"{bname}[{flat_index((N, K), [n, k])}]"  # noqa: E731
    else:
        bidx = 1 + [p for p in fn.params].index(b)
        b_at = lambda n, k: f"p{bidx - 1}[{flat_index((K, N), [k, n])}]"  # noqa: E731

    def mac(**c):
        o = [c[d] for d in dims]
        return t.S_mac(f"p0[{flat_index(a.ty.shape, o[:-1] + [c['k']])}]", b_at(o[-1], c["k"]))

    def store(**c):
        o = [c[d] for d in dims]
        lines, value = epi.code(o)
        return t.S_out(lines, value, f"out[{flat_index(out_shape, o)}]")

    ob = box(dims, out_shape)
    stmts = [
        Statement("S_init", dims, ob, dims + ("0", "0"), lambda **c: t.S_init(ctype)),
        Statement("S_mac", dims + ("k",), f"{ob} and 0 <= k < {K}", dims + ("1", "k"), mac),
        Statement("S_out", dims, ob, dims + ("2", "0"), store),
    ]
    macros, loops = loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [f"{ctype} acc;"], macros,
                  macs=int(np.prod(out_shape)) * K)
