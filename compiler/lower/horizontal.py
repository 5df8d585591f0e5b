"""horizontal (passes/fuse_horizontal.py) → one kernel for all the branches.

matmul / conv2d anchor over the concatenated weights: the loop nest of lower/matmul.py or
lower/conv/ref.py (groups 1) over all ΣN output channels, with one store statement per branch whose
domain is that branch's channel range [c0_j, c0_j + N_j); it runs the branch's own epilogue and
writes the packed output:

    S_init, S_mac                 every output channel n of the anchor
    S_out_j  (c0_j <= n < c1_j)   out[offset_j + flat(shape_j, (..., n − c0_j))] = epilogue_j(acc)

element-wise siblings: one statement per element of x computing every branch (x read once).
"""
import numpy as np

from ..codegen.templates import template
from ..ir import Call, Function, get_op, post_order
from ..ops.conv import Conv2D
from ..poly import Statement, loops_to_c
from ..poly.isl_helpers import box
from .kernel import Epilogue, Kernel, affine, flat_index
from .reduction_nest import reduction_statements
from .registry import lowering


def _branch_epilogues(anchor: Call, epi, pool):
    """Per branch: (head, Epilogue, offset, shape); head is the branch's slice_axis of the fused
    anchor (its value is acc), or None for element-wise siblings."""
    br = anchor.attrs["branches"]
    names = {id(p): epi.param_names[id(a)] for p, a in zip(br.fn.params, anchor.args)}
    out = []
    for o, (offset, shape) in zip(br.outputs, br.segments()):
        calls = [c for c in post_order(o) if isinstance(c, Call)]
        head = next((c for c in calls if c.op == "slice_axis"), None)
        ops = calls[calls.index(head) + 1:] if head is not None else calls
        e = Epilogue(Function(br.fn.params, o), head, ops, pool, o.ty.ctype)
        e.param_names = names
        out.append((head, e, offset, shape))
    return out


def _packed(offset: int, shape, idx) -> str:
    return affine((flat_index(shape, idx), 1), (str(offset), 1)) if shape else str(offset)


@lowering("horizontal")
def lower_horizontal(fn, anchor, epi, pool, name) -> Kernel:
    branches = _branch_epilogues(anchor, epi, pool)
    t = template("horizontal/ref.c.j2").module
    x_name = epi.param_names[id(anchor.args[0])]
    fused = next((c for c in post_order(anchor.attrs["branches"].fn.body)
                  if isinstance(c, Call) and get_op(c.op).horizontal), None)    # the fused (q)nn conv2d / matmul
    if fused is None:
        return _elemwise(fn, anchor, branches, t, name)
    ctype = fused.ty.ctype
    offset = -fused.attrs.get("input_zero_point", 0)
    if fused.op.endswith("matmul"):
        dims, stmts_box, reduce_dims, reduce_box, mac, macs = _matmul(fused, pool, x_name, t, offset)
    else:
        dims, stmts_box, reduce_dims, reduce_box, mac, macs = _conv(fused, pool, x_name, t, offset)
    ch = dims[-1] if fused.op.endswith("matmul") or fused.attrs["data_layout"] == "NHWC" else dims[1]

    def store(head, e, off, shape):
        def body(**c):
            idx = [c[d] for d in dims]
            k = dims.index(ch)
            idx[k] = affine((idx[k], 1), (str(-head.attrs["begin"]), 1))
            lines, value = e.code(idx)
            return t.S_out(lines, value, f"out[{_packed(off, shape, idx)}]")
        return body

    stores = [(f"S_out{j}", f"{head.attrs['begin']} <= {ch} < {head.attrs['end']}", store(head, e, off, shape))
              for j, (head, e, off, shape) in enumerate(branches)]
    macros, loops = loops_to_c(reduction_statements(dims, stmts_box, (reduce_dims, reduce_box),
                                                    lambda **c: t.S_init(ctype), mac, stores))
    kernel = Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [f"{ctype} acc;"], macros, macs=macs)
    kernel.ops = ["horizontal", fused.op] + [op.op for _, e, _, _ in branches for op in e.ops]
    return kernel


def _matmul(fused, pool, x_name, t, offset):
    x, w = fused.args
    K, N = w.ty.shape
    out = fused.ty.shape
    wname = pool.ref(np.ascontiguousarray(w.value.T), key=("T", id(w)))   # [N][K], as lower/matmul.py
    dims = tuple(f"o{i}" for i in range(len(out)))

    def mac(**c):
        o, k = [c[d] for d in dims], c["k"]
        return t.S_mac(f"{x_name}[{flat_index(x.ty.shape, o[:-1] + [k])}]",
                       f"{wname}[{affine((o[-1], K), (k, 1))}]", offset)
    return dims, box(dims, out), ("k",), f"0 <= k < {K}", mac, int(np.prod(out)) * K


def _conv(fused, pool, x_name, t, offset):
    x, wt = fused.args
    a = fused.attrs
    (N, C, H, W), (O, _, KH, KW) = Conv2D.dims(x.ty, wt.ty, a)
    (sh, sw), (dh, dw), (pt, pl, _, _) = a["strides"], a["dilation"], a["padding"]
    nhwc = a["data_layout"] == "NHWC"
    OH, OW = fused.ty.shape[1:3] if nhwc else fused.ty.shape[2:4]
    wname = pool.ref(wt)
    dims = ("n", "h", "w", "k") if nhwc else ("n", "k", "h", "w")
    extents = (N, OH, OW, O) if nhwc else (N, O, OH, OW)
    taps = (f"0 <= r < {KH} and 0 <= s < {KW} and 0 <= c < {C} and "
            f"0 <= {sh}h + {dh}r - {pt} < {H} and 0 <= {sw}w + {dw}s - {pl} < {W}")

    def mac(n, h, w, k, r, s, c):
        ih, iw = affine((h, sh), (r, dh), (str(-pt), 1)), affine((w, sw), (s, dw), (str(-pl), 1))
        xi = flat_index(x.ty.shape, [n, ih, iw, c] if nhwc else [n, c, ih, iw])
        wi = flat_index(wt.ty.shape, [k, r, s, c] if a["kernel_layout"] == "OHWI" else [k, c, r, s])
        return t.S_mac(f"{x_name}[{xi}]", f"{wname}[{wi}]", offset)
    return dims, box(dims, extents), ("r", "s", "c"), taps, mac, N * OH * OW * O * KH * KW * C


def _elemwise(fn, anchor, branches, t, name) -> Kernel:
    shape = branches[0][3]
    dims = tuple(f"o{i}" for i in range(len(shape))) or ("o0",)

    def body(**c):
        idx = [c[d] for d in dims][:len(shape)]
        parts = []
        for _, e, off, bshape in branches:
            lines, value = e.code(idx)
            parts.append((lines, value, f"out[{_packed(off, bshape, idx)}]"))
        return t.S_branches(parts)

    macros, loops = loops_to_c([Statement("S", dims, box(dims, shape or (1,)), dims, body)])
    kernel = Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [], macros)
    kernel.ops = ["horizontal"] + [op.op for _, e, _, _ in branches for op in e.ops]
    return kernel
