"""int8 matmul / fully connected with constant weights for Arm cores with SIMD (arm_dsp, arm_mve).

Rows of the input play the part of the conv's pixels: blocks of 2 rows x 2 output columns over the
same isl outer nest as the conv kernels (conv/blocks.py blocked_statements), the input read in place and the input offset
folded into the accumulators' start values (exact: every product of a matmul is real).
"""
from __future__ import annotations

import numpy as np

from ..codegen.templates import template
from ..ir import Constant
from ..poly import loops_to_c
from .conv.blocks import block_inits, blocked_statements, mac_bounds, short_output
from .conv.dsp import WIDE_CHANNELS, wide_direct, wide_unroll
from . import group_knobs
from .kernel import Kernel, affine, flat_index
from .simd import HEADERS, check_flat_operands, fold_offset, offset_fold, require, widen_weights


def fc_geometry(anchor, epi):
    """(rows, K, N, offset) of an int8 qnn.matmul with constant [K][N] weights; Unsupported otherwise."""
    a, b = anchor.args
    require(a.ty.dtype == "int8", f"input dtype {a.ty.dtype}, not int8")
    require(isinstance(b, Constant) and b.ty.dtype == "int8" and b.ty.ndim == 2,
            "weights are not a constant int8 matrix")
    out_shape = anchor.ty.shape
    K, N = b.ty.shape
    if len(out_shape) >= 2:
        check_flat_operands(epi, out_shape, tuple(range(len(out_shape) - 1)))
    return int(np.prod(out_shape[:-1])), K, N, -anchor.attrs.get("input_zero_point", 0)


def row_outputs(epi, out_shape, r: str, o: str, npix: int, nch: int, acc_prefix: str = "a",
                short=None) -> list[tuple]:
    """(accumulator, epilogue lines, value, destination) per output of a block of rows x columns;
    ``short(acc, k)``: the short requantize's value instead of the epilogue (conv.blocks.short_output)."""
    outs = []
    lead = ["0"] * (len(out_shape) - 2)
    for i in range(npix):
        for j in range(nch):
            col = affine((o, 1), (str(j), 1))
            idx = lead + [affine((r, 1), (str(i), 1)), col] if len(out_shape) >= 2 else [col]
            acc = f"{acc_prefix}{i}{j}"
            lines, value = ([], short(acc, col)) if short else epi.code(idx, acc=acc)
            outs.append((f"{acc_prefix}{i}{j}", lines, value, f"out[{flat_index(out_shape, idx)}]"))
    return outs


def transposed_weights(pool, b) -> str:
    """The [N][K] copy of the weights, shared with the portable kernel (same pool key)."""
    return pool.ref(np.ascontiguousarray(np.swapaxes(b.value, -1, -2)), key=("T", id(b)))


def _blocked_fc(fn, anchor, epi, pool, name, order, variant_template: str, emit, och=lambda K: 2,
                short: bool = False, weights=transposed_weights) -> Kernel:
    """Fully connected as 2-row x ``och(K)``-column output blocks; ``emit(t, x, w, inits, outputs, npix,
    nch, K)`` prints one block with the variant's micro-kernel (the only part DSP and Helium differ in).
    ``short``: use the short exact requantize where it applies (conv.blocks.short_output)."""
    require(order is None, "no in-place matmul kernel")
    R, K, N, offset = fc_geometry(anchor, epi)
    b = anchor.args[1]
    out_shape = anchor.ty.shape
    t = template(variant_template).module
    wname = weights(pool, b)
    init = fold_offset(epi, anchor, offset_fold(b.value.T, offset), pool)
    value, headers = short_output(epi, anchor, pool, init, mac_bounds(b.value.T, -128, 127)) if short else (None, [])

    def block(n, r, o, npix, nch):
        x = f"p0 + {affine((r, K))}" if r != "0" else "p0"
        w = f"{wname} + {affine((o, K))}" if o != "0" else wname
        return emit(t, x, w, block_inits(init, o, nch), row_outputs(epi, out_shape, r, o, npix, nch, short=value),
                    npix, nch, K)

    macros, loops = loops_to_c(blocked_statements(1, R, N, None, block, och=och(K)))
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, [], macros,
                  macs=R * N * K, headers=[*HEADERS, *headers])


def matmul_dsp(fn, anchor, epi, pool, name, order=None) -> Kernel:
    R, K_, N, _ = fc_geometry(anchor, epi)
    w16 = False
    if K_ % 4 == 0 and wide_direct(K_ // 4):       # the int16 pre-widened weights (tuning knob)
        group_knobs.offer("weights", group_knobs.WEIGHTS)
        w16 = group_knobs.widened()

    def emit(t, x, w, inits, outs, npix, nch, K):   # SMLAD over 4 taps at a time, then the K % 4 tail
        if wide_direct(K // 4):                     # 2 rows x 4 columns (conv.dsp.WIDE_CHANNELS)
            tail = t.wide_tail(npix, nch, K % 4, K, K) if K % 4 else None
            return t.wide_block(npix, nch, K // 4, x, K, w, K, inits, outs, tail, *wide_unroll(K // 4, npix, nch, R, N),
                                w16=w16)
        tail = t.tail_direct(npix, nch, K % 4, K, K) if K % 4 else None
        return t.block(npix, nch, K // 4, x, K, w, K, inits, outs, tail)
    weights = (lambda pool, b: pool.ref(widen_weights(b.value.T), key=("fc_w16", id(b)))) if w16 \
        else transposed_weights
    return _blocked_fc(fn, anchor, epi, pool, name, order, "matmul/arm_dsp.c.j2", emit,
                       lambda K: WIDE_CHANNELS if wide_direct(K // 4) else 2, short=True, weights=weights)


def matmul_mve(fn, anchor, epi, pool, name, order=None) -> Kernel:
    def emit(t, x, w, inits, outs, npix, nch, K):   # tail-predicated vmladavaq over all K
        return t.block(npix, nch, K, x, K, w, K, inits, outs)
    return _blocked_fc(fn, anchor, epi, pool, name, order, "matmul/arm_mve.c.j2", emit)
