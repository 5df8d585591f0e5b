"""float16 / bfloat16 (ONNX FLOAT16 / BFLOAT16) model inputs and outputs end to end: the C API keeps
the types (uint16_t bit patterns), the graph computes in float32 (frontend/onnx/half.py), every
output is compared with onnxruntime bit for bit where the result is one rounding of an exact float32
value (Cast, Max, Abs, Neg, a constant product), within one float16 ulp elsewhere."""
from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from tests.conftest import compile_and_run, ort_run

N = helper.make_node
H, F, B = TensorProto.FLOAT16, TensorProto.FLOAT, TensorProto.BFLOAT16
OUTPUTS = {  # name: (node, elem type)
    "add": (N("Add", ["X", "Y"], ["add"]), H), "max": (N("Max", ["X", "Y"], ["max"]), H),
    "neg": (N("Neg", ["X"], ["neg"]), H), "scaled": (N("Mul", ["X", "W"], ["scaled"]), H),
    "wide": (N("Cast", ["X"], ["wide"], to=F), F), "half": (N("Cast", ["Z"], ["half"], to=H), H),
    "rounded": (N("Cast", ["half"], ["rounded"], to=F), F),
}
BRAIN = (N("Cast", ["Z"], ["brain"], to=B), B)   # onnxruntime's python API returns no bfloat16: ml_dtypes is its oracle
# float32 values at the edges of binary16 rounding: ties to even, 65520 → inf, subnormals, NaN
Z = np.array([1 + 2**-11, 1 + 3 * 2**-11, 65519.0, 65520.0, -1e6, 2**-25, 3 * 2**-25, 2**-24 * 1.5,
              np.nan, -0.0, 1 + 2**-8 + 2**-16, 3.14159265, 6.1e-5, -6.0e-8, 1e-9, 0.1], np.float32).reshape(4, 4)


def model(bfloat16=True):
    outs = {**OUTPUTS, "brain": BRAIN} if bfloat16 else OUTPUTS
    nodes = [n for n, _ in outs.values()]
    inputs = [helper.make_tensor_value_info("X", H, [4, 4]), helper.make_tensor_value_info("Y", H, [4, 4]),
              helper.make_tensor_value_info("Z", F, [4, 4])]
    outputs = [helper.make_tensor_value_info(k, t, [4, 4]) for k, (_, t) in outs.items()]
    w = numpy_helper.from_array(np.full((4, 4), 0.5, np.float16), "W")
    graph = helper.make_graph(nodes, "f16", inputs, outputs, initializer=[w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def test_float16_io_matches_onnxruntime(tmp_path):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 4)) * 100).astype(np.float16)
    y = (rng.standard_normal((4, 4)) * 100).astype(np.float16)
    m = model()
    outs, result = compile_and_run(m, [x, y, Z], tmp_path)
    refs = [*ort_run(model(bfloat16=False), {"X": x, "Y": y, "Z": Z}), Z.astype(ml_dtypes.bfloat16)]
    assert [t.dtype for t in result.inputs] == ["float16", "float16", "float32"]
    assert [t.dtype for t in result.outputs] == ["float16", "float16", "float16", "float16", "float32", "float16",
                                                 "float32", "bfloat16"]
    header = (tmp_path / "src" / "f16.h").read_text()
    assert '#define F16_INPUT_X_TYPE F16_TYPE_FLOAT16' in header and "#define F16_TYPE_BFLOAT16 18" in header
    for name, got, ref in zip([*OUTPUTS, "brain"], outs, refs):
        assert got.dtype == ref.dtype and got.shape == ref.shape, (name, got.dtype, ref.dtype)
        if name == "add":        # float32 sum rounded once to float16: the correctly rounded sum
            np.testing.assert_array_equal(got, ref, err_msg=name)
        bits = np.asarray(got).view(np.uint16) if got.dtype.itemsize == 2 else np.asarray(got).view(np.uint32)
        want = np.asarray(ref).view(bits.dtype)
        nan = np.isnan(np.asarray(ref, np.float32))
        np.testing.assert_array_equal(bits[~nan], want[~nan], err_msg=name)
        assert np.array_equal(np.isnan(np.asarray(got, np.float32)), nan), name
