"""Two small int8 models that share ``-o DIR`` in the output-directory tests (codegen/output.py):
"kws" (fully connected 16 -> 8) and "vww" (3x3 conv 4 -> 8 on 6x6), both ONNX QDQ one-op models
(tests/builders/qdq.py). Both need ``tinyfuse_quant.h``; built for an Arm DSP target also
``tinyfuse_simd.h`` and ``tinyfuse_requant_arm.h``, so the shared headers are exercised."""
from __future__ import annotations

import numpy as np
import onnx

from tests.builders.qdq import conv2d, fully_connected

OUTDIR_MODELS = ("kws", "vww")


def outdir_model(kind: str) -> onnx.ModelProto:
    """The "kws" or "vww" model of the module doc (fixed seed: the same model every call)."""
    rng = np.random.default_rng(0)
    if kind == "kws":
        return fully_connected((1, 16), rng.integers(-20, 20, (8, 16)), rng.integers(-100, 100, 8), (0.05, 0), 0.01,
                               (0.1, 0))
    if kind == "vww":
        return conv2d((1, 6, 6, 4), rng.integers(-20, 20, (8, 3, 3, 4)), rng.integers(-100, 100, 8), (0.05, 0),
                      [0.01] * 8, (0.1, 0))
    raise ValueError(f"no outdir model {kind!r}; choose one of {OUTDIR_MODELS}")
