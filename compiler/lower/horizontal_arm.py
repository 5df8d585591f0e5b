"""horizontal groups on SIMD targets (arm_dsp, arm_mve): each branch runs the target's variant of its
own anchor (e.g. the arm_dsp qnn.matmul micro-kernel) over its own weights, one after the other in
the one horizontal kernel, each writing its packed range of the output:

    static void k2_fused_horizontal(const int8_t *p0, int8_t *out)
    {
      {  /* branch 0 */  int8_t *const out = tf_out0 (= out + offset_0);  <the branch's variant loops> }
      {  /* branch 1 */  ... }
    }

The portable kernel (lower/horizontal.py) instead runs one loop nest over the concatenated weights;
on a core with SIMD the branches' micro-kernels are faster than that nest, and x stays in SRAM
between them. A branch without such a variant makes the whole group decline (→ portable kernel).
"""
from __future__ import annotations

from ..strategy import choose_isa
from .kernel import Kernel, LowerCtx, split_group
from .registry import IMPLEMENTATIONS, Unsupported, implements


def _indent(text: str, n: int) -> list[str]:
    return [" " * n + line.strip("\n") if line.strip() else "" for line in text.splitlines()]


def horizontal_simd(fn, ctx, isa: str) -> Kernel:
    """The horizontal kernel whose branches run their ``isa`` implementation (``strategy.choose_isa``:
    the strategy ``horizontal.<isa>`` accepted the group only when every branch has one)."""
    anchor, _ = split_group(fn)
    br = anchor.attrs["branches"]
    epi = ctx.epilogue(fn)
    names = {id(p): epi.param_names[id(a)] for p, a in zip(br.fn.params, anchor.args)}
    ctype = fn.body.ty.ctype
    body, macros, headers, ops = [], [], [], ["horizontal"]
    macs = scratch = 0
    for j, (part, (offset, _)) in enumerate(zip(br.parts, br.segments())):
        a, chain = split_group(part)
        impl = choose_isa(part, ctx.options, isa)
        if impl is None:
            raise Unsupported(f"no {isa} kernel for {a.op}")
        k = IMPLEMENTATIONS[impl.name](part, LowerCtx(ctx.options, ctx.pool, f"{ctx.name}_b{j}", knobs=ctx.knobs,
                                                     offers=ctx.offers, slice=ctx.slice, param_names=names))
        body += [f"{{  /* branch {j}: {' -> '.join(c.op for c in [a, *chain])} */",
                 f"  {ctype} *const tf_out{j} = out + {offset};", "  {", f"    {ctype} *const out = tf_out{j};",
                 *(f"    {d}" for d in k.decls), *_indent(k.loops, 2), "  }", "}"]
        macros += [m for m in k.macros.splitlines() if m not in macros]
        headers += [h for h in k.headers if h not in headers]
        ops += [c.op for c in [a, *chain]] if j == 0 else [c.op for c in chain]
        macs += k.macs
        scratch = max(scratch, k.scratch_bytes)
    kernel = Kernel(ctx.name, [p.ty for p in fn.params], fn.body.ty, "\n".join(body), [], "\n".join(macros),
                    macs=macs, scratch_bytes=scratch, headers=headers)
    kernel.ops = ops
    return kernel


@implements("horizontal.arm_mve")
def horizontal_mve(fn, ctx) -> Kernel:
    return horizontal_simd(fn, ctx, "arm_mve")


@implements("horizontal.arm_dsp")
def horizontal_dsp(fn, ctx) -> Kernel:
    return horizontal_simd(fn, ctx, "arm_dsp")


__all__ = ["horizontal_dsp", "horizontal_mve", "horizontal_simd"]
