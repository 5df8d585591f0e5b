"""LiteRT (``ai-edge-litert``, the TFLite interpreter) as the float oracle of a .tflite model that
TFLite Micro refuses: MediaPipe's float models with float16 weights behind DEQUANTIZE (TFLM's
DEQUANTIZE takes int8/int16/uint8 inputs only).

It runs with the reference op resolver (``OpResolverType.BUILTIN_REF``: TFLite's
``reference_ops``, no XNNPACK delegate, no optimized kernels that reassociate sums), one thread, so
its float arithmetic is the plain loops the generated C also runs. The package is imported lazily
(an optional ``test`` dependency); missing, or refusing the model, it raises
:class:`OracleUnavailable` with a one-line reason.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .litert_custom import CUSTOM_CODE, rewrite_transpose_conv_bias

LITERT = "LiteRT"


def litert_outputs(tflite_path, inputs, unavailable: type[Exception]) -> list[np.ndarray]:
    """LiteRT's outputs (in the subgraph's output order) of the .tflite file ``tflite_path`` for
    ``inputs`` (in the subgraph's input order, dtypes and shapes of the model's inputs). A model with
    MediaPipe's custom Convolution2DTransposeBias runs as a copy with TRANSPOSE_CONV in its place
    (harness/litert_custom.py). Raises ``unavailable`` (the caller's OracleUnavailable) with one line
    when LiteRT is missing or fails."""
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:
        raise unavailable("the ai-edge-litert package is not installed (pip install ai-edge-litert)") from None
    data = Path(tflite_path).read_bytes()
    if CUSTOM_CODE.encode() in data:
        data = rewrite_transpose_conv_bias(data) or data
    try:
        it = Interpreter(model_content=data, num_threads=1,
                         experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        it.allocate_tensors()
        for d, x in zip(it.get_input_details(), inputs):
            it.set_tensor(d["index"], np.ascontiguousarray(x, dtype=d["dtype"]).reshape(d["shape"]))
        it.invoke()
        return [it.get_tensor(d["index"]).copy() for d in it.get_output_details()]
    except Exception as e:      # LiteRT raises ValueError/RuntimeError with multi-line messages
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        raise unavailable(f"LiteRT: {lines[0][:200] if lines else type(e).__name__}") from None
