"""The pass pipeline: one flat, named list, and ``run_pipeline`` runs it.

Every entry is ``(name, fn)`` with ``fn(module, options) -> module`` (``options``: the
``tinyfuse.options.CompileOptions`` of the compilation). ``--disable-pass NAME`` skips the entries
of that name, ``--dump-ir DIR`` writes the IR text after each one (``NN_<name>.txt``).
``wrap_kernels`` cannot be disabled (it is not in PASS_NAMES): lowering needs every op inside a
kernel Function, and after fuse_ops it changes nothing.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from ..errors import TinyfuseError
from ..ir import IRModule
from ..ir.printer import astext
from ..memory.oracle import ArenaOracle
from ..userdir import claim, write_atomic
from .check_overflow import check_overflow
from .convert_layout import convert_layout
from .eliminate_dead_code import eliminate_dead_code
from .fold_batchnorm import fold_batchnorm
from .fold_constant import fold_constant
from .fold_input_transpose import fold_input_transpose
from .fold_pad import fold_pad
from .fold_views import fold_views
from .fuse_horizontal import fuse_horizontal
from .fuse_ops import fuse_ops, wrap_kernels
from .legalize_qdq import legalize_qdq
from .poly_fuse import poly_fuse
from .qdq_layout import qdq_layout
from .ring_buffer import ring_buffer
from .sparse_weights import sparse_weights


def _without_options(pass_fn, **kwargs):
    """A pass that reads none of the options, as an entry ``fn(module, options)``."""
    def run(mod: IRModule, options) -> IRModule:
        return pass_fn(mod, **kwargs)
    run.__name__ = pass_fn.__name__
    return run


def _legalize_qdq(mod: IRModule, options) -> IRModule:
    return legalize_qdq(mod, rounding=options.rounding)


def _poly_fuse(mod: IRModule, options) -> IRModule:
    return poly_fuse(mod, options, ArenaOracle(options))


PASSES = [
    ("fold_constant", _without_options(fold_constant, keep_dequantize=True)),  # all-constant subgraphs
    ("fold_batchnorm", _without_options(fold_batchnorm)),        # BN into conv/matmul weights, else scale+shift
    ("legalize_qdq", _legalize_qdq),                             # DQ → float op → Q  becomes int8 qnn ops
    ("convert_layout", _without_options(convert_layout)),        # NCHW → NHWC inside, I/O layout kept
    ("qdq_layout", _without_options(qdq_layout)),                # layout transposes onto the int8 side of Q/DQ
    ("eliminate_dead_code", _without_options(eliminate_dead_code)),  # no-op reshapes/transposes/clips
    ("fold_constant", _without_options(fold_constant)),          # constants made by the passes above
    ("fold_pad", _without_options(fold_pad)),                    # explicit Pad/PAD into conv/pool padding
    ("fuse_horizontal", _without_options(fuse_horizontal)),      # siblings on one input (Q/K/V) → one op
    ("fold_views", _without_options(fold_views)),                # head split/merge as index maps of matmuls
    ("fold_input_transpose", fold_input_transpose),             # convs read an NCHW model input through its transpose
    ("fuse_ops", _without_options(fuse_ops)),                    # anchor + epilogue groups → Primitive Functions
    ("wrap_kernels", _without_options(wrap_kernels)),            # ops left outside a group: one Function each
    ("check_overflow", _without_options(check_overflow)),        # int32 accumulators in range, else a warning
    ("poly_fuse", _poly_fuse),                                   # conv groups → line-buffered chains (arena)
    ("ring_buffer", _without_options(ring_buffer)),              # state shifts → ring buffers (stateful models)
    ("sparse_weights", sparse_weights),                          # pruned int8 conv/FC kernels → sparse variant
]
ALWAYS_RUN = frozenset({"wrap_kernels"})
PASS_NAMES = sorted({n for n, _ in PASSES} - ALWAYS_RUN)


def run_pipeline(mod: IRModule, options, after: Callable[[str, IRModule], None] | None = None) -> IRModule:
    """Run PASSES in order on ``mod`` except those named in ``options.disabled_passes`` (TinyfuseError
    for a name that is not in PASS_NAMES). Seconds per pass go to ``options.context.timings``; the
    IR text to ``options.dump_dir`` when set; ``after(name, module)`` is called after each pass run."""
    unknown = set(options.disabled_passes) - set(PASS_NAMES)
    if unknown:
        raise TinyfuseError(f"unknown pass {sorted(unknown)}; passes are: {', '.join(PASS_NAMES)}")
    dump_dir, timings = options.dump_dir, options.context.timings
    runs = [(f"{i:02d}_{name}.txt", name, fn) for i, (name, fn) in enumerate(PASSES, 1)
            if name not in options.disabled_passes]
    if dump_dir:      # only files tinyfuse wrote there before, or new ones (tinyfuse.userdir)
        claim(dump_dir, ["00_input.txt", *(f for f, _, _ in runs)], "--dump-ir DIR")
        write_atomic(Path(dump_dir) / "00_input.txt", astext(mod))
    for dump, name, fn in runs:
        t0 = time.perf_counter()
        mod = fn(mod, options)
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - t0
        if dump_dir:
            write_atomic(Path(dump_dir) / dump, astext(mod))
        if after is not None:
            after(name, mod)
    return mod
