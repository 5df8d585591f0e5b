"""The MediaPipe float models of ../shared/models/real (BlazeFace, hand landmarks, selfie segmentation)
compile as shipped (float16 weights behind
DEQUANTIZE, folded at compile time) and match LiteRT (reference kernels) on the host: every output
within 1e-4 x max |LiteRT|. The small float16/sparse models of tests/builders/tflite_weights.py
run through gcc against LiteRT as well."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host
from tests.builders.real_models import FLOAT_REAL, assert_outputs_match, image_inputs, litert_run
from tests.builders.tflite_weights import conv_fp16_model, fc_weights_model
from tests.conftest import shared_or_skip


@pytest.mark.parametrize("model", list(FLOAT_REAL))
def test_real_float_model_matches_litert(model, tmp_path):
    path = shared_or_skip("models", "real", f"{model}.tflite")
    result = compile_model(path)
    assert all("qnn.dequantize" not in k.ops for k in result.kernels)     # float16 weights folded
    exe = build_host(result, tmp_path)
    for i, x in enumerate(image_inputs(model, result.inputs[0].shape)):
        got = run_host(exe, result, [x])
        assert_outputs_match(got, litert_run(path, [x]), f"{model} input {i}")


def test_fp16_and_sparse_weights_in_c_match_litert(tmp_path):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((16, 24)).astype(np.float32)
    w[rng.random(w.shape) < 0.7] = 0
    bias, x = rng.standard_normal(16).astype(np.float32), rng.standard_normal((2, 24)).astype(np.float32)
    sparse = dict(order=(0, 1, 2, 3), formats=("DENSE", "CSR", "DENSE", "DENSE"), block_map=(0, 1), block_size=(4, 4))
    wc, bc = rng.standard_normal((8, 3, 3, 5)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    xc = rng.standard_normal((1, 9, 7, 5)).astype(np.float32)
    for k, (model, inp) in enumerate([(fc_weights_model(w, bias, sparse=sparse), x), (conv_fp16_model(xc.shape, wc, bc), xc)]):
        path = tmp_path / f"m{k}.tflite"
        path.write_bytes(model)
        result = compile_model(path)
        got = run_host(build_host(result, tmp_path / f"b{k}"), result, [inp])
        assert_outputs_match(got, litert_run(path, [inp]), f"model {k}")
