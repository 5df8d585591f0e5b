"""The ``sparse`` variant of int8 ``qnn.conv2d`` (groups 1) and fully connected ``qnn.matmul`` on
arm_dsp targets (Cortex-M4/M7/M33): the SMLAD pair layout of ops/sparse_pairs.py, chosen per kernel by
passes/sparse_weights.py (the ``pairs`` layout of ``CompileContext.sparse_kernels``) and entered from
lower/conv/sparse.py.

Output pixels (fully connected: rows) run in blocks of BLOCK. Each pixel's column is widened once
into lane j of the block's column in the scratch (word w of lane j at w * BLOCK + j, so one pair's
BLOCK input words are one 16-byte row at a compile-time byte offset) as int16 x − zp (0 at a padded
tap, so padding is exact with accumulators starting at 0, as the dense im2col kernel of
lower/conv/blocks.py), followed by the cross-pair words; then per output channel one SMLAD (two
16×16 MACs, ``tf_smlad``) per kept weight pair and pixel, the pair's 8-byte entry (weight word, row
offset) loaded once per block. Zero pairs are never read; exact (int32 accumulation of the same
products as the dense kernel, QUANT.md). Blocks are widened before any of their stores, so the
in-place pixel-buffer orders hold.
"""
from __future__ import annotations

import numpy as np

from ...codegen.templates import template
from ...ops.conv_geom import ConvGeom
from ...ops.sparse_pairs import pair_cover
from ..kernel import Kernel, flat_index
from ..simd import HEADERS, check_flat_operands, require

BLOCK = 4          # output pixels per block: 4 accumulators, one weight word load per 4 SMLADs


def _names(pool, pc: dict, key) -> dict:
    """The pair layout's arrays in the constant pool (C names): ``ptr``, ``pairs`` ([weight word, byte
    offset of its column row] per kept pair), the cross-word element indices ``ca``/``cb``."""
    idt = np.uint16 if int(pc["ptr"][-1]) < 2 ** 16 else np.int32
    pairs = np.stack([pc["wval"], (pc["word"] * 4 * BLOCK).astype(np.int32)], axis=1).reshape(-1)
    names = {"ptr": pool.ref(pc["ptr"].astype(idt), key=("spair", "ptr", key)),
             "pairs": pool.ref(pairs, key=("spair", "pairs", key))}
    if pc["ncross"] and not pc["full_cross"]:
        half = pc["cross"] // 2 * 2 * BLOCK + pc["cross"] % 2        # int16 index in lane 0 of the column
        cdt = np.uint16 if half.max() < 2 ** 16 else np.int32
        names["ca"] = pool.ref(np.ascontiguousarray(half[:, 0]).astype(cdt), key=("spair", "ca", key))
        names["cb"] = pool.ref(np.ascontiguousarray(half[:, 1]).astype(cdt), key=("spair", "cb", key))
    return names


def _outs(epi, out_shape, lead: list[str], slot: int, nbs) -> dict[int, list[tuple]]:
    """Per block size nb: per pixel i the (epilogue lines, value, destination) of ``acc<i>``; pixel
    p + i sits at axis ``slot`` of the output (the other leading axes: ``lead``), channel k last."""
    outs = {}
    for nb in nbs:
        outs[nb] = []
        for i in range(nb):
            idx = list(lead) + ["k"]
            idx[slot] = f"p + {i}" if i else "p"
            lines, value = epi.code(idx, acc=f"acc{i}")
            outs[nb].append((lines, value, f"out[{flat_index(out_shape, idx)}]"))
    return outs


def _kernel(fn, name, pool, geo: dict, w2d: np.ndarray, anchor, epi, lead, slot, order) -> Kernel:
    """The kernel of the conv/matmul ``anchor`` with pixel geometry ``geo`` (ConvGeom fields, P pixels per
    batch) and weights ``w2d`` [K, R]; outputs at ``lead`` with the pixel at axis ``slot``."""
    pc = pair_cover(w2d)
    names = _names(pool, pc, id(anchor))
    geo = geo | {"R4": pc["R4"], "words": pc["words"], "ncross": pc["ncross"], "full_cross": pc["full_cross"], "block": BLOCK, "R": w2d.shape[1]}
    P = geo["P"]
    outs = _outs(epi, anchor.ty.shape, lead, slot, {min(BLOCK, P), P % BLOCK} - {0})
    loops = template("conv2d/sparse_dsp.c.j2").module.conv(geo, names, outs, order)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [],
                  macs=geo["N"] * P * geo["K"] * w2d.shape[1], scratch_bytes=4 * BLOCK * pc["words"],
                  headers=list(HEADERS))


def conv2d_pairs(fn, anchor, epi, pool, name, order=None) -> Kernel:
    """The pair-layout sparse conv (module doc) of an int8 NHWC/OHWI conv with groups 1; ``order``:
    in place through a pixel buffer (every read of a block precedes its stores)."""
    g = ConvGeom.of_call(anchor)
    require(g.G == 1, "grouped / depthwise conv: the portable sparse layout")
    shape = anchor.ty.shape
    if order is not None:
        require(g.N == 1 and fn.body.ty.dtype == "int8", "in place: batch 1, int8 output only")
    slot = 2 if g.OW > 1 or g.OH == 1 else 1
    if g.OH > 1 and g.OW > 1:
        check_flat_operands(epi, shape, (1, 2))
    w2d = anchor.args[1].value.reshape(g.K, g.reduction)
    geo = vars(g) | {"P": g.P, "N": g.N, "offset": g.offset, "padded": bool(g.pt or g.pb or g.pl or g.pr)}
    return _kernel(fn, name, pool, geo, w2d, anchor, epi, ["n", "0", "0"], slot, order)


def matmul_pairs(fn, anchor, epi, pool, name) -> Kernel:
    """The pair-layout sparse fully connected kernel: out[m, n] = Σ_k (a[m, k] − zp)·b[k, n] over the
    kept pairs of b's columns; the rows m (every leading axis, at most one longer than 1) in blocks."""
    x, b = anchor.args
    shape = anchor.ty.shape
    require(len(shape) >= 2, "a 1-D fully connected output: the portable sparse layout")
    lead = shape[:-1]
    M = int(np.prod(lead))
    long = [i for i, d in enumerate(lead) if d > 1]
    require(len(long) <= 1, f"rows over several axes {lead}: the portable sparse layout")
    Kr, Nn = b.ty.shape
    geo = {"N": 1, "P": M, "H": 1, "W": M, "C": Kr, "KH": 1, "KW": 1, "sh": 1, "sw": 1, "dh": 1, "dw": 1,
           "pt": 0, "pl": 0, "OW": M, "K": Nn, "offset": -int(anchor.attrs.get("input_zero_point", 0)),
           "padded": False}
    w2d = np.ascontiguousarray(b.value.T)
    return _kernel(fn, name, pool, geo, w2d, anchor, epi, ["0"] * len(lead), long[0] if long else 0, None)


__all__ = ["BLOCK", "conv2d_pairs", "matmul_pairs"]
