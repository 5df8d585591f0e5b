"""nn.layer_norm / qnn.layer_norm (+ epilogue) → isl statements: the leading axes are the outer loops
(one row each), the normalized axes the inner ones; per row, in schedule order:

    float:  S_init, S_sum (inner), S_mean, S_var (inner), S_rstd, S_out (inner, + epilogue)
            (shifted by the row's first element, compensated sums: codegen_templates/layer_norm/ref.c.j2)
    int8:   S_init, S_sum (inner: Σd, Σd²),               S_row,  S_out (inner, + epilogue)
            (the arithmetic, exact vs the reference: compiler/ops/norm.py)

A row is read completely before any of its outputs is written, and each output only over its own
input element, so the kernel may run in place.
"""
import numpy as np

from ..codegen.templates import c_literal, template
from ..ir import Constant
from ..poly import Statement, loops_to_c
from ..poly.isl_helpers import box
from .kernel import Kernel, broadcast_index, flat_index
from .registry import lowering


def _double(v: float) -> str:
    return repr(float(v))


@lowering("nn.layer_norm", "qnn.layer_norm")
def lower_layer_norm(fn, anchor, epi, pool, name) -> Kernel:
    x, gamma, beta = anchor.args
    a = anchor.attrs
    axis, shape = a["axis"], x.ty.shape
    int8 = anchor.op == "qnn.layer_norm"
    t = template(f"layer_norm/{'ref_int8' if int8 else 'ref'}.c.j2").module
    outer = tuple(f"o{i}" for i in range(axis)) or ("z",)
    inner = tuple(f"o{i}" for i in range(axis, len(shape)))
    outer_box = box(outer, shape[:axis] or (1,))
    row_box = f"{outer_box} and {box(inner, shape[axis:])}"
    length = int(np.prod(shape[axis:]))

    def index(c) -> list[str]:
        return [c[d] for d in (outer if axis else ()) + inner]

    def load(e, c, norm_shape) -> str:
        src = pool.ref(e) if isinstance(e, Constant) else epi.param_names[id(e)]
        return f"{src}[{broadcast_index(e.ty.shape, norm_shape, [c[d] for d in inner])}]"

    def x_at(c) -> str:
        return f"{epi.param_names[id(x)]}[{flat_index(shape, index(c))}]"

    def store(**c):
        lines, value = epi.code(index(c))
        out = f"out[{flat_index(anchor.ty.shape, index(c))}]"
        g, b = load(gamma, c, shape[axis:]), load(beta, c, shape[axis:])
        if int8:
            return t.S_out(x_at(c), a["in_zero_point"], length, g, b, a["out_zero_point"], lines, value, out)
        return t.S_out(x_at(c), g, b, lines, value, out)

    z = ("0",) * len(inner)
    if int8:
        body = [("S_init", False, lambda **c: t.S_init()),
                ("S_sum", True, lambda **c: t.S_sum(x_at(c), a["in_zero_point"])),
                ("S_row", False, lambda **c: t.S_row(length, _double(a["scale"]), _double(a["scale_sq"]),
                                                     _double(a["eps_l2"]))),
                ("S_out", True, store)]
        decls = ["int32_t s1;", "int64_t s2;", "float r;", "int8_t acc;"]
    else:
        eps = c_literal(a["epsilon"])
        first = {d: "0" for d in inner}       # the row's first element: the shift
        body = [("S_init", False, lambda **c: t.S_init(x_at({**c, **first}))),
                ("S_sum", True, lambda **c: t.S_sum(x_at(c))),
                ("S_mean", False, lambda **c: t.S_mean(c_literal(length))),
                ("S_var", True, lambda **c: t.S_var(x_at(c))),
                ("S_rstd", False, lambda **c: t.S_rstd(c_literal(length), eps)),
                ("S_out", True, store)]
        decls = ["float shift;", "float mean;", "float var;", "float comp;", "float rstd;", "float acc;"]
    stmts = [Statement(sname, outer + inner if per_elem else outer, row_box if per_elem else outer_box,
                       outer + (str(i),) + (inner if per_elem else z), fbody)
             for i, (sname, per_elem, fbody) in enumerate(body)]
    macros, loops = loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], fn.body.ty, loops, decls, macros, macs=x.ty.size)
