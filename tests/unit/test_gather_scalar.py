"""A 0-d index: ONNX Gather-13's output has rank r - 1 + q, q = 0 for a scalar index (the axis goes);
the frontend's IR shapes against onnxruntime's. The compiled C: tests/c/test_ops_misc.py::test_gather."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

from tinyfuse.errors import TinyfuseError
from tinyfuse.frontend import from_onnx
from tinyfuse.ir import Constant
from tests.builders import model_bytes
from tests.conftest import ort_run

N = helper.make_node


def test_constant_keeps_a_0d_value_0d():
    c = Constant(np.array(3, np.int64))
    assert c.value.shape == () and c.ty.shape == () and not c.value.flags.writeable


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -4])
@pytest.mark.parametrize("index", [0, 1, -1])
def test_scalar_index_drops_the_axis(axis, index):
    shape = (2, 3, 4, 5)
    model = onnx.load_from_string(model_bytes([N("Gather", ["X", "i"], ["Y"], axis=axis)], {"X": list(shape)},
                                              inits={"i": np.array(index, np.int64)}))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    (want,) = ort_run(model, {"X": x})
    assert want.ndim == 3
    assert from_onnx(model).main.body.ty.shape == want.shape


def test_gather_to_a_scalar_is_one_error():
    """A rank-1 input and a 0-d index make a 0-d tensor, which tinyfuse has no C form for."""
    model = onnx.load_from_string(model_bytes([N("Gather", ["X", "i"], ["Y"], name="g")], {"X": [5]},
                                              inits={"i": np.array(2, np.int64)}))
    with pytest.raises(TinyfuseError, match="node 'g' \\(Gather, opset 13\\).*scalar"):
        from_onnx(model)
