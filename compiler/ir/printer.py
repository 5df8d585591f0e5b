"""Relay-like text form of a Function, one binding per line:

    %3 = nn.conv2d(%2, meta[w0], strides=[1, 1], padding=[1, 1, 1, 1]) /* ty=Tensor[(1, 25, 5, 64), float32] */
"""
from __future__ import annotations

import numpy as np

from .expr import Call, Constant, Function, IRModule, Tuple, Var, post_order


def _attr(v) -> str:
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(_attr(x) for x in v) + "]"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def astext(func: Function | IRModule, indent: str = "") -> str:
    """Print a Function (fused groups print as nested ``fn`` blocks)."""
    if isinstance(func, IRModule):
        func = func.main
    names: dict[int, str] = {}
    lines = []
    for i, p in enumerate(func.params):
        names[id(p)] = f"%{p.name}" if p.name.isidentifier() else f"%p{i}"
    n_const = 0
    for node in post_order(func.body):
        if isinstance(node, Var):
            continue
        if isinstance(node, Constant):
            if node.value.size == 1:
                names[id(node)] = f"{node.value.reshape(()).item():g}"
            else:
                names[id(node)] = f"meta[c{n_const}]"
                n_const += 1
            continue
        args = ", ".join(names[id(a)] for a in (node.args if isinstance(node, Call) else node.fields))
        var = f"%{len(lines)}"
        if isinstance(node, Tuple):
            lines.append(f"{indent}  {var} = ({args})")
        else:
            attrs = "".join(f", {k}={_attr(v)}" for k, v in node.attrs.items() if v is not None
                            and not isinstance(v, np.ndarray))
            if isinstance(node.op, Function):
                inner = astext(node.op, indent + "    ")
                lines.append(f"{indent}  {var} = {inner.strip()}({args}) /* ty={node.ty} */")
            else:
                lines.append(f"{indent}  {var} = {node.op}({args}{attrs}) /* ty={node.ty} */")
        names[id(node)] = var
    params = ", ".join(f"{names[id(p)]}: {p.ty}" for p in func.params)
    head = "fn" + (" /* Primitive, " + func.attrs.get("name", "") + " */" if func.attrs.get("Primitive") else "")
    return f"{indent}{head}({params}) {{\n" + "\n".join(lines) + f"\n{indent}  {names[id(func.body)]}\n{indent}}}\n"
