"""The bug-report cases of ../shared/models/cases (see its README and index.json): each case compiles,
runs and matches ``<case>.expected.npz`` within index.json's (absolute) tolerance. int8 cases with
TFLite fixed-point answers (``<output>_tflite_double`` / ``_single`` in .alt_refs.npz) must equal the
one for the rounding mode bit for bit."""
from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from tests.conftest import MODELS, compile_and_run, shared_or_skip

INDEX = MODELS / "cases" / "index.json"
CASES = {c["name"]: c for c in json.loads(INDEX.read_text())} if INDEX.exists() else {}


def is_int8(case: dict, expected) -> bool:
    dtypes = [dt for dt, _ in case["inputs"].values()] + [str(v.dtype) for v in expected.values()]
    return any(dt in ("int8", "uint8") for dt in dtypes)


@pytest.mark.parametrize("name", sorted(CASES) or ["<index.json missing>"])
def test_case_matches_expected(name, tmp_path):
    cases = shared_or_skip("models", "cases")
    case = CASES[name]
    expected = np.load(cases / f"{name}.expected.npz")
    model_path = cases / f"{name}.onnx"
    feeds = np.load(cases / f"{name}.inputs.npz")
    model = onnx.load(str(model_path))
    inits = {i.name for i in model.graph.initializer}
    inputs = [feeds[vi.name] for vi in model.graph.input if vi.name not in inits]
    outs, result = compile_and_run(str(model_path), inputs, tmp_path)
    assert [t.name for t in result.outputs] == case["outputs"]
    for t, out in zip(result.outputs, outs):
        ref = expected[t.name]
        assert out.shape == ref.shape, f"{name}/{t.name}: shape {out.shape}, expected {ref.shape}"
        err = float(np.max(np.abs(out.astype(np.float64) - ref.astype(np.float64))))
        assert err <= case["tolerance"], f"{name}/{t.name}: max abs diff {err:.3g} > tolerance {case['tolerance']}"
    alt = cases / f"{name}.alt_refs.npz"
    if is_int8(case, expected) and alt.exists():
        refs = np.load(alt)
        for rounding in ("double", "single"):
            keys = [f"{t.name}_tflite_{rounding}" for t in result.outputs]
            if not all(k in refs for k in keys):
                continue
            outs_r, _ = compile_and_run(str(model_path), inputs, tmp_path / rounding, rounding=rounding)
            for k, out in zip(keys, outs_r):
                assert np.array_equal(out, refs[k]), f"{name}: not bit-exact with {k}"
