"""nn.batch_matmul / qnn.batch_matmul (+ epilogue) → isl statements over the logical result
[batch..., M, N] and the reduction k:

    S_init  acc = 0
    S_mac   acc += A[batch, m, k] · B[batch, k, n]     A, B read through their views: the flat index is
                                                      offset + Σ index·stride (broadcast batch dims: 0)
    S_out   out[transpose(batch, m, n; out_axes)] = epilogue(acc)

so the head split (reshape + transpose, slices of a packed Q/K/V buffer) and the head merge (the
transpose after P·V) are index maps of this kernel, not copies.
"""
import numpy as np

from ..codegen.templates import template
from ..ir import Constant
from ..ops.batch_matmul import logical_shapes
from ..ops.view import contiguous
from ..poly.isl_helpers import box
from .kernel import Kernel, affine
from .reduction_nest import Reduction, reduction_kernel
from .registry import lowering


def _reader(e, view, pool, epi, batch_out: int):
    """at(batch_idx, i, j) → C load of the logical operand (view over e's flat buffer)."""
    src = pool.ref(e) if isinstance(e, Constant) else epi.param_names[id(e)]
    shape, strides, offset = view or contiguous(e.ty.shape)

    def at(batch: list[str], i: str, j: str) -> str:
        lead = batch_out - (len(shape) - 2)
        idx = [b if d != 1 else "0" for b, d in zip(batch[lead:], shape[:-2])] + [i, j]
        terms = [(e_, s) for e_, s, d in zip(idx, strides, shape) if d != 1] + [(str(offset), 1)]
        return f"{src}[{affine(*terms)}]"
    return at


@lowering("nn.batch_matmul", "qnn.batch_matmul")
def lower_batch_matmul(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    a, b = anchor.args
    at = anchor.attrs
    sa, sb, shape = logical_shapes([a.ty, b.ty], at)
    nb = len(shape) - 2
    K = sa[-1]
    axes = at["out_axes"] or tuple(range(len(shape)))
    t = template("batch_matmul/ref.c.j2").module
    dims = tuple(f"o{i}" for i in range(len(shape)))
    a_at = _reader(a, at["a_view"], pool, epi, nb)
    b_at = _reader(b, at["b_view"], pool, epi, nb)
    offsets = (-at.get("a_zero_point", 0), -at.get("b_zero_point", 0))

    def mac(**c):
        o = [c[d] for d in dims]
        return t.S_mac(a_at(o[:nb], o[nb], c["k"]), b_at(o[:nb], c["k"], o[nb + 1]), *offsets)

    return reduction_kernel(fn, ctx, anchor, epi, t, Reduction(dims, box(dims, shape), (("k",), f"0 <= k < {K}"), mac,
                                                               lambda **c: [c[dims[i]] for i in axes],
                                                               int(np.prod(shape)) * K))
