"""nn.pad → two statements over disjoint parts of the output box: S_fill on the border (a union of
boxes, written as a disjunction isl splits into loops) and S_copy on the interior, which reads
x[out - before]. Negative pads crop: the interior just starts/ends inside x. nn.border_pad (edge,
reflect, wrap) is one copy statement through per-axis source-index tables."""
from ..codegen.templates import c_literal, template
from ..ir import get_op
from ..poly import Statement
from ..poly.isl_helpers import box
from .kernel import Kernel, affine, flat_index
from .registry import lowering


@lowering("nn.pad")
def lower_pad(fn, ctx) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    (x,) = anchor.args
    out, pw = anchor.ty, anchor.attrs["pad_width"]
    t = template("pad/ref.c.j2").module
    dims = tuple(f"o{i}" for i in range(out.ndim))
    lo = [max(b, 0) for b, _ in pw]
    hi = [min(n, b + d) for n, (b, _), d in zip(out.shape, pw, x.ty.shape)]
    ob = box(dims, out.shape)
    inner = " and ".join(f"{l} <= {d} < {h}" for d, l, h in zip(dims, lo, hi))
    border = [f"{d} < {l}" for d, l in zip(dims, lo) if l > 0] + \
             [f"{d} >= {h}" for d, h, n in zip(dims, hi, out.shape) if h < n]
    value = c_literal(anchor.attrs["pad_value"], out.dtype)

    def fill(**c):
        return t.S_fill(f"out[{flat_index(out.shape, [c[d] for d in dims])}]", value)

    def copy(**c):
        o = [c[d] for d in dims]
        src = [affine((e, 1), (str(-b), 1)) for e, (b, _) in zip(o, pw)]
        return t.S_copy(f"out[{flat_index(out.shape, o)}]", f"p0[{flat_index(x.ty.shape, src)}]")

    stmts = [Statement("S_copy", dims, f"{ob} and {inner}", ("1",) + dims, copy)]
    if border:
        stmts.insert(0, Statement("S_fill", dims, f"{ob} and ({' or '.join(border)})", ("0",) + dims, fill))
    macros, loops = ctx.loops_to_c(stmts)
    return Kernel(name, [p.ty for p in fn.params], out, loops, [], macros)


@lowering("nn.border_pad")
def lower_border_pad(fn, ctx) -> Kernel:
    """out[o] = x[src_0[o_0], ...]: a const source-index table in flash per padded axis
    (ops/pad.py ``border_source``), the output coordinate itself on the others."""
    anchor, epi, pool, name = ctx.unpack(fn)
    (x,) = anchor.args
    out = anchor.ty
    t = template("pad/ref.c.j2").module
    dims = tuple(f"o{i}" for i in range(out.ndim))
    tables = [None if s is None else pool.ref(s, key=("border_pad", anchor.attrs["mode"], i, id(anchor)))
              for i, s in enumerate(get_op(anchor.op).sources(x.ty.shape, anchor.attrs))]

    def copy(**c):
        o = [c[d] for d in dims]
        src = [e if tab is None else f"{tab}[{e}]" for e, tab in zip(o, tables)]
        lines, value = epi.code(o, acc=f"{epi.param_names[id(x)]}[{flat_index(x.ty.shape, src)}]")
        assert not lines, "nn.border_pad groups carry no epilogue"
        return t.S_copy(f"out[{flat_index(out.shape, o)}]", value)

    macros, loops = ctx.loops_to_c([Statement("S_copy", dims, box(dims, out.shape), dims, copy)])
    return Kernel(name, [p.ty for p in fn.params], out, loops, [], macros)
