"""The element-wise ONNX operators (frontend/onnx/math.py, Where in misc.py) against onnxruntime: small
models with one output per operator, compiled → C → gcc → run and through the numpy interpreter, within
1e-4 x max|ref| (integers and bools therefore exactly); the QDQ int8 forms within one output step."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.conftest import assert_close_to, compile_and_run, ort_run

N = helper.make_node
RNG = np.random.default_rng(11)


def typed_model(nodes, inputs: dict[str, np.ndarray], outputs, opset: int):
    """A graph of ``nodes``, inputs typed as their example arrays, outputs typed by ONNX shape inference."""
    import onnx
    vis = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in inputs.items()]
    graph = helper.make_graph(nodes, "t", vis, [helper.make_empty_tensor_value_info(o) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    inferred = {vi.name: vi for vi in onnx.shape_inference.infer_shapes(model).graph.value_info}
    del model.graph.output[:]
    model.graph.output.extend(inferred[o] for o in outputs)
    return model


def check(tmp_path, nodes, inputs, outputs, opset):
    """Compile, run and compare every output with onnxruntime; the numpy interpreter must agree too."""
    from tinyfuse.frontend import from_onnx
    from tinyfuse.ir.interpreter import run_module
    model = typed_model(nodes, inputs, outputs, opset)
    outs, result = compile_and_run(model, list(inputs.values()), tmp_path)
    refs = ort_run(model, inputs)
    interp = run_module(from_onnx(model), list(inputs.values()))
    for name, o, i, r in zip(outputs, outs, interp, refs):
        for what, got in (("C", o), ("interpreter", i)):
            assert np.asarray(got).dtype == r.dtype, (name, what, np.asarray(got).dtype, r.dtype)
            try:
                assert_close_to(np.asarray(got), r)
            except AssertionError as e:
                raise AssertionError(f"output {name} ({what}): {e}") from None
    return result


def test_float_unary(tmp_path):
    x = (RNG.standard_normal((2, 3, 5)) * 3).astype(np.float32)
    x.reshape(-1)[:6] = [-2.5, -0.5, 0.5, 1.5, 2.5, -0.25]        # Round's ties
    p = (np.abs(RNG.standard_normal((2, 3, 5))) + 0.05).astype(np.float32)
    ops = [("Abs", {}), ("Neg", {}), ("Exp", {}), ("Sin", {}), ("Cos", {}), ("Floor", {}), ("Ceil", {}), ("Round", {}),
           ("Sign", {}), ("Reciprocal", {}), ("Softplus", {}), ("Softsign", {}), ("Mish", {}), ("Elu", {"alpha": 0.5}),
           ("Selu", {"alpha": 1.5, "gamma": 0.8}), ("Celu", {"alpha": 2.0}), ("ThresholdedRelu", {"alpha": 0.3}),
           ("Shrink", {"bias": 0.2, "lambd": 0.7}), ("Elu", {}), ("Selu", {})]
    nodes = [N(op, ["X"], [f"y{i}"], **attrs) for i, (op, attrs) in enumerate(ops)]
    nodes += [N("Log", ["P"], ["log"]), N("Sqrt", ["P"], ["sqrt"])]
    check(tmp_path, nodes, {"X": x, "P": p}, [f"y{i}" for i in range(len(ops))] + ["log", "sqrt"], opset=18)


def test_float_binary_and_variadic(tmp_path):
    a = (RNG.standard_normal((2, 3, 4)) * 4).astype(np.float32)
    b = (RNG.standard_normal((3, 1)) * 2).astype(np.float32)
    c = (RNG.standard_normal((4,)) * 2).astype(np.float32)
    p = (np.abs(RNG.standard_normal((2, 3, 4))) + 0.1).astype(np.float32)
    nodes = [N("Pow", ["P", "B"], ["pow"]), N("Mod", ["A", "B"], ["fmod"], fmod=1), N("Mod", ["A", "B"], ["mod"]),
             N("Max", ["A", "B", "C"], ["max"]), N("Min", ["A", "B", "C"], ["min"]), N("Sum", ["A", "B", "C"], ["sum"]),
             N("Mean", ["A", "B", "C"], ["mean"]), N("Max", ["A"], ["max1"]), N("Sum", ["A", "C"], ["sum2"])]
    outs = ["pow", "fmod", "mod", "max", "min", "sum", "mean", "max1", "sum2"]
    check(tmp_path, nodes, {"A": a, "B": b, "C": c, "P": p}, outs, opset=28)     # float Mod fmod=0: opset 28


def test_comparisons_logic_and_where(tmp_path):
    """Comparisons (bool out), And / Or / Xor / Not of them, Where on a computed condition (broadcast)."""
    a = RNG.integers(-3, 4, (2, 3, 4)).astype(np.float32)
    b = RNG.integers(-3, 4, (3, 1)).astype(np.float32)
    nodes = [N(op, ["A", "B"], [op.lower()]) for op in ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual")]
    nodes += [N("And", ["greater", "equal"], ["and"]), N("Or", ["less", "equal"], ["or"]),
              N("Xor", ["greaterorequal", "lessorequal"], ["xor"]), N("Not", ["greater"], ["not"]),
              N("Where", ["less", "A", "B"], ["where"]), N("Equal", ["and", "or"], ["eqbool"])]
    outs = ["equal", "greater", "less", "greaterorequal", "lessorequal", "and", "or", "xor", "not", "where", "eqbool"]
    check(tmp_path, nodes, {"A": a, "B": b}, outs, opset=16)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.int64])
def test_integer_ops(tmp_path, dtype):
    a = RNG.integers(-50, 51, (3, 4)).astype(dtype)
    b = RNG.integers(-9, 10, (4,)).astype(dtype)
    b[b == 0] = 5
    nodes = [N("Abs", ["A"], ["abs"]), N("Neg", ["A"], ["neg"]), N("Sign", ["A"], ["sign"]),
             N("Mod", ["A", "B"], ["mod"]), N("Mod", ["A", "B"], ["fmod"], fmod=1), N("Max", ["A", "B"], ["max"]),
             N("Min", ["A", "B"], ["min"]), N("Greater", ["A", "B"], ["gt"]), N("Equal", ["A", "B"], ["eq"])]
    outs = ["abs", "neg", "sign", "mod", "fmod", "max", "min", "gt", "eq"]     # Sum: float types only (ONNX)
    if dtype != np.int8:                         # onnxruntime has no int8 Pow
        nodes.append(N("Pow", ["A", "E"], ["pow"]))
        outs.append("pow")
    check(tmp_path, nodes, {"A": a, "B": b, "E": RNG.integers(0, 4, (3, 4)).astype(dtype)}, outs, opset=16)


def test_isnan_isinf(tmp_path):
    x = np.array([[1.0, np.nan, np.inf, -np.inf, 0.0, -3.0]], np.float32)
    nodes = [N("IsNaN", ["X"], ["nan"]), N("IsInf", ["X"], ["inf"]), N("IsInf", ["X"], ["pos"], detect_negative=0),
             N("IsInf", ["X"], ["neg"], detect_positive=0)]
    check(tmp_path, nodes, {"X": x}, ["nan", "inf", "pos", "neg"], opset=20)


def _qdq(op: str, n_inputs: int, attrs=None):
    """DequantizeLinear of int8 inputs → ``op`` → QuantizeLinear → DequantizeLinear (a Where's condition: a bool input)."""
    inits = [numpy_helper.from_array(np.array(v, t), k) for k, v, t in (
        ("sa", 0.05, np.float32), ("za", 3, np.int8), ("sb", 0.03, np.float32), ("zb", -7, np.int8),
        ("so", 0.04, np.float32), ("zo", -2, np.int8))]
    nodes = [N("DequantizeLinear", ["a", "sa", "za"], ["fa"]), N("DequantizeLinear", ["b", "sb", "zb"], ["fb"])]
    ins = ["c", "fa", "fb"] if op == "Where" else ["fa", "fb"][:n_inputs]
    nodes += [N(op, ins, ["f"], **(attrs or {})), N("QuantizeLinear", ["f", "so", "zo"], ["q"]),
              N("DequantizeLinear", ["q", "so", "zo"], ["y"])]
    vis = [helper.make_tensor_value_info("a", TensorProto.INT8, [2, 3, 4]),
           helper.make_tensor_value_info("b", TensorProto.INT8, [2, 3, 4])]
    if op == "Where":
        vis.append(helper.make_tensor_value_info("c", TensorProto.BOOL, [2, 3, 4]))
    graph = helper.make_graph(nodes, "qdq", vis, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("op,n,kernel_op", [("Max", 2, "maximum"), ("Min", 2, "minimum"), ("Where", 2, "select"),
                                            ("Exp", 1, "qnn.lut"), ("Elu", 1, "qnn.lut"), ("Abs", 1, "qnn.lut")])
def test_qdq_int8(tmp_path, op, n, kernel_op):
    """QDQ forms run on int8 (no float kernel) within one output step of onnxruntime."""
    model = _qdq(op, n)
    feeds = {"a": RNG.integers(-128, 128, (2, 3, 4)).astype(np.int8),
             "b": RNG.integers(-128, 128, (2, 3, 4)).astype(np.int8)}
    if op == "Where":
        feeds["c"] = RNG.random((2, 3, 4)) < 0.5
    outs, result = compile_and_run(model, list(feeds.values()), tmp_path)
    ref = ort_run(model, feeds)[0]
    assert np.max(np.abs(outs[0] - ref)) <= 0.04 * 1.001
    ops = [o for k in result.kernels for o in k.ops]
    assert kernel_op in ops and not {"exp", "nn.elu", "abs"} & set(ops), ops


def test_where_condition_type_is_checked():
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import TinyfuseError
    model = typed_model([N("Where", ["C", "X", "Y"], ["Z"])],
                        {"C": np.ones((2, 2), bool), "X": np.ones((2, 2), np.float32),
                         "Y": np.ones((2, 2), np.int32)}, ["Z"], 16)
    with pytest.raises(TinyfuseError, match=r"Where, opset 16\): condition bool, X float32, Y int32"):
        compile_model(model)
