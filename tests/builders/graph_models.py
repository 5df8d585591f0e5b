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


def if_runtime_condition(then_op: str = "Relu") -> onnx.ModelProto:
    """If on a bool graph input ``use_relu`` (known only at run time unless bound), through an Identity;
    ``then_op`` "ReduceMax" makes the then branch's output [1, 1], the else branch's [1, 8]; "Unique" a then
    branch that does not convert (no converter)."""
    then_g = helper.make_graph([N(then_op, ["x"], ["t"])], "then", [], [helper.make_tensor_value_info("t", F, None)])
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


# ----------------------------------------------------------------------------------------- decomposed layers

def _c(name: str, v, dtype=np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(v, dtype), name)


def _ln(square="pow", divide="div", affine=True, axes=(-1,), opset=17, twin=False, gamma_shape=(8,)):
    """LayerNorm spelled out: mean, x - mean, its square (Pow 2 or d·d), mean, + eps, Sqrt, Div (or
    Mul by Reciprocal), then · gamma + beta."""
    red = (lambda i, o: N("ReduceMean", [i, "axes"], [o])) if opset >= 18 else \
        (lambda i, o: N("ReduceMean", [i], [o], axes=list(axes)))
    nodes = [red("x", "m"), N("Sub", ["x", "m"], ["d"])]
    if twin:
        nodes.append(N("Sub", ["x", "m"], ["d2"]))
    base = "d2" if twin else "d"
    nodes.append(N("Pow", [base, "two"], ["p"]) if square == "pow" else N("Mul", [base, base], ["p"]))
    nodes += [red("p", "v"), N("Add", ["eps", "v"], ["ve"]), N("Sqrt", ["ve"], ["s"])]
    out = "n" if affine else "y"
    nodes += [N("Div", ["d", "s"], [out])] if divide == "div" else \
        [N("Reciprocal", ["s"], ["r"]), N("Mul", ["d", "r"], [out])]
    if affine:
        nodes += [N("Mul", ["n", "g"], ["ng"]), N("Add", ["ng", "b"], ["y"])]
    rng = np.random.default_rng(5)
    inits = [_c("two", 2.0), _c("eps", 1e-5), _c("g", rng.standard_normal(gamma_shape)),
             _c("b", rng.standard_normal(gamma_shape[-1:])), _c("axes", list(axes), np.int64)]
    return nodes, inits, opset


def _gelu(form: str):
    """GELU spelled out as exporters write it (torch: Div √2 ... · 0.5; HF: 0.5 · x · (1 + erf(x · 1/√2));
    tanh forms with x³ as Pow, as products, or factored)."""
    c = {"half": 0.5, "one": 1.0, "sq2": 1.4142135, "isq2": 0.70710678, "two": 2.0, "three": 3.0,
         "k": 0.7978845608, "a": 0.044715}
    tail_x = [N("Add", ["act", "one"], ["u"]), N("Mul", ["x", "u"], ["xu"]), N("Mul", ["xu", "half"], ["y"])]
    forms = {
        "erf_torch": [N("Div", ["x", "sq2"], ["t"]), N("Erf", ["t"], ["act"]), *tail_x],
        "erf_hf": [N("Mul", ["x", "isq2"], ["t"]), N("Erf", ["t"], ["act"]), N("Add", ["one", "act"], ["u"]),
                   N("Mul", ["half", "x"], ["hx"]), N("Mul", ["hx", "u"], ["y"])],
        "erf_div2": [N("Div", ["x", "sq2"], ["t"]), N("Erf", ["t"], ["act"]), N("Add", ["act", "one"], ["u"]),
                     N("Mul", ["u", "x"], ["xu"]), N("Div", ["xu", "two"], ["y"])],
        "tanh_pow": [N("Pow", ["x", "three"], ["x3"]), N("Mul", ["a", "x3"], ["q"]), N("Add", ["x", "q"], ["i"]),
                     N("Mul", ["i", "k"], ["t"]), N("Tanh", ["t"], ["act"]), *tail_x],
        "tanh_products": [N("Mul", ["x", "x"], ["x2"]), N("Mul", ["x", "x2"], ["x3"]), N("Mul", ["x3", "a"], ["q"]),
                          N("Add", ["q", "x"], ["i"]), N("Mul", ["k", "i"], ["t"]), N("Tanh", ["t"], ["act"]), *tail_x],
        "tanh_factored": [N("Mul", ["x", "x"], ["x2"]), N("Mul", ["x2", "a"], ["q"]), N("Add", ["one", "q"], ["w"]),
                          N("Mul", ["x", "w"], ["xw"]), N("Mul", ["xw", "k"], ["t"]), N("Tanh", ["t"], ["act"]), *tail_x],
        "wrong_constant": [N("Div", ["x", "two"], ["t"]), N("Erf", ["t"], ["act"]), *tail_x],
    }
    return forms[form], [_c(k, v) for k, v in c.items()], 17


