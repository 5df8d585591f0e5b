"""Deliberately wrong generated C, for the tests that check ``run --per-layer`` finds the layer
that is wrong: :func:`corrupt_kernel` edits one kernel's function in a CompileResult's ``<name>.c``
(``result.files``, before the sources are written and built)."""
from __future__ import annotations

import re


def corrupt_kernel(result, index: int, statement: str = "out[0] = (int8_t)(out[0] ^ 1);") -> str:
    """Append ``statement`` to the body of kernel ``index``'s C function (its output parameter is
    ``out``), so that kernel alone computes a wrong value; the kernel's name. The default flips the
    lowest bit of the kernel's first int8 output element: exactly one element, 1 LSB off."""
    name = result.steps[index].kernel.name
    c_file = f"{result.name}.c"
    code = result.files[c_file]
    head = re.search(rf"^.*\bstatic void {re.escape(name)}\([^;{{]*\)\n{{", code, re.M)   # the definition
    assert head is not None, f"no definition of {name} in {c_file}"
    depth = 1
    for brace in re.compile(r"[{}]").finditer(code, head.end()):     # to the brace closing the body
        depth += 1 if brace.group() == "{" else -1
        if depth == 0:
            break
    end = brace.start()
    result.files[c_file] = code[:end] + f"  {statement}   /* corrupted by the test */\n" + code[end:]
    return name
