"""qnn.softmax: a hand-written template (no isl), like the float softmax.

Output (1/256, -128), TFLite's only int8 softmax output: TFLM's fixed-point kernel, integer only
(parameters from quant.softmax_params, helpers in tinyfuse/quant.h); the int32 exps of one row live
in the kernel's scratch (4·length bytes, planned in the arena like a tensor live during the call). Any other output quantization
(ONNX QDQ models may choose one, onnxruntime 1/255): integer only too, two 256-entry int64 tables per
input/output scale in flash (quant.softmax_table_params), a 64-bit sum and an exact rounding division.
int8 → int16 (output (1/65536, -32768)): the fixed-point kernel with 16 output bits; int16 → int16: TFLM's
table kernel (softmax/ref_int16.c.j2)."""
import numpy as np

from .. import quant
from ..codegen.templates import template
from ..ops.qnn_int16 import softmax16_params, softmax_tables
from .kernel import Kernel
from .realtime import WCET_HEADER
from .registry import lowering


def _int16_softmax(fn, ctx, anchor) -> Kernel:
    """int16 → int16: TFLM's table kernel (ops/qnn_int16.softmax_int16), its two tables in flash."""
    a, pool = anchor.attrs, ctx.pool
    shape, axis = anchor.ty.shape, a["axis"] % anchor.ty.ndim
    exp_lut, recip_lut = softmax_tables()
    m, shift = softmax16_params(a["in_scale"])
    loops = template("softmax/ref_int16.c.j2").render(
        outer=int(np.prod(shape[:axis])), length=shape[axis], inner=int(np.prod(shape[axis + 1:])),
        multiplier=m, shift=shift, exp_lut=pool.ref(exp_lut, key="softmax16_exp"),
        recip_lut=pool.ref(recip_lut, key="softmax16_recip"))
    return Kernel(ctx.name, [p.ty for p in fn.params], anchor.ty, loops, [])


@lowering("qnn.softmax")
def lower_qsoftmax(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    a = anchor.attrs
    if anchor.args[0].ty.dtype == "int16":
        return _int16_softmax(fn, ctx, anchor)
    shape, axis = anchor.ty.shape, a["axis"] % anchor.ty.ndim
    wide = anchor.ty.dtype == "int16"        # int8 → int16: the fixed-point kernel with 16 output bits
    fixed = wide or quant.softmax_is_fixed_point(a["in_scale"], a["out_scale"], a["out_zero_point"])
    wcet = fixed and ctx.options.wcet     # the table path divides in 64 bits: data-dependent, reported
    if fixed:
        params = quant.softmax_params(a["in_scale"])
    else:
        t = quant.softmax_table_params(a["in_scale"], a["out_scale"], shape[axis])
        params = {k: pool.ref(t[k], key=("softmax", k, float(np.float32(a["in_scale"])),
                                         float(np.float32(a["out_scale"])), t["frac_bits"]))
                  for k in ("exp_table", "out_table")}
    loops = template("softmax/ref_int8.c.j2").render(
        outer=int(np.prod(shape[:axis])), length=shape[axis], inner=int(np.prod(shape[axis + 1:])),
        fixed=fixed, **params, **({"wcet": True} if wcet else {}), **({"wide": True} if wide else {}),
        out_zero_point=a["out_zero_point"])
    return Kernel(name, [p.ty for p in fn.params], anchor.ty, loops, [],
                  scratch_bytes=4 * shape[axis] if fixed else 0,   # the fixed path's int32 exps of one row
                  headers=[WCET_HEADER] if wcet else [])