def _softmax(form: str):
    """Softmax spelled out along one axis: with / without the max subtraction, Div or Mul(Reciprocal)."""
    ax = [("axes1", [1], np.int64), ("axes_last", [-1], np.int64), ("axes12", [1, 2], np.int64)]
    red = "axes12" if form == "two_axes" else "axes1" if form == "axis1" else "axes_last"
    exp_in = "x"
    nodes = []
    if form in ("max_sub", "axis1", "reciprocal"):
        nodes += [N("ReduceMax", ["x"], ["mx"], axes=[1] if form == "axis1" else [-1]), N("Sub", ["x", "mx"], ["z"])]
        exp_in = "z"
    nodes += [N("Exp", [exp_in], ["e"]), N("ReduceSum", ["e", red], ["s"])]
    nodes += [N("Reciprocal", ["s"], ["r"]), N("Mul", ["e", "r"], ["y"])] if form == "reciprocal" else \
        [N("Div", ["e", "s"], ["y"])]
    return nodes, [_c(n, v, t) for n, v, t in ax], 17


def _silu(form: str):
    nodes = {"x_sig": [N("Sigmoid", ["x"], ["s"]), N("Mul", ["x", "s"], ["y"])],
             "sig_x": [N("Sigmoid", ["x"], ["s"]), N("Mul", ["s", "x"], ["y"])],
             "sig_shared": [N("Sigmoid", ["x"], ["s"]), N("Mul", ["s", "x"], ["m"]), N("Add", ["m", "s"], ["y"])]}[form]
    return nodes, [], 17


def decomposed(kind: str, form: str, shape=(1, 5, 8)) -> onnx.ModelProto:
    """A MatMul (a weight [8, 8]) feeding the decomposed layer ``kind`` in spelling ``form``, on x of
    ``shape``; the model's input is ``inp``."""
    builders = {"layer_norm": lambda: _ln(**LN_FORMS[form]), "gelu": lambda: _gelu(form),
                "softmax": lambda: _softmax(form), "silu": lambda: _silu(form)}
    nodes, inits, opset = builders[kind]()
    nodes = [N("MatMul", ["inp", "w_in"], ["x"])] + nodes
    inits = inits + [_c("w_in", np.random.default_rng(9).standard_normal((shape[-1], shape[-1])) * 0.5)]
    g = helper.make_graph(nodes, f"{kind}_{form}", [helper.make_tensor_value_info("inp", F, list(shape))],
                          [helper.make_tensor_value_info("y", F, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


LN_FORMS = {
    "pow_div_affine": {}, "mul_reciprocal": dict(square="mul", divide="reciprocal", affine=False),
    "axes_input_opset18": dict(opset=18, axes=(1, 2), gamma_shape=(5, 8)), "twin_sub": dict(twin=True),
    "gamma_1x1xC": dict(gamma_shape=(1, 1, 8)),
}
FUSED = {"layer_norm": "nn.layer_norm", "gelu": "nn.gelu", "softmax": "nn.softmax", "silu": "nn.silu"}
DECOMPOSED_CASES = [("layer_norm", f) for f in LN_FORMS] + \
    [("gelu", f) for f in ("erf_torch", "erf_hf", "erf_div2", "tanh_pow", "tanh_products", "tanh_factored")] + \
    [("softmax", f) for f in ("max_sub", "no_max", "axis1", "reciprocal")] + \
    [("silu", f) for f in ("x_sig", "sig_x", "sig_shared")]
