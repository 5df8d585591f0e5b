"""Decomposed layers (frontend/onnx/patterns.py) end to end: the generated C of every spelling equals
onnxruntime on the original graph, and the layer is one fused op of the kernel that computes it
(GELU, SiLU in the matmul's epilogue; LayerNorm and Softmax their own kernels)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.builders.graph_models import DECOMPOSED_CASES as CASES, FUSED, decomposed
from tests.conftest import assert_close_to, compile_and_run, ort_run

EPILOGUE = {"gelu", "silu"}


@pytest.mark.parametrize("kind,form", CASES, ids=[f"{k}-{f}" for k, f in CASES])
def test_fused_layer_equals_onnxruntime(tmp_path, kind, form):
    model = decomposed(kind, form)
    x = np.random.default_rng(11).standard_normal((1, 5, 8)).astype(np.float32)
    (out,), result = compile_and_run(model, [x], tmp_path)
    assert_close_to(out, ort_run(model, {"inp": x})[0])
    ops = [k.ops for k in result.kernels]
    fused = [o for o in ops if FUSED[kind] in o]
    assert len(fused) == 1, ops
    if kind in EPILOGUE and form != "sig_shared":     # a shared Sigmoid keeps the matmul output in memory
        assert fused[0][0] == "nn.matmul", ops
