"""TFLite IF and WHILE folded at compile time (frontend/tflite/control.py): the taken branch inlined,
a counter loop unrolled, every output equal to TFLite Micro running the same model (its IF / WHILE
kernels invoke the subgraphs); a condition or trip count decided at run time, and a loop longer than
the unroll bound, are one error line naming the operator."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tests.builders.tflm_control import Q, if_model, recursive_if_model, while_model
from tests.conftest import compile_and_run, require_programs, tflm_run


def _equal_tflm(model, inputs, tmp_path):
    require_programs("gcc")
    out, result = compile_and_run(model, inputs, tmp_path)
    ref = tflm_run(model, inputs)[0]
    assert np.array_equal(np.asarray(out[0]).reshape(ref.shape), ref)
    return result


@pytest.mark.parametrize("cond", ["true", "false", "less"])
@pytest.mark.parametrize("q", [None, Q], ids=["float32", "int8"])
def test_if_with_compile_time_condition_equals_tflm(tmp_path, cond, q):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 6)).astype(np.float32) if q is None else \
        rng.integers(-40, 40, (1, 6)).astype(np.int8)
    _equal_tflm(if_model(cond, q), [x], tmp_path)
    if q is None:        # hand-computed: the branches differ (then x + x + 1, else x * 3)
        y = tflm_run(if_model(cond, q), [x])[0]
        assert np.array_equal(y, (x + x) + np.float32(1) if cond != "false" else x * np.float32(3))


@pytest.mark.parametrize("n", [0, 1, 5, 64])
def test_while_with_static_trip_count_unrolls_and_equals_tflm(tmp_path, n):
    x = np.random.default_rng(n).standard_normal((1, 4)).astype(np.float32)
    result = _equal_tflm(while_model(n), [x], tmp_path)
    assert "while" not in " ".join(k.kind for k in result.kernels)


@pytest.mark.parametrize("model,words", [
    (lambda: if_model("input"), ["IF v1", "condition depends on a run-time input"]),
    (lambda: while_model(5, runtime_n=True), ["WHILE v1", "trip count is known at compile time"]),
    (lambda: while_model(65), ["WHILE v1", "more than 64 iterations"]),
    (recursive_if_model, ["IF v1", "subgraph 1 calls itself"]),
])
def test_runtime_control_flow_is_one_error_line(model, words):
    with pytest.raises(TinyfuseError) as e:
        compile_model(model())
    assert "\n" not in str(e.value) and all(w in str(e.value) for w in words)


def test_folded_output_of_unknown_type_is_one_error_line():
    """Found by mutating the WHILE model: a cond subgraph whose LESS output has an element type numpy does
    not know (a damaged file) was a TypeError in the shape folding."""
    from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
    m = me.read(while_model(3))
    m.subgraphs[1].operators[0].outputs[0]._fb.type = 124
    with pytest.raises(TinyfuseError) as e:
        compile_model(bytes(m.build()))
    assert "\n" not in str(e.value) and "element type type 124" in str(e.value), str(e.value)
