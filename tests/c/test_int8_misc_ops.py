"""MaxPool, ReduceMean, Sub and broadcasting Mul in ONNX QDQ form (issue 14) run as int8 kernels with
TFLM's arithmetic: tinyfuse's C on the QDQ twin equals TFLite Micro's one-op model bit for bit (TFLM is
the exact oracle; tests/builders/tflm_int8_misc.py), no kernel (de)quantizes in float, and
``tinyfuse run --json`` reports real_oracle_holds (every int8 kernel within 1 LSB of real arithmetic)."""
from __future__ import annotations

import functools
import json
import warnings

import numpy as np
import onnx
import pytest

from tests.builders.tflm_cases import pool_case
from tests.builders.tflm_int8_misc import binary_case, mean_case, qdq_max_pool_requant, sub_const_case
from tests.conftest import compile_and_run, ort_run, require_programs
from tinyfuse.cli import main

SPECS = {
    "max_pool-1x8x10x3-f2-s2-VALID": functools.partial(pool_case, "max_pool", 0, (1, 8, 10, 3), (2, 2), (2, 2)),
    "max_pool-1x7x5x5-f3-s2-SAME-RELU": functools.partial(pool_case, "max_pool", 1, (1, 7, 5, 5), (3, 3), (2, 2),
                                                          "SAME", "RELU"),
    "mean-1x6x7x5-hw-keep": functools.partial(mean_case, 0, (1, 6, 7, 5), (1, 2), True),
    "mean-1x6x7x5-hw": functools.partial(mean_case, 1, (1, 6, 7, 5), (1, 2)),
    "mean-2x9x6-last": functools.partial(mean_case, 2, (2, 9, 6), (2,)),
    "mean-1x4x5x3-c": functools.partial(mean_case, 3, (1, 4, 5, 3), (3,), True),
    "sub-1x7x5x3": functools.partial(binary_case, "sub", 0, (1, 7, 5, 3), (1, 7, 5, 3)),
    "sub-2x4x6x6-RELU": functools.partial(binary_case, "sub", 1, (2, 4, 6, 6), (2, 4, 6, 6), "RELU"),
    "sub-1x3x4x5-RELU6": functools.partial(binary_case, "sub", 6, (1, 3, 4, 5), (1, 3, 4, 5), "RELU6"),
    "sub-1x5x7x6-bcast-1x1x1x6": functools.partial(binary_case, "sub", 2, (1, 5, 7, 6), (1, 1, 1, 6)),
    "sub-1x5x7x6-minus-const-1x1x1x6": functools.partial(sub_const_case, 7, (1, 5, 7, 6), (1, 1, 1, 6)),
    "mul-1x5x7x6-bcast-1x1x1x6": functools.partial(binary_case, "mul", 3, (1, 5, 7, 6), (1, 1, 1, 6)),
    "mul-1x5x7x6-bcast-1x5x1x1-RELU": functools.partial(binary_case, "mul", 4, (1, 5, 7, 6), (1, 5, 1, 1), "RELU"),
    "mul-3x1x4-bcast-1x5x1": functools.partial(binary_case, "mul", 5, (3, 1, 4), (1, 5, 1)),
}


@functools.lru_cache(maxsize=None)
def get_case(case_id):
    return SPECS[case_id]()


@pytest.mark.parametrize("case_id", list(SPECS))
def test_qdq_twin_matches_tflm_within_lsb(case_id):
    """Test-of-the-test: onnxruntime on the QDQ twin (float op, half-to-even quantize) is within 2 LSB of
    TFLM (exact for max pool), so the twin and the TFLM model describe the same computation."""
    c = get_case(case_id)
    (ort,) = ort_run(c.model, c.feeds)
    assert ort.dtype == np.int8 and ort.shape == c.want.shape, (ort.dtype, ort.shape, c.want.shape)
    d = np.abs(ort.astype(np.int32) - c.want.astype(np.int32))
    assert d.max() <= (0 if c.kind == "max_pool" else 2), f"{case_id}: ORT vs TFLM max {int(d.max())} LSB"


@pytest.mark.parametrize("case_id", list(SPECS))
def test_tinyfuse_bit_exact_with_tflm(case_id, tmp_path):
    c = get_case(case_id)
    assert len(np.unique(c.want)) > 2, f"{case_id}: degenerate TFLM output {np.unique(c.want)}"
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "legalize_qdq")     # "... runs in float" is the bug this guards
        (got,), result = compile_and_run(c.model, c.inputs, tmp_path)
    assert got.dtype == np.int8 and got.shape == c.want.shape, (got.dtype, got.shape, c.want.shape)
    d = np.abs(got.astype(np.int32) - c.want.astype(np.int32))
    assert d.max() == 0, f"{case_id}: {int((d > 0).sum())}/{d.size} differ, max {int(d.max())} LSB ({c.desc})"
    ops = [op for k in result.kernels for op in k.ops]
    assert not {"qnn.quantize", "qnn.dequantize"} & set(ops), f"{case_id}: float islands: {ops}"
    if c.kind == "max_pool":
        assert "qnn.requantize" not in ops, ops          # same scale in and out: pure data movement


def _run_json(model, path, capsys) -> dict:
    onnx.save(model, str(path))
    assert main(["run", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("case_id", [i for i in SPECS if not i.startswith("max_pool")])
def test_run_reports_real_oracle_holds(case_id, tmp_path, capsys):
    require_programs("gcc")
    got = _run_json(get_case(case_id).model, tmp_path / f"{case_id}.onnx", capsys)
    assert got["real_oracle_holds"] is True and got["outputs_match"] is True, got


def test_max_pool_same_scale_has_no_arithmetic_and_requantizes_otherwise(tmp_path, capsys):
    """Same (scale, zp): pure data movement, nothing for the real oracle to check (None, not True);
    a different output scale: one requantize, checked by the oracle."""
    require_programs("gcc")
    got = _run_json(get_case("max_pool-1x8x10x3-f2-s2-VALID").model, tmp_path / "same.onnx", capsys)
    assert got["real_oracle_holds"] is None and got["outputs_match"] is True, got
    got = _run_json(qdq_max_pool_requant((1, 8, 10, 3), (0.05, 3), (0.07, -20)), tmp_path / "requant.onnx", capsys)
    assert got["real_oracle_holds"] is True and got["outputs_match"] is True, got
