"""SPACE_TO_BATCH_ND → CONV_2D / DEPTHWISE_CONV_2D → BATCH_TO_SPACE_ND (TensorFlow's dilated conv)
compiles to one dilated conv kernel (frontend/tflite/dilated.py) whose output equals, bit for bit
(int8), TensorFlow Lite Micro running the same conv as one dilated CONV_2D / DEPTHWISE_CONV_2D, and
LiteRT's reference kernels running the three-operator chain (float: within float rounding). TFLM is
not run on the chain itself: its SPACE_TO_BATCH_ND pads with an uninitialised offset."""
from __future__ import annotations

import numpy as np
import pytest

from tests.builders.real_models import litert_run
from tests.builders.tflm_dilated import dilated_case
from tests.conftest import compile_and_run, require_programs, tflm_run

CASES = {
    "int8-conv-same-9x7-r2": dict(seed=0, dtype="int8", depthwise=False),
    "int8-dw-same-10x11-r3-relu": dict(seed=1, dtype="int8", depthwise=True, hw=(10, 11), rate=3, act="RELU"),
    "int8-conv-valid-12x9-r2": dict(seed=2, dtype="int8", depthwise=False, hw=(12, 9), padding="VALID"),
    "int8-dw-same-8x8-r4-k5": dict(seed=3, dtype="int8", depthwise=True, hw=(8, 8), rate=4, k=5),
    "f32-conv-same-9x7-r2": dict(seed=4, dtype="float32", depthwise=False),
    "f32-dw-valid-11x10-r3-relu6": dict(seed=5, dtype="float32", depthwise=True, hw=(11, 10), rate=3,
                                        padding="VALID", act="RELU6"),
}


def _run(case, tmp_path, name):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(case.chain)
    (got,), result = compile_and_run(str(path), case.inputs, tmp_path)
    return got, result


@pytest.mark.parametrize("case_id", list(CASES))
def test_chain_is_one_dilated_conv(case_id, tmp_path):
    require_programs("gcc")
    case = dilated_case(**CASES[case_id])
    got, result = _run(case, tmp_path, case_id)
    ops = [op for k in result.kernels for op in k.ops]
    assert not {"transpose", "nn.pad"} & set(ops), f"{case_id}: the chain was not folded: {ops}"
    assert len(result.kernels) == 1, [k.ops for k in result.kernels]
    (want,) = litert_run(tmp_path / f"{case_id}.tflite", case.inputs)
    assert got.shape == want.shape == case.out_shape, (got.shape, want.shape, case.out_shape)
    if CASES[case_id]["dtype"] == "int8":
        (direct,) = tflm_run(case.direct, case.inputs)
        assert np.array_equal(direct, want), f"{case_id}: test-of-the-test: TFLM dilated conv != LiteRT chain"
        assert len(np.unique(want)) > 4, f"{case_id}: degenerate output"
        assert np.array_equal(got, want), f"{case_id}: {int((got != want).sum())}/{got.size} differ"
    else:
        scale = float(np.max(np.abs(want)))
        assert float(np.max(np.abs(got - want))) <= 1e-5 * scale, f"{case_id}: max |diff| {np.max(np.abs(got - want))}"
