"""qnn.softmax: a hand-written template (no isl), like the float softmax.

Output (1/256, -128), TFLite's only int8 softmax output: TFLM's fixed-point kernel, integer only
(parameters from quant.softmax_params, helpers in tinyfuse/quant.h). Any other output quantization
(ONNX QDQ models may choose one) keeps the float fallback of QSoftmax, in double with exp()."""
import numpy as np

from .. import quant
from ..codegen.templates import template
from .kernel import Kernel
from .registry import lowering


def _double(v: float) -> str:
    return repr(float(np.float32(v)))  # the float32 scale, exactly, as a double literal


@lowering("qnn.softmax")
def lower_qsoftmax(fn, anchor, epi, pool, name) -> Kernel:
    a = anchor.attrs
    shape, axis = anchor.ty.shape, a["axis"] % anchor.ty.ndim
    fixed = quant.softmax_is_fixed_point(a["in_scale"], a["out_scale"], a["out_zero_point"])
    params = quant.softmax_params(a["in_scale"]) if fixed else {}
    loops = template("softmax/ref_int8.c.j2").render(
        outer=int(np.prod(shape[:axis])), length=shape[axis], inner=int(np.prod(shape[axis + 1:])),
        fixed=fixed, **params,
        in_scale=_double(a["in_scale"]), out_scale=_double(a["out_scale"]), out_zero_point=a["out_zero_point"])
    return Kernel(name, [p.ty for p in fn.params], anchor.ty, loops, [])
