"""The ``sparse`` kernel variant of int8 ``qnn.conv2d`` (any kernel size, groups and depthwise) and
``qnn.matmul`` with constant weights (fully connected): the weights are compile-time constants, so
their zeros are left out of the emitted reduction entirely.

Layout (compressed sparse rows over (output channel, kernel row), the CSR of sparse BLAS): for output
channel k the nonzero weights, in (r, s, c) order, are ``val[j]`` (int8) with ``off[j]`` the element
offset of the input they multiply from the window origin of an NHWC input (``(r*dh*W + s*dw)*C + c``;
for a matmul the reduction index); kernel row r of channel k owns ``j`` in ``[rptr[k*KH + r],
rptr[k*KH + r + 1])``. A channel whose weights are all zero has an empty range: only its bias (and
the folded input offset) reaches the epilogue, which still requantizes it (exact).

Output pixels run in blocks of ``ops.sparse_geom.BLOCK`` along a row (each weight and offset loaded
once per block) where the windows lie inside the image's width (``column_segments``); in a row whose
windows reach into the top/bottom padding only the kernel rows r_lo..r_hi that read the image run
(one contiguous range of the list). Windows reaching into the left/right padding run one at a time
over the taps (r, s) with a nonzero weight (``tptr``: channel → taps, ``tr``/``ts``: their kernel
row and column, ``tj``: tap → its first j), skipping the taps in the padding.

The input offset (-zp) is folded at compile time (``simd.fold_offset``: into the bias where it can
be, QUANT.md): acc = bias + offset·Σw + Σ x·w over the nonzero taps. Every skipped (padded) tap takes
back its share (``acc -= offset·w[j]`` for each of its nonzero weights), so each output equals the
dense kernel's Σ_{real taps} (x − zp)·w + bias exactly.

Which kernels take this variant is the cost model's choice (passes/sparse_weights.py, recorded on
``CompileContext.sparse_kernels``); every other group is declined (Unsupported) and lowers densely.
"""
from __future__ import annotations

import numpy as np

from ...codegen.templates import template
from ...ops.conv_geom import ConvGeom, conv_group
from ...ops.sparse_geom import BLOCK, column_segments
from .inplace import finish
from ..kernel import Epilogue, Kernel, flat_index
from ..simd import check_int8_anchor, fold_offset, offset_fold, require
from .sparse_dsp import conv2d_pairs, matmul_pairs


def chosen(context, anchor) -> str:
    """The layout the cost decision of this compilation chose for the anchor's weights
    (``CompileContext.sparse_kernels``: id → (weights Constant, reason, layout): ``lists`` here,
    ``pairs`` lower/conv/sparse_dsp.py); Unsupported when it chose the dense kernel."""
    w = anchor.args[1]
    entry = context.sparse_kernels.get(id(w)) if context is not None else None
    require(entry is not None and entry[0] is w, "dense weights, or the dense kernel is cheaper (--sparse)")
    return entry[2] if len(entry) > 2 else "lists"


def csr_lists(w: np.ndarray, tap_offset, channel_offset: int = 1) -> dict:
    """The nonzero lists of int8 weights ``w`` [K, KH, KW, Cg] (module doc): arrays ``val`` (int8),
    ``off`` (uint8, int16 or int32: the narrowest that holds every offset), ``rptr`` [K*KH + 1] (j of
    the first nonzero of kernel row r of channel k at k*KH + r), and the tap lists ``tptr`` [K+1],
    ``tr``, ``ts`` (the tap's r and s, uint8), ``tj`` [T+1]. ``tap_offset(r, s)``: input element
    offset of tap (r, s); ``channel_offset``: stride of c."""
    K, KH, KW, _ = w.shape
    val, off, rptr, tptr, tr, ts, tj = [], [], [], [0], [], [], []
    for k in range(K):
        for r in range(KH):
            rptr.append(len(val))
            for s in range(KW):
                cs = np.flatnonzero(w[k, r, s])
                if not cs.size:
                    continue
                tr.append(r)
                ts.append(s)
                tj.append(len(val))
                val.extend(int(v) for v in w[k, r, s, cs])
                off.extend(tap_offset(r, s) + int(c) * channel_offset for c in cs)
        tptr.append(len(tr))
    rptr.append(len(val))
    tj.append(len(val))
    top = max(off, default=0)
    odt = np.uint8 if top < 2 ** 8 else np.int16 if top < 2 ** 15 else np.int32
    idx = np.uint16 if len(val) < 2 ** 16 else np.int32
    return {"val": np.array(val or [0], np.int8), "off": np.array(off or [0], odt),
            "rptr": np.array(rptr, idx), "tptr": np.array(tptr, idx), "tr": np.array(tr or [0], np.uint8),
            "ts": np.array(ts or [0], np.uint8), "tj": np.array(tj, idx), "nnz": len(val)}


