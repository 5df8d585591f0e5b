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

from .kernel import Epilogue, Kernel, split_group
from .registry import VARIANTS, Unsupported, variant


def _indent(text: str, n: int) -> list[str]:
    return [" " * n + line.strip("\n") if line.strip() else "" for line in text.splitlines()]


def _per_branch(vname: str):
    def lower(fn, anchor, epi, pool, name, order=None) -> Kernel:
        if order is not None:
            raise Unsupported("no in-place horizontal kernel")
        br = anchor.attrs["branches"]
        if br.parts is None:
            raise Unsupported("element-wise siblings run in the portable kernel")
        names = {id(p): epi.param_names[id(a)] for p, a in zip(br.fn.params, anchor.args)}
        if names.get(id(br.fn.params[0])) != "p0":
            raise Unsupported("the shared input is not the kernel's first parameter")
        ctype = fn.body.ty.ctype
        body, macros, headers, ops = [], [], [], ["horizontal"]
        macs = scratch = 0
        for j, (part, (offset, _)) in enumerate(zip(br.parts, br.segments())):
            a, chain = split_group(part)
            lowerings = [f for v, f in VARIANTS.get(a.op, []) if v == vname]
            if not lowerings:
                raise Unsupported(f"no {vname} kernel for {a.op}")
            e = Epilogue(part, a, chain, pool, part.body.ty.ctype)
            e.param_names = names
            k = lowerings[0](part, a, e, pool, f"{name}_b{j}")
            body += [f"{{  /* branch {j}: {' -> '.join(c.op for c in [a, *chain])} */",
                     f"  {ctype} *const tf_out{j} = out + {offset};", "  {", f"    {ctype} *const out = tf_out{j};",
                     *(f"    {d}" for d in k.decls), *_indent(k.loops, 2), "  }", "}"]
            macros += [m for m in k.macros.splitlines() if m not in macros]
            headers += [h for h in k.headers if h not in headers]
            ops += [c.op for c in [a, *chain]] if j == 0 else [c.op for c in chain]
            macs += k.macs
            scratch = max(scratch, k.scratch_bytes)
        kernel = Kernel(name, [p.ty for p in fn.params], fn.body.ty, "\n".join(body), [], "\n".join(macros),
                        macs=macs, scratch_bytes=scratch, headers=headers)
        kernel.ops = ops
        return kernel
    return lower


variant("arm_mve", "horizontal")(_per_branch("arm_mve"))
variant("arm_dsp", "horizontal")(_per_branch("arm_dsp"))
