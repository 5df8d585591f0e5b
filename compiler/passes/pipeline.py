"""The pass pipeline: one flat, named list. ``--disable-pass NAME`` skips an entry, ``--dump-ir DIR``
writes the IR text after each one (``NN_<name>.txt``)."""
from __future__ import annotations

import dataclasses
import time
from functools import partial
from pathlib import Path

from ..errors import TinyfuseError
from ..ir import IRModule
from ..ir.printer import astext
from .check_overflow import check_overflow
from .convert_layout import convert_layout
from .eliminate_dead_code import eliminate_dead_code
from .fold_batchnorm import fold_batchnorm
from .fold_constant import fold_constant
from .fold_views import fold_views
from .fuse_horizontal import fuse_horizontal
from .fuse_ops import fuse_ops
from .io_quant import io_quantization
from .legalize_qdq import legalize_qdq
from .poly_fuse import poly_fuse

PASSES = [
    ("fold_constant", partial(fold_constant, keep_dequantize=True)),  # all-constant subgraphs
    ("fold_batchnorm", fold_batchnorm),            # BN into conv/matmul weights, else scale+shift
    ("legalize_qdq", legalize_qdq),                # DQ → float op → Q  becomes int8 qnn ops
    ("convert_layout", convert_layout),            # NCHW → NHWC inside, I/O layout kept
    ("eliminate_dead_code", eliminate_dead_code),  # no-op reshapes/transposes/clips
    ("fold_constant", fold_constant),              # constants made by the passes above
    ("fuse_horizontal", fuse_horizontal),          # siblings on one input (Q/K/V) → one horizontal op
    ("fold_views", fold_views),                    # head split/merge as index maps of batched matmuls
    ("fuse_ops", fuse_ops),                        # anchor + epilogue groups → Primitive Functions
    ("check_overflow", check_overflow),            # int32 accumulators provably in range, else a warning
    ("poly_fuse", poly_fuse),                      # conv groups → line-buffered chains where the arena drops
]
PASS_NAMES = sorted({n for n, _ in PASSES})


def run_pipeline(mod: IRModule, disabled=(), dump_dir: str | Path | None = None,
                 timings: dict | None = None, rounding: str = "double", target=None,
                 scratch_bytes: int | None = None) -> IRModule:
    """Run PASSES in order except those named in ``disabled``. fuse_ops, when disabled, still wraps
    each op in its own kernel Function (lowering needs that form). ``rounding`` ('double', TFLM's
    default, or 'single') is the requantization rounding legalize_qdq bakes into int8 kernels.
    ``target`` and ``scratch_bytes`` (default: the target's) steer poly_fuse."""
    if rounding not in ("double", "single"):
        raise TinyfuseError(f"--rounding must be 'double' or 'single', got '{rounding}'")
    unknown = set(disabled) - set(PASS_NAMES)
    if unknown:
        raise TinyfuseError(f"unknown pass {sorted(unknown)}; passes are: {', '.join(PASS_NAMES)}")
    mod = dataclasses.replace(mod, io_quant=io_quantization(mod.main))   # before legalize_qdq folds the scales
    if dump_dir:
        Path(dump_dir).mkdir(parents=True, exist_ok=True)
        (Path(dump_dir) / "00_input.txt").write_text(astext(mod))
    for i, (name, fn) in enumerate(PASSES, 1):
        t0 = time.perf_counter()
        if name == "fuse_ops":
            mod = fuse_ops(mod, enabled=name not in disabled)
        elif name in disabled:
            continue
        elif name == "legalize_qdq":
            mod = legalize_qdq(mod, rounding=rounding)
        elif name == "poly_fuse":
            mod = poly_fuse(mod, target=target, scratch_bytes=scratch_bytes)
        else:
            mod = fn(mod)
        if timings is not None:
            timings[name] = timings.get(name, 0.0) + time.perf_counter() - t0
        if dump_dir:
            (Path(dump_dir) / f"{i:02d}_{name}.txt").write_text(astext(mod))
    return mod
