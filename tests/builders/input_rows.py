"""Shared by the --input-rows tests (host and qemu): the VWW-like model of examples/build_vww.py, the
pixel pattern of examples/rows/main.c, the two builds of that example (rows pushed / whole frame)."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rows" / "main.c"


def vww_bytes() -> bytes:
    """examples/build_vww.py's model (seed 0): a line-buffered fused chain reads its input."""
    spec = importlib.util.spec_from_file_location("build_vww", ROOT / "examples" / "build_vww.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build()


def pattern(shape) -> np.ndarray:
    """examples/rows/main.c pixel(i) = (i * 37 mod 251) - 125 as int8, row-major."""
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    return ((i * 37) % 251 - 125).astype(np.int8).reshape(shape)


def outputs(text: str) -> np.ndarray:
    """The int8 bytes of the example's 'output: ..' line."""
    m = re.search(r"^output:((?: [0-9a-f]{2})+) ?$", text, re.M)
    assert m, text
    return np.array([int(h, 16) for h in m.group(1).split()], np.uint8).view(np.int8)


def compile_both(model, target: str, gen: Path, rows: int):
    """(rows-pushed build dir, whole-frame build dir, their CompileResults): ``model`` compiled as
    ``model`` with --input-rows ``rows`` and without."""
    from tinyfuse.driver import compile_model
    pushed = compile_model(model, target=target, name="model", input_rows=rows)
    whole = compile_model(model, target=target, name="model")
    pushed.write(gen / "rows")
    whole.write(gen / "frame")
    return gen / "rows", gen / "frame", pushed, whole
