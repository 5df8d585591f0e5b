"""Activation skipping (``--skip-zero-activations``): int8 pointwise conv / fully connected kernels
that skip the MACs of input activations equal to the input zero point.

After a ReLU (or ReLU6) the int8 activations at the real value 0 are exactly the zero point, and a
product (x - zp) * w of such an input is 0, so leaving it out is exact. Per row (output pixel of a
1x1 stride-1 unpadded NHWC conv, or row of a fully connected layer), the kernel lists the groups of
4 inputs that are not all at the zero point (``codegen_templates/conv2d/skip_zero.c.j2``), then every
output channel pair accumulates over the listed groups only. Instructions then depend on the data:
``--wcet`` refuses the flag (driver.realtime_options).

Variants: ``skip_zero_dsp`` on targets with the DSP extension (SXTAB16 + SMLAD, the arm_dsp
feature), ``skip_zero`` (portable C) elsewhere. Groups the kernel does not handle (other ops, grouped
or strided convs, non-int8, an NCHW-read input, epilogue operands that do not flatten) get the usual
kernel: ``lower_skip_zero`` returns None.
"""
from __future__ import annotations

from ...codegen.templates import template
from ...ir import Function, Var
from ...ops.conv_geom import ConvGeom
from .blocks import conv_geometry
from ..kernel import Epilogue, Kernel, affine, flat_index, split_group
from ..matmul_arm import fc_geometry, transposed_weights
from ..registry import Unsupported
from ..simd import HEADERS, check_flat_operands

SKIP_OPS = ("qnn.conv2d", "qnn.matmul")


def lower_skip_zero(fn: Function, name: str, pool, dsp: bool, order: str | None = None) -> Kernel | None:
    """The activation-skipping kernel of group ``fn`` (``dsp``: the SMLAD form; strategies
    ``conv2d.skip_zero_dsp`` / ``conv2d.skip_zero`` / ``matmul.skip_zero*``), or None when the group is
    not an int8 pointwise conv / fully connected layer this kernel handles. ``order``: in place through a
    pixel buffer (rows in that order through an O-byte buffer), or None."""
    anchor, epilogue_ops = split_group(fn)
    if anchor is None or anchor.op not in SKIP_OPS or not isinstance(anchor.args[0], Var):
        return None
    epi = Epilogue(fn, anchor, epilogue_ops, pool, fn.body.ty.ctype)
    mark = pool.mark()
    try:
        rows, K, O, offset, wname, index = _geometry(anchor, epi, pool)
    except Unsupported:
        pool.rollback(mark)
        return None
    out_shape = anchor.ty.shape
    G = K // 4
    index_bytes = max(4, -(-2 * G // 4) * 4)
    tmp = f"((int8_t *)scratch + {index_bytes})" if order is not None else None

    def outs(o, nch):
        result = []
        for c in range(nch):
            idx = index("p", affine((str(o), 1), (str(c), 1)))
            lines, value = epi.code(idx, acc=f"a{c}")
            dst = f"{tmp}[{affine((str(o), 1), (str(c), 1))}]" if tmp else f"out[{flat_index(out_shape, idx)}]"
            result.append((f"a{c}", lines, value, dst))
        return result

    zp4 = ((-offset) & 0xFF) * 0x01010101
    loops = template("conv2d/skip_zero.c.j2").module.kernel(rows, K, G, O, zp4, offset, wname, dsp, outs, tmp,
                                                            order or "ascending")
    kernel = Kernel(name, [p.ty for p in fn.params], fn.body.ty, "  " + loops.strip().replace("\n", "\n  ") + "\n",
                    macs=rows * K * O, scratch_bytes=index_bytes + (O if tmp else 0),
                    variant="skip_zero_dsp" if dsp else "skip_zero", headers=list(HEADERS) if dsp else [])
    kernel.ops = [c.op for c in [anchor, *epilogue_ops]]
    kernel.group = fn.attrs.get("name", name)
    kernel.code = template("expr/kernel.c.j2").render(
        name=name, group=kernel.group, ops=kernel.ops, macs=kernel.macs, params=[p.ctype for p in kernel.params],
        out_ctype=kernel.out.ctype, decls=[], loops=kernel.loops, variant=kernel.variant if dsp else "ref",
        scratch=kernel.scratch_bytes)
    return kernel


def _geometry(anchor, epi, pool):
    """(rows, K, O, input offset, C name of the [O][K] weights, index(row, channel) -> output index)."""
    if anchor.op == "qnn.conv2d":
        g: ConvGeom = conv_geometry(anchor)
        if g.G != 1 or not g.is_pointwise or g.N != 1:
            raise Unsupported("not a batch-1 pointwise conv")
        check_flat_operands(epi, anchor.ty.shape, (1, 2))
        return (g.N * g.P, g.C, g.K, g.offset, pool.ref(anchor.args[1]),
                lambda p, o: ["0", "0", p, o])
    rows, K, N, offset = fc_geometry(anchor, epi)
    out_shape = anchor.ty.shape
    lead = ["0"] * (len(out_shape) - 2)
    return (rows, K, N, offset, transposed_weights(pool, anchor.args[1]),
            lambda p, o: lead + [p, o] if len(out_shape) >= 2 else [o])


__all__ = ["SKIP_OPS", "lower_skip_zero"]
