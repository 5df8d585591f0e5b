"""matmul (+ epilogue): out[batch..., m, n] = sum_k a[batch..., m, k] * b[batch..., k, n], batch dims
broadcast (numpy rules). A constant b is stored with its last two axes swapped, [..., N, K], so the
reduction reads both operands contiguously (CMSIS-NN fully-connected order)."""
import numpy as np

from ..codegen.templates import template
from ..ir import Constant
from ..poly.isl_helpers import box
from .kernel import Kernel, flat_index
from .reduction_nest import Reduction, reduction_kernel
from .registry import lowering


def _batch_index(shape: tuple[int, ...], batch: list[str]) -> list[str]:
    """Index into the batch dims ``shape`` of an operand broadcast against the output's ``batch``."""
    lead = len(batch) - len(shape)
    return [e if d != 1 else "0" for e, d in zip(batch[lead:], shape)]


@lowering("nn.matmul", "qnn.matmul")
def lower_matmul(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    a, b = anchor.args
    K, N = b.ty.shape[-2:]
    out_shape = anchor.ty.shape
    has_m = a.ty.ndim >= 2
    nb = len(out_shape) - 1 - int(has_m)      # number of batch dims of the output
    t = template("matmul/ref.c.j2").module
    dims = tuple(f"o{i}" for i in range(len(out_shape)))
    b_batch = b.ty.shape[:-2]
    if isinstance(b, Constant):
        bname = pool.ref(np.ascontiguousarray(np.swapaxes(b.value, -1, -2)), key=("T", id(b)))
        b_at = lambda bt, k, n: f"{bname}[{flat_index(b_batch + (N, K), bt + [n, k])}]"  # noqa: E731
    else:
        bp = epi.param_names[id(b)]
        b_at = lambda bt, k, n: f"{bp}[{flat_index(b.ty.shape, bt + [k, n])}]"  # noqa: E731

    def mac(**c):
        o = [c[d] for d in dims]
        batch, k = o[:nb], c["k"]
        ai = _batch_index(a.ty.shape[:-2], batch) + o[nb:nb + 1] * has_m + [k]
        bi = _batch_index(b_batch, batch)
        return t.S_mac(f"p0[{flat_index(a.ty.shape, ai)}]", b_at(bi, k, o[-1]), -anchor.attrs.get("input_zero_point", 0))

    return reduction_kernel(fn, ctx, anchor, epi, t, Reduction(dims, box(dims, out_shape), (("k",), f"0 <= k < {K}"),
                                                               mac, lambda **c: [c[d] for d in dims],
                                                               int(np.prod(out_shape)) * K))
