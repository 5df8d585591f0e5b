"""The jinja2 environment over ``codegen_templates/`` and C literal printing."""
from __future__ import annotations

import math
from functools import lru_cache

import jinja2
import numpy as np

from ..resources import template_dir

TEMPLATE_DIR = template_dir()


@lru_cache(maxsize=None)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["cfloat"] = c_literal
    env.filters["clit"] = c_literal          # {{ v | clit(dtype) }}
    return env


def template(name: str) -> jinja2.Template:
    return environment().get_template(name)


def c_literal(v, dtype: str = "float32") -> str:
    """A C literal of ``v`` as ``dtype``: float32 with 9 significant digits and an ``f`` suffix,
    float64 (C double) with 17 and no suffix (each an exact round trip), INFINITY for infinities;
    integers as they are."""
    if dtype.startswith("float"):
        double = dtype == "float64"
        v = float(v) if double else float(np.float32(v))
        if math.isinf(v):
            return "INFINITY" if v > 0 else "-INFINITY"
        if math.isnan(v):
            return "NAN"
        s = f"{v:.17g}" if double else f"{v:.9g}"
        if "e" not in s and "." not in s:
            s += ".0"
        return s if double else s + "f"
    v = int(v)
    if dtype == "int32" and v == -2**31:
        return "(-2147483647 - 1)"
    return str(v)


def c_array_body(arr: np.ndarray, per_line: int = 12) -> str:
    """Comma-separated literals of ``arr`` (flattened), wrapped."""
    flat = arr.reshape(-1)
    if flat.dtype == np.float64:
        items = [c_literal(x, "float64") for x in flat.tolist()]
    elif flat.dtype.kind == "f":
        items = [c_literal(x) for x in flat.astype(np.float32).tolist()]
    else:
        items = [str(int(x)) for x in flat.tolist()]      # bool arrays too: 0 / 1
    return ",\n  ".join(", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line))