CTYPES = {np.dtype(np.uint8): "uint8_t", np.dtype(np.uint16): "uint16_t", np.dtype(np.int16): "int16_t",
          np.dtype(np.int32): "int32_t"}


def _refs(pool, lists: dict, key, names=("val", "off", "rptr")) -> dict:
    """C names of the ``names`` arrays of ``lists`` in the pool, ``otype`` / ``itype``: the C types of
    ``off`` and of the index arrays."""
    return {n: pool.ref(lists[n], key=("sparse", n, key)) for n in names} | \
        {"otype": CTYPES[lists["off"].dtype], "itype": CTYPES[lists["rptr"].dtype]}


def _outs(epi, out_shape, idx, dst=None) -> dict[int, list[tuple]]:
    """For blocks of BLOCK and of 1 pixels: per pixel i the (epilogue lines, value, destination) of
    ``acc<i>``; ``idx(i)``: the output index of pixel i; ``dst(i)``: its destination (default: out)."""
    outs = {}
    for nb in (BLOCK, 1):
        outs[nb] = []
        for i in range(nb):
            lines, value = epi.code(idx(i), acc=f"acc{i}")
            outs[nb].append((lines, value, dst(i) if dst else f"out[{flat_index(out_shape, idx(i))}]"))
    return outs


def _column(i: int) -> str:
    return f"ow + {i}" if i else "ow"


def conv2d_sparse(fn, anchor, epi, pool, name, order=None, context=None) -> Kernel:
    """The sparse conv kernel (module doc). ``order``: in place through a pixel buffer (the memory
    plan's ``pixel_buffer``, batch 1, int8 output): each pixel's K outputs go to a K-byte scratch and
    are stored after all of its reads, pixels in that order (ascending or descending)."""
    layout = chosen(context, anchor)
    check_int8_anchor(anchor)
    a = anchor.attrs
    require(a["data_layout"] == "NHWC" and a["kernel_layout"] == "OHWI" and a["input_layout"] is None,
            f"layout {a['data_layout']}/{a['kernel_layout']} (input {a['input_layout']}), not NHWC/OHWI")
    if layout == "pairs":
        return conv2d_pairs(fn, anchor, epi, pool, name, order)
    g = ConvGeom.of_call(anchor)
    w = anchor.args[1].value
    lists = csr_lists(w, lambda r, s: (r * g.dh * g.W + s * g.dw) * g.C)
    init = fold_offset(epi, anchor, offset_fold(w.reshape(g.K, -1), g.offset), pool)
    segments = column_segments(g)
    padded = not all(seg[3] for seg in segments)       # some windows reach into the left/right padding
    names = _refs(pool, lists, id(anchor), ("val", "off", "rptr") + (("tptr", "tr", "ts", "tj") if padded else ()))
    names["offset"] = g.offset
    if order is not None:
        require(g.N == 1 and fn.body.ty.dtype == "int8", "in place: batch 1, int8 output only")
    outs = _outs(epi, anchor.ty.shape, lambda i: ["n", "oh", _column(i), "k"],
                 (lambda i: f"tmp[{i * g.K} + k]" if i else "tmp[k]") if order else None)
    geo = vars(g) | {"span_h": (g.KH - 1) * g.dh + 1, "span_w": (g.KW - 1) * g.dw + 1, "padded": padded,
                     "block": BLOCK, "segments": segments, "row_pad": bool(g.pt or g.pb)}
    loops = template("conv2d/sparse.c.j2").module.conv(geo, names, init("k"), outs, order)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops,
                  ["int8_t *tmp = (int8_t *)scratch;"] if order else [], macs=g.N * g.macs,
                  scratch_bytes=min(BLOCK, g.OW) * g.K if order else 0)


