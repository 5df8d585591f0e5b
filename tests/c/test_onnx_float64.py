"""float64 (ONNX double, C double) tensors end to end: one graph of the operators that compute float64
(frontend/onnx/float64.py FLOAT64_OPS: element-wise arithmetic, Max/Min, Mod, comparisons, Where, Cast,
the reductions, CumSum, Einsum, data movement) compiled → gcc → run, every output compared with
onnxruntime at double precision (a float32 computation would miss by ~1e-7 relative); an operator
outside the list is one error line naming the node and the float64 input."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.conftest import compile_and_run, ort_run

N = helper.make_node
D = TensorProto.DOUBLE
OUTPUTS = {  # name: (node, elem type)
    "max": (N("Max", ["X", "Y"], ["max"]), D), "min": (N("Min", ["X", "Y", "X"], ["min"]), D),
    "fmod": (N("Mod", ["X", "Y"], ["fmod"], fmod=1), D),     # (fmod=0 on floats: onnxruntime from opset 28)
    "add": (N("Add", ["X", "tiny"], ["add"]), D), "div": (N("Div", ["X", "Y"], ["div"]), D),
    "neg": (N("Neg", ["X"], ["neg"]), D), "abs": (N("Abs", ["X"], ["abs"]), D),
    "exp": (N("Exp", ["X"], ["exp"]), D), "log": (N("Log", ["Y"], ["log"]), D), "sqrt": (N("Sqrt", ["Y"], ["sqrt"]), D),
    "gt": (N("Greater", ["X", "Y"], ["gt"]), TensorProto.BOOL),
    "where": (N("Where", ["gt", "X", "Y"], ["where"]), D), "f32": (N("Cast", ["X"], ["f32"], to=TensorProto.FLOAT),
                                                                    TensorProto.FLOAT),
    "cumsum": (N("CumSum", ["X", "axis"], ["cumsum"], reverse=1), D),
    "rsum": (N("ReduceSum", ["X", "axes"], ["rsum"], keepdims=0), D),
    "rmax": (N("ReduceMax", ["X"], ["rmax"], axes=[0, 2]), D),
    "lse": (N("ReduceLogSumExp", ["X"], ["lse"], axes=[1]), D),
    "bmm": (N("Einsum", ["X", "Y"], ["bmm"], equation="bij,bkj->bik"), D),
    "diag": (N("Einsum", ["Q"], ["diag"], equation="...ii->...i"), D),
    "tr": (N("Transpose", ["X"], ["tr"], perm=[2, 0, 1]), D), "cat": (N("Concat", ["X", "Y"], ["cat"], axis=1), D),
    "sub": (N("Sub", ["X", "Y"], ["sub"]), D), "mul": (N("Mul", ["X", "Y"], ["mul"]), D),
    "sum3": (N("Sum", ["X", "Y", "X"], ["sum3"]), D), "le": (N("LessOrEqual", ["X", "Y"], ["le"]), TensorProto.BOOL),
    "eq": (N("Equal", ["X", "X"], ["eq"]), TensorProto.BOOL), "rmin": (N("ReduceMin", ["X"], ["rmin"], keepdims=0), D),
    "slice": (N("Slice", ["X", "starts", "ends"], ["slice"]), D), "tile": (N("Tile", ["Q", "reps"], ["tile"]), D),
    "rprod": (N("ReduceProd", ["Y"], ["rprod"], axes=[1]), D), "rl2": (N("ReduceL2", ["X"], ["rl2"], axes=[2]), D),
    "rl1": (N("ReduceL1", ["X"], ["rl1"], axes=[0]), D),
    "flat": (N("Flatten", ["Q"], ["flat"], axis=2), D), "ident": (N("Identity", ["Q"], ["ident"]), D),
}


def model(opset=13):
    nodes = [n for n, _ in OUTPUTS.values()]
    inputs = [helper.make_tensor_value_info(n, D, s) for n, s in (("X", [2, 3, 4]), ("Y", [2, 3, 4]), ("Q", [2, 3, 3]))]
    outputs = [helper.make_tensor_value_info(k, t, None) for k, (_, t) in OUTPUTS.items()]
    inits = [numpy_helper.from_array(np.array(1e-12), "tiny"), numpy_helper.from_array(np.array(1, np.int64), "axis"),
             numpy_helper.from_array(np.array([2], np.int64), "axes"),
             numpy_helper.from_array(np.array([0, 1], np.int64), "starts"),
             numpy_helper.from_array(np.array([1, 3], np.int64), "ends"),
             numpy_helper.from_array(np.array([1, 2, 1], np.int64), "reps")]
    graph = helper.make_graph(nodes, "f64", inputs, outputs, initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_float64_ops_match_onnxruntime_in_double(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4)) * 3
    y = np.abs(rng.standard_normal((2, 3, 4))) + 0.5
    q = rng.standard_normal((2, 3, 3))
    m = model()
    outs, _ = compile_and_run(m, [x, y, q], tmp_path)
    refs = ort_run(m, {"X": x, "Y": y, "Q": q})
    for name, got, ref in zip(OUTPUTS, outs, refs):
        assert got.dtype == ref.dtype and got.shape == ref.shape, (name, got.dtype, ref.dtype, got.shape, ref.shape)
        tol = 1e-6 if ref.dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol, err_msg=name)
    assert not np.array_equal(outs[list(OUTPUTS).index("add")], x)      # x + 1e-12 is not x in double


def test_float64_outside_the_list_is_one_error_naming_the_node():
    from tinyfuse.errors import TinyfuseError
    from tinyfuse.frontend import from_onnx
    g = helper.make_graph([N("Relu", ["X"], ["Y"], name="act")], "g", [helper.make_tensor_value_info("X", D, [2])],
                          [helper.make_tensor_value_info("Y", D, [2])])
    with pytest.raises(TinyfuseError) as e:
        from_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))
    msg = str(e.value)
    assert "\n" not in msg and all(s in msg for s in ("node 'act'", "Relu", "input 'X'", "float64"))
