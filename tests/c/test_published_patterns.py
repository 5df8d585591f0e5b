"""Graph patterns found in published ONNX models (benchmarks/published_onnx.py), each reduced to a small
onnx.helper graph: compiled → gcc → run, compared with onnxruntime within 1e-4 x max|ref|."""
from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.builders import rand
from tests.conftest import check, compile_and_run, skip_or_fail

N = helper.make_node


def test_clip_bounds_computed_at_run_time(tmp_path):
    """A log-mel's top_db floor (openWakeWord melspectrogram.onnx): Clip(x, ReduceMax(x) - 80, hi) with
    the min computed from the input; and a max computed at run time beside a constant min."""
    nodes = [N("ReduceMax", ["X"], ["mx"], keepdims=0),
             N("Sub", ["mx", "top"], ["floor"]),
             N("Clip", ["X", "floor", "hi"], ["Y1"]),
             N("ReduceMin", ["X"], ["mn"], keepdims=1),
             N("Add", ["mn", "top"], ["ceil"]),
             N("Reshape", ["ceil", "scalar"], ["ceil0"]),
             N("Clip", ["X", "lo", "ceil0"], ["Y2"])]
    inits = {"top": np.array(1.5, np.float32), "hi": np.array(2.5, np.float32),
             "lo": np.array(-0.25, np.float32), "scalar": np.zeros(0, np.int64)}
    check(tmp_path, nodes, {"X": rand(1, 8, 32) * 3}, ["Y1", "Y2"], inits=inits)


