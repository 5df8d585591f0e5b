"""ONNX Pad-19 edges against onnxruntime (compiled → gcc → run): the ``axes`` input (negative axes, axes out
of order), negative pads (crops) in every mode — edge, reflect and wrap crop first, then pad — and int64,
int32 and bool tensors with an exact constant_value."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper

from tests.conftest import compile_and_run, ort_run

CASES = {  # id: (x, mode, pads, axes, constant_value)
    "edge_crop_and_pad": (np.arange(20, dtype=np.float32).reshape(4, 5), "edge", [-1, 2, 1, -2], None, None),
    "reflect_last_axis": (np.arange(15, dtype=np.float32).reshape(3, 5) * 0.5, "reflect", [2, -1], [-1], None),
    "wrap_axes_reversed": (np.arange(24, dtype=np.float32).reshape(2, 3, 4), "wrap", [-1, 1, 2, -1], [2, 1], None),
    "edge_only_crops": (np.arange(12, dtype=np.float32).reshape(3, 4), "edge", [0, -1, -1, 0], None, None),
    "int64_exact_value": (np.arange(12, dtype=np.int64).reshape(3, 4) * 3**30, "constant", [1, -1, -2, 2], [0, -1],
                          np.int64(2**60 + 3)),
    "int32_negative": (np.arange(12, dtype=np.int32).reshape(3, 4) - 6, "constant", [-1, 2], [1], np.int32(-7)),
    "bool_value_true": (np.array([[True, False], [False, False]]), "constant", [1, 0, -1, 1], None, np.bool_(True)),
    "int64_edge": (np.arange(6, dtype=np.int64).reshape(2, 3) - 2**35, "edge", [1, -1, 0, 2], None, None),
}


def _model(x, mode, pads, axes, value):
    ty = helper.np_dtype_to_tensor_dtype(x.dtype)
    inits = [numpy_helper.from_array(np.asarray(pads, np.int64), "pads")]
    ins = ["X", "pads"]
    if value is not None or axes is not None:
        ins.append("" if value is None else "value")
        if value is not None:
            inits.append(numpy_helper.from_array(np.asarray(value).reshape(()), "value"))
    if axes is not None:
        ins.append("axes")
        inits.append(numpy_helper.from_array(np.asarray(axes, np.int64), "axes"))
    graph = helper.make_graph([helper.make_node("Pad", ins, ["Y"], mode=mode)], "g",
                              [helper.make_tensor_value_info("X", ty, x.shape)],
                              [helper.make_tensor_value_info("Y", ty, None)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


@pytest.mark.parametrize("case", list(CASES))
def test_pad_vs_onnxruntime(tmp_path, case):
    x, mode, pads, axes, value = CASES[case]
    model = _model(x, mode, pads, axes, value)
    (got,), _ = compile_and_run(model, [x], tmp_path)
    (ref,) = ort_run(model, {"X": x})
    assert got.dtype == ref.dtype and got.shape == ref.shape, (got.dtype, got.shape, ref.dtype, ref.shape)
    np.testing.assert_array_equal(got, ref)
