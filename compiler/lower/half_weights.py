"""--weights-dtype float16: float32 constants stored in flash as IEEE binary16 bit patterns
(``const uint16_t``) and converted at each read by ``tf_h2f`` (runtime_c/include/tinyfuse/half.h,
exact: every binary16 value is a binary32 value). Halves the flash of float weights; the outputs
equal those of the float32 build whose constants were rounded to binary16 (round to nearest even,
numpy ``astype(float16)``).

A constant is converted only where every use in the kernels' C is a subscript ``name[...]`` (the
read is wrapped as ``tf_h2f(name[...])``) and every value is finite in binary16 (|v| ≤ 65504);
others stay float32 (e.g. a table passed by pointer). int8/int32 constants are never touched.
"""
from __future__ import annotations

import re

import numpy as np

HALF_HEADER = "tinyfuse_half.h"
HALF_MAX = 65504.0


def _subscripts(code: str, name: str) -> list[tuple[int, int]] | None:
    """(start, end) of every ``name[...]`` in ``code`` (brackets balanced), or None when ``name``
    is used otherwise (a pointer, an address)."""
    spans = []
    for m in re.finditer(rf"\b{re.escape(name)}\b", code):
        i = m.end()
        if i >= len(code) or code[i] != "[":
            return None
        depth = 0
        for j in range(i, len(code)):
            depth += {"[": 1, "]": -1}.get(code[j], 0)
            if depth == 0:
                spans.append((m.start(), j + 1))
                break
        else:
            return None
    return spans


def _wrap(code: str, spans: list[tuple[int, int]]) -> str:
    for s, e in sorted(spans, reverse=True):
        code = f"{code[:s]}tf_h2f({code[s:e]}){code[e:]}"
    return code


def half_weights(pool, kernels) -> list[str]:
    """Convert the float32 constants of ``pool`` (a lower.ConstPool) read by ``kernels`` (lower.Kernel,
    their ``code`` rewritten in place and ``headers`` given HALF_HEADER) to binary16 bit patterns.
    Returns the names of the constants converted."""
    converted = []
    for i, (name, arr) in enumerate(pool.arrays):
        if arr.dtype != np.float32 or not np.all(np.abs(arr) <= HALF_MAX):
            continue
        uses = {id(k): _subscripts(k.code, name) for k in kernels}
        if any(u is None for u in uses.values()):
            continue
        for k in kernels:
            if uses[id(k)]:
                k.code = _wrap(k.code, uses[id(k)])
                if HALF_HEADER not in k.headers:
                    k.headers.append(HALF_HEADER)
        pool.arrays[i] = (name, arr.astype(np.float16).view(np.uint16))
        converted.append(name)
    return converted
