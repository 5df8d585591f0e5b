"""nn.log_softmax / qnn.log_softmax, nn.l2_normalize / qnn.l2_normalize and nn.l2_pool2d: hand-written
loops (codegen_templates/norm_ext/ref.c.j2) over x viewed as [outer][length][inner] around the axis
(the last one for L2 normalization), the pool over NHWC. The int8 kernels are TFLM's integer
arithmetic (ops/logsoftmax.py, ops/l2norm.py) with the helpers of tinyfuse/fixedpoint.h."""
from __future__ import annotations

import math

from ..codegen.templates import template
from ..ops.logsoftmax import log_softmax_params
from .kernel import Kernel
from .reduction import around
from .registry import lowering

FIXEDPOINT_HEADER = "tinyfuse_fixedpoint.h"


def _kernel(fn, name, anchor, loops, headers=()) -> Kernel:
    return Kernel(name, [p.ty for p in fn.params], anchor.ty, str(loops), [], headers=list(headers))


@lowering("nn.log_softmax", "qnn.log_softmax")
def lower_log_softmax(fn, ctx) -> Kernel:
    anchor, _, _, name = ctx.unpack(fn)
    t = template("norm_ext/ref.c.j2").module
    view = around(anchor.ty.shape, anchor.attrs["axis"])
    if anchor.op == "nn.log_softmax":
        return _kernel(fn, name, anchor, t.log_softmax(**view))
    p = log_softmax_params(anchor.attrs["in_scale"])
    return _kernel(fn, name, anchor, t.qlog_softmax(**view, p=p), [FIXEDPOINT_HEADER])


@lowering("nn.l2_normalize", "qnn.l2_normalize")
def lower_l2_normalize(fn, ctx) -> Kernel:
    anchor, _, _, name = ctx.unpack(fn)
    t = template("norm_ext/ref.c.j2").module
    shape = anchor.ty.shape
    outer, length = math.prod(shape[:-1]), shape[-1]
    if anchor.op == "nn.l2_normalize":
        return _kernel(fn, name, anchor, t.l2_normalize(outer, length))
    return _kernel(fn, name, anchor, t.ql2_normalize(outer, length, anchor.attrs["in_zero_point"]), [FIXEDPOINT_HEADER])


@lowering("nn.l2_pool2d")
def lower_l2_pool(fn, ctx) -> Kernel:
    anchor, _, _, name = ctx.unpack(fn)
    (x,) = anchor.args
    n, h, w, c = x.ty.shape
    _, oh, ow, _ = anchor.ty.shape
    (kh, kw), (sh, sw), (pt, pl, _, _) = anchor.attrs["pool_size"], anchor.attrs["strides"], anchor.attrs["padding"]
    loops = template("norm_ext/ref.c.j2").module.l2_pool(n, h, w, c, oh, ow, kh, kw, sh, sw, pt, pl)
    return _kernel(fn, name, anchor, loops)
