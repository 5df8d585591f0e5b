"""fold_pad on the SIMD targets (issue 14): the PyTorch-style int8 graphs of tests/builders/tflite_pad.py
(explicit PAD before VALID convs, asymmetric (0, 1) pads on the stem, NCHW input + TRANSPOSE, a PADV2
of -128 before a max pool) run under qemu with the folded padding and equal TFLM bit for bit, with
no pad kernel left."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tests.builders.tflite_pad import padded_max_pool, pytorch_style_block
from tests.conftest import tflm_run
from tests.target.conftest import require_tools

MODELS = {
    "block-nchw": (lambda: pytorch_style_block(0), (1, 3, 12, 12)),
    "block-nhwc-14": (lambda: pytorch_style_block(4, hw=14, c=5, nchw=False), (1, 14, 14, 5)),
    "maxpool": (lambda: padded_max_pool(1), (1, 13, 13, 4)),
}


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("name", list(MODELS))
def test_folded_pads_equal_tflm_on_target(name, target, tmp_path):
    require_tools(target)
    build, shape = MODELS[name]
    model = build()
    x = np.random.default_rng(7).integers(-128, 128, shape, dtype=np.int8)
    (want,) = tflm_run(model, [x])
    result = compile_model(model, target=target)
    assert not any(k.name.endswith("_pad") for k in result.kernels), [k.name for k in result.kernels]
    (got,) = run_target(build_target(result, target, tmp_path, [x]))
    np.testing.assert_array_equal(got, want, err_msg=f"{name} on {target}")
