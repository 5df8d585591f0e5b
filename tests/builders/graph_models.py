"""ONNX models of graph-level features: symbolic input dims, an If on a sample-rate input (a VAD stub
as silero-vad writes it), a Loop with a static trip count, a Scan (the tests of --input-shape, --bind
and frontend/onnx/control_flow.py)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

N = helper.make_node
F = TensorProto.FLOAT


def _init(name: str, arr) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(arr), name)


def _w(seed: int, *shape) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 0.3


def dynamic_conv(dims=("N", 3, "H", "W")) -> onnx.ModelProto:
    """Conv 3x3 pad 1 + Relu on an input of shape ``dims`` (strings: symbolic dim_params)."""
    g = helper.make_graph([N("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), N("Relu", ["c"], ["y"])], "dyn",
                          [helper.make_tensor_value_info("x", F, list(dims))],
                          [helper.make_tensor_value_info("y", F, None)], [_init("w", _w(0, 4, 3, 3, 3))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _branch(name: str, w: str, bias: float, local_init: bool) -> onnx.GraphProto:
    """x (outer scope) @ w (outer scope) + b (the branch's own initializer, or an outer one) → Sigmoid."""
    b = f"{name}_b"
    inits = [_init(b, np.full([1, 1, 4], bias, np.float32))] if local_init else []
    nodes = [N("MatMul", ["x", w], [f"{name}_m"]), N("Add", [f"{name}_m", b if local_init else "b_outer"],
                                                     [f"{name}_a"]),
             N("Sigmoid", [f"{name}_a"], [f"{name}_p"])]
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(f"{name}_p", F, None)], inits)


def vad_stub(frame: int = 16) -> onnx.ModelProto:
    """The VAD pattern: ``If(Equal(sr, 16000))`` picks the 16 kHz or the 8 kHz weights; x [1, 1, frame]
    float, sr an int64 scalar input (bind it: ``--bind sr=16000``)."""
    then_g, else_g = _branch("k16", "w16", 0.1, True), _branch("k8", "w8", -0.2, False)
    nodes = [N("Equal", ["sr", "sr16k"], ["is16k"]),
             N("If", ["is16k"], ["p"], then_branch=then_g, else_branch=else_g),
             N("Relu", ["p"], ["y"])]
    g = helper.make_graph(nodes, "vad", [helper.make_tensor_value_info("x", F, [1, 1, frame]),
                                         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
                          [helper.make_tensor_value_info("y", F, None)],
                          [_init("sr16k", np.array(16000, np.int64)), _init("w16", _w(1, frame, 4)),
                           _init("w8", _w(2, frame, 4)), _init("b_outer", np.full([1, 1, 4], 0.05, np.float32))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def if_runtime_condition() -> onnx.ModelProto:
    """If on a bool graph input ``use_relu`` (known only at run time unless bound), through a Not."""
    then_g = helper.make_graph([N("Relu", ["x"], ["t"])], "then", [], [helper.make_tensor_value_info("t", F, None)])
    else_g = helper.make_graph([N("Sigmoid", ["x"], ["e"])], "else", [], [helper.make_tensor_value_info("e", F, None)])
    nodes = [N("Identity", ["use_relu"], ["c"]),
             N("If", ["c"], ["y"], name="branchy", then_branch=then_g, else_branch=else_g)]
    g = helper.make_graph(nodes, "ifrt", [helper.make_tensor_value_info("x", F, [1, 8]),
                                          helper.make_tensor_value_info("use_relu", TensorProto.BOOL, [1])],
                          [helper.make_tensor_value_info("y", F, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def rnn_loop(trip: int = 3, n: int = 6, with_cond: bool = True) -> onnx.ModelProto:
    """Loop(M=trip): h = tanh(h @ W + x + i * 0.1), every h also a scan output ([trip, 1, n]); the body's
    condition is its input passed through (stays true), or absent with ``with_cond`` False."""
    body = helper.make_graph(
        [N("Cast", ["i"], ["fi"], to=F), N("Mul", ["fi", "tenth"], ["di"]),
         N("MatMul", ["h_in", "W"], ["hw"]), N("Add", ["hw", "x"], ["hx"]), N("Add", ["hx", "di"], ["hd"]),
         N("Tanh", ["hd"], ["h_out"]), N("Identity", ["h_out"], ["h_scan"]), N("Identity", ["c_in"], ["c_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("h_in", F, [1, n])],
        [helper.make_tensor_value_info(v, t, None) for v, t in
         (("c_out", TensorProto.BOOL), ("h_out", F), ("h_scan", F))],
        [_init("tenth", np.array(0.1, np.float32))])
    loop_in = ["M", "cond" if with_cond else "", "h0"]
    g = helper.make_graph([N("Loop", loop_in, ["h_last", "hs"], name="recur", body=body)], "loop",
                          [helper.make_tensor_value_info("x", F, [1, n])],
                          [helper.make_tensor_value_info("h_last", F, None), helper.make_tensor_value_info("hs", F, None)],
                          [_init("M", np.array(trip, np.int64)), _init("cond", np.array(True)),
                           _init("h0", np.zeros([1, n], np.float32)), _init("W", _w(3, n, n))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def scan_sum(steps: int = 5, n: int = 4, reverse: bool = True, axis: int = 1) -> onnx.ModelProto:
    """Scan over x [n, steps] along axis 1 (from the end with ``reverse``): s = s + x_t, out_t = s * 2,
    the outputs stacked on axis 1 ([n, steps]); ``axis`` 0: x [steps, n], outputs on axis 0."""
    body = helper.make_graph([N("Add", ["s_in", "xt"], ["s_out"]), N("Mul", ["s_out", "two"], ["o"])], "body",
                             [helper.make_tensor_value_info("s_in", F, [n]), helper.make_tensor_value_info("xt", F, [n])],
                             [helper.make_tensor_value_info("s_out", F, None), helper.make_tensor_value_info("o", F, None)],
                             [_init("two", np.array(2, np.float32))])
    node = N("Scan", ["s0", "x"], ["s", "ys"], num_scan_inputs=1, body=body, scan_input_axes=[axis],
             scan_input_directions=[1 if reverse else 0], scan_output_axes=[axis])
    shape = [n, steps] if axis else [steps, n]
    g = helper.make_graph([node], "scan", [helper.make_tensor_value_info("x", F, shape)],
                          [helper.make_tensor_value_info("s", F, None), helper.make_tensor_value_info("ys", F, None)],
                          [_init("s0", np.linspace(-1, 1, n).astype(np.float32))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