def dw_plane_sparse(fn, name: str, pool, context) -> Kernel | None:
    """The sparse twin of the in-place depthwise ``dw_plane`` kernel (lower/conv/inplace.py: channel by
    channel through a padded plane in the scratch, border = zero point), or None when the cost decision
    did not choose the sparse kernel for this conv. Nonzero taps only; the input offset folded."""
    anchor, epi_ops, g = conv_group(fn)
    entry = context.sparse_kernels.get(id(anchor.args[1]))
    if entry is None or entry[0] is not anchor.args[1]:
        return None
    ph, pw = g.plane
    w = anchor.args[1].value
    lists = csr_lists(w, lambda r, s: r * g.dh * pw + s * g.dw)
    epi = Epilogue(fn, anchor, epi_ops, pool, fn.body.ty.ctype)
    init = fold_offset(epi, anchor, offset_fold(w.reshape(g.K, -1), g.offset), pool)
    names = _refs(pool, lists, id(anchor))
    outs = _outs(epi, anchor.ty.shape, lambda i: ["0", "oh", _column(i), "k"])
    loops = template("conv2d/sparse.c.j2").module.dw_plane(vars(g) | {"block": BLOCK}, names, ph, pw, init("k"), outs)
    return finish(Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, ["int8_t *plane = (int8_t *)scratch;"],
                         macs=g.macs, scratch_bytes=ph * pw), fn, anchor, epi_ops, "sparse")


def matmul_sparse(fn, anchor, epi, pool, name, order=None, context=None) -> Kernel:
    """The sparse fully-connected kernel: out[..., n] = Σ_k (a[..., k] − zp)·b[k, n] over the nonzero
    b[k, n] (a constant [K, N] int8 matrix), every leading axis of ``a`` a loop."""
    layout = chosen(context, anchor)
    require(order is None, "in place: the dense kernels")
    check_int8_anchor(anchor)
    x, b = anchor.args
    require(b.ty.ndim == 2 and x.ty.ndim >= 1, f"weights of shape {b.ty.shape}: only a 2-D constant matrix")
    if layout == "pairs":
        return matmul_pairs(fn, anchor, epi, pool, name)
    Kr, Nn = b.ty.shape
    wt = np.ascontiguousarray(b.value.T)                       # [N, K]
    lists = csr_lists(wt.reshape(Nn, 1, 1, Kr), lambda r, s: 0)
    offset = -int(anchor.attrs.get("input_zero_point", 0))
    init = fold_offset(epi, anchor, offset_fold(wt, offset), pool)
    names = _refs(pool, lists, id(anchor))
    out_shape = anchor.ty.shape
    dims = [f"o{i}" for i in range(len(out_shape) - 1)]
    outs = _outs(epi, out_shape, lambda i: dims + ["k"])
    base = flat_index(x.ty.shape, dims + ["0"]) if dims else "0"
    loops = template("conv2d/sparse.c.j2").module.rows(list(zip(dims, out_shape[:-1])), base, Nn, names,
                                                       init("k"), outs)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [],
                  macs=int(np.prod(out_shape)) * Kr)


__all__ = ["chosen", "conv2d_sparse", "csr_lists", "dw_plane_sparse", "matmul_sparse"]