def verifier_if() -> tuple[list, dict]:
    """openWakeWord's hey_jarvis pattern: p = Sigmoid(Gemm(x)); If(Cast(p >= 0.5)) then a second
    model's score (the verifier) else p. The condition is computed from the input at run time."""
    score = [N("Gemm", ["xf", "Wv", "bv"], ["g2"], transB=1), N("Sigmoid", ["g2"], ["p2"])]
    then_g = helper.make_graph(score, "then", [], [helper.make_tensor_value_info("p2", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([N("Identity", ["p"], ["p1"])], "else", [],
                               [helper.make_tensor_value_info("p1", TensorProto.FLOAT, None)])
    nodes = [N("Flatten", ["X"], ["xf"]), N("Gemm", ["xf", "W", "b"], ["g"], transB=1), N("Sigmoid", ["g"], ["p"]),
             N("GreaterOrEqual", ["p", "half"], ["ge"]), N("Cast", ["ge"], ["c"], to=TensorProto.BOOL),
             N("If", ["c"], ["Y"], then_branch=then_g, else_branch=else_g)]
    inits = {"W": np.full((1, 12), 0.5, np.float32), "b": np.zeros(1, np.float32),
             "Wv": rand(1, 12, seed=3), "bv": np.array([0.25], np.float32), "half": np.array(0.5, np.float32)}
    return nodes, inits


def test_if_on_a_condition_computed_from_the_input_takes_either_branch(tmp_path):
    """Both branches are computed and selected: an input of positive values takes the verifier (then), a
    negative one the first score (else); onnxruntime runs the If itself."""
    nodes, inits = verifier_if()
    for sign in (1.0, -1.0):
        check(tmp_path / str(sign), nodes, {"X": sign * (rand(1, 3, 4, low=0.1) + 0.2)}, ["Y"], inits=inits)


def test_matmul_of_a_constant_by_an_activation(tmp_path):
    """Attention pooling with learned queries (fast-plate-ocr's CCT token reducer, tf2onnx): MatMul(constant
    Q [heads, 9, d], Kᵀ) with the keys transposed at run time, and a 2-D constant times an activation."""
    nodes = [N("Transpose", ["K"], ["Kt"], perm=[0, 2, 1]), N("MatMul", ["Q", "Kt"], ["S"]),
             N("Softmax", ["S"], ["Y1"], axis=-1), N("MatMul", ["W", "X"], ["Y2"])]
    inits = {"Q": rand(2, 3, 5, seed=1), "W": rand(3, 6, seed=2)}
    check(tmp_path, nodes, {"K": rand(2, 4, 5), "X": rand(6, 4, seed=3)}, ["Y1", "Y2"], inits=inits)


def test_constant_model_output_beside_computed_ones(tmp_path):
    """An SSD's anchor boxes are a model output that is a constant (ST model zoo SSD: int8 anchors dequantized):
    it folds only in the pipeline, and a copy kernel writes it into its output buffer beside the computed
    outputs (was: 'a model output is a constant'); an initializer output (copied by the frontend) beside it."""
    nodes = [N("Relu", ["X"], ["Y1"]), N("DequantizeLinear", ["anchors", "s", "z"], ["Y2"]),
             N("Identity", ["w"], ["Y3"]), N("Sigmoid", ["X"], ["Y4"])]
    inits = {"anchors": np.arange(-14, 14, dtype=np.int8).reshape(1, 7, 4), "s": np.array(0.125, np.float32),
             "z": np.array(3, np.int8), "w": rand(2, 3, seed=5)}
    check(tmp_path, nodes, {"X": rand(1, 5, 4)}, ["Y1", "Y2", "Y3", "Y4"], opset=13, inits=inits)


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_tflite_tile(tmp_path, dtype):
    """TFLite TILE (ST model zoo SSD tiles its anchors; TFLite Micro has no TILE): LiteRT is the oracle, byte for
    byte (a copy), on a run-time input and on a constant that folds."""
    if importlib.util.find_spec("ai_edge_litert") is None:
        skip_or_fail("ai_edge_litert (the TILE oracle) is not installed")
    from tests.builders.tflite_convt import litert_run
    from tests.builders.tflm_twin_models import Net
    net, q = Net(), ((0.05, 3) if dtype == "int8" else None)
    x = net.input((1, 2, 3, 2), q, dtype)
    y1 = net.op("TILE", [x, net.const(np.array([1, 3, 1, 2], np.int32))], net.act((1, 6, 3, 4), q, "y", dtype))
    c = net.const(np.arange(6, dtype=np.int8 if q else np.float32).reshape(1, 2, 3), q)
    y2 = net.op("TILE", [c, net.const(np.array([2, 1, 2], np.int64))], net.act((2, 2, 6), q, "z", dtype))
    model = net.build([y1, y2])
    xv = (np.random.default_rng(1).integers(-128, 128, (1, 2, 3, 2)).astype(np.int8) if q else rand(1, 2, 3, 2))
    want = litert_run(model, [xv])
    got, _ = compile_and_run(model, [xv], tmp_path)
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and np.array_equal(g, w), (g, w)


def test_int8_constants_tiled_and_concatenated_fold_without_a_float_warning(tmp_path):
    """The SSD's anchors in QDQ form: DequantizeLinear(int8 constant) → Tile → Concat → QuantizeLinear is computed
    at compile time, so legalize_qdq says nothing about a concatenate "running in float" (it was one warning line);
    the output equals onnxruntime's."""
    nodes = [N("Relu", ["X"], ["Y1"]), N("DequantizeLinear", ["a", "sa", "za"], ["da"]), N("Tile", ["da", "reps"], ["ta"]),
             N("DequantizeLinear", ["b", "sb", "zb"], ["db"]), N("Concat", ["ta", "db"], ["cat"], axis=1),
             N("QuantizeLinear", ["cat", "so", "zo"], ["q"]), N("DequantizeLinear", ["q", "so", "zo"], ["Y2"])]
    inits = {"a": np.arange(4, dtype=np.int8).reshape(1, 2, 2), "sa": np.array(0.1, np.float32),
             "za": np.array(0, np.int8), "reps": np.array([1, 2, 1], np.int64),
             "b": np.arange(6, dtype=np.int8).reshape(1, 3, 2), "sb": np.array(0.05, np.float32),
             "zb": np.array(1, np.int8), "so": np.array(0.07, np.float32), "zo": np.array(-3, np.int8)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check(tmp_path, nodes, {"X": rand(1, 4)}, ["Y1", "Y2"], inits=inits)
    assert not [str(w.message) for w in caught if "legalize_qdq" in str(w.message)]
