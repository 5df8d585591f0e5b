"""Transformer ops and horizontal fusion end to end (compile → gcc → run).

Float: each op vs onnxruntime within 1e-4 x max|ref| (LayerNormalization-17, Gelu-20, Erf, batched
MatMul of two activations with the head transposes as views, MatMul + bias + Gelu as one kernel).
int8 (QDQ, quantized with onnxruntime.quantization): the C output equals the numpy reference of the
compiled module exactly; onnxruntime (float requantization) within a few LSB.
Horizontal fusion: Q/K/V projections become one kernel; sibling convs and element-wise siblings (with
the copy-allowing policy) match onnxruntime. The shared tiny transformer block: float and int8.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
from onnx import helper, numpy_helper

from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host
from tinyfuse.ir.interpreter import run_module
from tests.builders import model_of, quantize_qdq, rand, sibling_int8_convs
from tests.conftest import assert_close_to, check, ort_run, shared_or_skip

N = helper.make_node


def lsb_histogram(out, ref, lsb: float) -> Counter:
    diff = np.abs(out.astype(np.float64) - ref.astype(np.float64)) / lsb
    return Counter(np.rint(diff).astype(int).reshape(-1).tolist())


def output_scale(model: onnx.ModelProto) -> float:
    """The scale of the DequantizeLinear producing the (float) graph output of a QDQ model."""
    out = model.graph.output[0].name
    node = next(n for n in model.graph.node if out in n.output)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    return float(inits[node.input[1]])


def check_int8(tmp_path, qmodel, seeds=(0, 1, 2), max_lsb: int = 2, **options):
    """C == numpy reference exactly on several inputs; onnxruntime within ``max_lsb``. Returns the result."""
    result = compile_model(qmodel, **options)
    exe = build_host(result, tmp_path)
    lsb, hist = output_scale(qmodel), Counter()
    for seed in seeds:
        x = rand(*result.inputs[0].shape, seed=seed)
        (got,) = run_host(exe, result, [x])
        (want,) = run_module(result.module, [x])
        np.testing.assert_array_equal(got, want)
        hist += lsb_histogram(got, ort_run(qmodel, {result.inputs[0].name: x})[0], lsb)
    assert max(hist) <= max_lsb, f"LSB histogram vs onnxruntime: {sorted(hist.items())}"
    return result


# ----------------------------------------------------------------------------------------- float ops

def test_layer_norm(tmp_path):
    inits = {"g": rand(7, seed=1), "b": rand(7, seed=2), "g2": rand(3, 7, seed=3), "b2": rand(3, 7, seed=4)}
    nodes = [N("LayerNormalization", ["X", "g", "b"], ["Y_last"], epsilon=1e-3),
             N("LayerNormalization", ["X", "g2", "b2"], ["Y_axis1"], axis=1),
             N("LayerNormalization", ["X", "g"], ["Y_nobias"], axis=-1),
             N("LayerNormalization", ["X", "g", "b"], ["ln"]), N("Relu", ["ln"], ["Y_relu"])]
    result = check(tmp_path, nodes, {"X": rand(2, 3, 7) * 3 + 1}, ["Y_last", "Y_axis1", "Y_nobias", "Y_relu"],
                   opset=17, inits=inits)
    assert ["nn.layer_norm", "nn.relu"] in [k.ops for k in result.kernels]      # the relu is its epilogue


def test_layer_norm_far_from_zero_within_1e6_of_float64(tmp_path):
    """Rows centred at 100 and 1e4 with small variance (L = 768 and 2 x 96): float32 statistics must not
    subtract a float32 mean of that magnitude (its rounding alone is 5e-4 at 1e4). Oracle: float64 numpy
    on the same float32 inputs, within 1e-6 x max|ref|; onnxruntime (whose own float32 error grows to
    1e-3 there) no further from the C than from float64, plus that tolerance."""
    rng = np.random.default_rng(11)
    for shape, axis in (((3, 768), -1), ((2, 2, 96), 1)):
        norm = shape[axis:] if axis > 0 else shape[-1:]
        g = rng.uniform(0.5, 1.5, norm).astype(np.float32)
        b = (0.1 * rng.standard_normal(norm)).astype(np.float32)
        model = model_of([N("LayerNormalization", ["X", "g", "b"], ["Y"], axis=axis)], {"X": np.zeros(shape)},
                         ["Y"], 17, {"g": g, "b": b})
        result = compile_model(model)
        exe = build_host(result, tmp_path)
        for mean, std in ((100.0, 1.0), (100.0, 0.05), (1e4, 1.0), (1e4, 0.1)):
            x = (mean + std * rng.standard_normal(shape)).astype(np.float32)
            (got,) = run_host(exe, result, [x])
            r = x.astype(np.float64).reshape(int(np.prod(shape[:axis % len(shape)])), -1)
            y = (r - r.mean(1, keepdims=True)) / np.sqrt(r.var(1, keepdims=True) + 1e-5)
            want = y.reshape(shape) * g + b
            scale = np.abs(want).max()
            err = np.abs(got - want).max() / scale
            assert err <= 1e-6, f"{shape} axis {axis} mean {mean} std {std}: {err:.2e} x max|ref| from float64"
            (ort,) = ort_run(model, {"X": x})
            assert np.abs(got - ort).max() <= np.abs(ort - want).max() + 1e-6 * scale


def test_gelu_erf_and_linear_gelu_fused(tmp_path):
    nodes = [N("Gelu", ["X"], ["Y_gelu"]), N("Gelu", ["X"], ["Y_gelu_tanh"], approximate="tanh"),
             N("Erf", ["X"], ["Y_erf"]),
             N("MatMul", ["A", "W"], ["m"]), N("Add", ["m", "B"], ["a"]), N("Gelu", ["a"], ["Y_linear_gelu"])]
    result = check(tmp_path, nodes, {"X": rand(3, 11) * 3, "A": rand(2, 5, 6, seed=1)},
                   ["Y_gelu", "Y_gelu_tanh", "Y_erf", "Y_linear_gelu"], opset=20,
                   inits={"W": rand(6, 9, seed=2), "B": rand(9, seed=3)})
    assert ["nn.matmul", "add", "nn.gelu"] in [k.ops for k in result.kernels]


def test_batched_matmul_of_activations_with_head_views(tmp_path):
    """Q·Kᵀ / P·V shapes: the reshapes and transposes around the matmuls run as index maps (no
    transpose kernel), batch dims broadcast."""
    ints = lambda *v: np.array(v, np.int64)  # noqa: E731
    nodes = [N("Reshape", ["Q", "s4"], ["qr"]), N("Transpose", ["qr"], ["qt"], perm=[0, 2, 1, 3]),
             N("Reshape", ["K", "s4"], ["kr"]), N("Transpose", ["kr"], ["kt"], perm=[0, 2, 3, 1]),
             N("MatMul", ["qt", "kt"], ["s"]), N("Softmax", ["s"], ["p"], axis=-1),
             N("MatMul", ["p", "V"], ["o"]), N("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
             N("Reshape", ["ot", "s3"], ["Y_attention"]),
             N("MatMul", ["A", "Bb"], ["Y_broadcast"])]
    inputs = {"Q": rand(1, 6, 8), "K": rand(1, 6, 8, seed=1), "V": rand(2, 6, 4, seed=2),
              "A": rand(3, 1, 4, 5, seed=3), "Bb": rand(2, 5, 3, seed=4)}
    result = check(tmp_path, nodes, inputs, ["Y_attention", "Y_broadcast"], opset=14,
                   inits={"s4": ints(1, 6, 2, 4), "s3": ints(1, 6, 8)})
    assert not any("transpose" in k.ops for k in result.kernels)
    assert sum(k.ops[0] == "nn.batch_matmul" for k in result.kernels) == 2


# ----------------------------------------------------------------------------------------- attention block

def attention_block(seq=8, dim=16, heads=2, seed=0) -> onnx.ModelProto:
    """LayerNorm → Q/K/V (MatMul + Add) → heads → softmax(Q·Kᵀ·c)·V → merge → MatMul + Add + Gelu →
    MatMul + residual: a tiny transformer block of the same shape as the shared one."""
    rng = np.random.default_rng(seed)
    w = lambda *s: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)  # noqa: E731
    v = lambda *s: (rng.standard_normal(s) * 0.1).astype(np.float32)  # noqa: E731
    inits = {"g": rng.uniform(0.5, 1.5, dim).astype(np.float32), "b": v(dim), "c": np.array(0.35, np.float32),
             "sh": np.array([1, seq, heads, dim // heads], np.int64), "so": np.array([1, seq, dim], np.int64),
             "Wf": w(dim, 2 * dim), "Bf": v(2 * dim), "W2": w(2 * dim, dim)}
    nodes = [N("LayerNormalization", ["X", "g", "b"], ["ln"])]
    for j in "qkv":
        inits |= {f"W{j}": w(dim, dim), f"B{j}": v(dim)}
        nodes += [N("MatMul", ["ln", f"W{j}"], [f"{j}m"]), N("Add", [f"B{j}", f"{j}m"], [f"{j}a"]),
                  N("Reshape", [f"{j}a", "sh"], [f"{j}r"]),
                  N("Transpose", [f"{j}r"], [f"{j}t"], perm=[0, 2, 3, 1] if j == "k" else [0, 2, 1, 3])]
    nodes += [N("MatMul", ["qt", "kt"], ["s"]), N("Mul", ["s", "c"], ["sc"]), N("Softmax", ["sc"], ["p"], axis=-1),
              N("MatMul", ["p", "vt"], ["o"]), N("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
              N("Reshape", ["ot", "so"], ["om"]), N("MatMul", ["om", "Wf"], ["f"]), N("Add", ["f", "Bf"], ["fa"]),
              N("Gelu", ["fa"], ["ge"]), N("MatMul", ["ge", "W2"], ["f2"]), N("Add", ["f2", "X"], ["Y"])]
    return model_of(nodes, {"X": np.zeros((1, seq, dim))}, {"Y": [1, seq, dim]}, 20, inits)


def test_attention_block_float_qkv_one_kernel(tmp_path):
    model = attention_block()
    x = rand(1, 8, 16)
    unfused = compile_model(model, disabled_passes=["fuse_horizontal"])
    result = compile_model(model)
    exe = build_host(result, tmp_path)
    (got,) = run_host(exe, result, [x])
    assert_close_to(got, ort_run(model, {"X": x})[0])
    assert sum(k.ops == ["nn.matmul", "add"] for k in unfused.kernels) == 3 + 1    # q, k, v and the residual
    (h,) = [k for k in result.kernels if k.ops[0] == "horizontal"]
    assert h.ops == ["horizontal", "nn.matmul", "add", "add", "add"]
    assert len(result.kernels) == len(unfused.kernels) - 2
    assert not any("transpose" in k.ops or "slice_axis" in k.ops for k in result.kernels)


def test_attention_block_int8(tmp_path):
    qmodel = quantize_qdq(attention_block(), tmp_path)
    result = check_int8(tmp_path, qmodel)
    ops = [k.ops for k in result.kernels]
    assert ["qnn.layer_norm"] in ops and ["qnn.softmax"] in ops
    assert ["horizontal", "qnn.matmul"] + ["qnn.requantize", "qnn.add"] * 3 in ops
    assert ["qnn.matmul", "qnn.requantize", "qnn.add", "qnn.lut"] in ops        # linear + bias + gelu (LUT)
    assert not any(op.startswith("nn.") for k in result.kernels for op in k.ops)  # nothing left in float


def test_int8_layer_norm_and_gelu_many_inputs(tmp_path):
    """qnn.layer_norm over rows with large and tiny variance, and the Gelu LUT: C == reference."""
    inits = {"g": rand(24, seed=1), "b": rand(24, seed=2)}
    nodes = [N("LayerNormalization", ["X", "g", "b"], ["ln"], epsilon=1e-5), N("Gelu", ["ln"], ["ge"]),
             N("Add", ["ge", "X"], ["Y"])]
    qmodel = quantize_qdq(model_of(nodes, {"X": np.zeros((4, 3, 24))}, {"Y": [4, 3, 24]}, 20, inits), tmp_path)
    check_int8(tmp_path, qmodel, seeds=range(6))


# ----------------------------------------------------------------------------------------- horizontal: convs, elemwise

def test_sibling_convs_one_kernel(tmp_path, fuse_all_siblings):
    """Inception-style 1x1 branches (different widths, relu/none epilogues) plus element-wise siblings."""
    nodes = [N("Conv", ["X", "W1", "B1"], ["c1"]), N("Relu", ["c1"], ["r1"]),
             N("Conv", ["X", "W2"], ["c2"]),
             N("Conv", ["X", "W3", "B3"], ["c3"]), N("Relu", ["c3"], ["r3"]),
             N("Conv", ["r3", "W4"], ["c4"], pads=[1, 1, 1, 1]),
             N("Concat", ["r1", "c2", "c4"], ["Y_concat"], axis=1),
             N("Sigmoid", ["Z"], ["s"]), N("Tanh", ["Z"], ["t"]), N("Mul", ["s", "t"], ["Y_gated"])]
    inits = {"W1": rand(4, 6, 1, 1, seed=1), "B1": rand(4, seed=2), "W2": rand(3, 6, 1, 1, seed=3),
             "W3": rand(5, 6, 1, 1, seed=4), "B3": rand(5, seed=5), "W4": rand(2, 5, 3, 3, seed=6)}
    result = check(tmp_path, nodes, {"X": rand(1, 6, 5, 7), "Z": rand(2, 9, seed=7) * 2}, ["Y_concat", "Y_gated"],
                   opset=13, inits=inits)
    hs = [k.ops for k in result.kernels if k.ops[0] == "horizontal"]
    assert ["horizontal", "nn.conv2d", "add", "nn.relu", "add", "nn.relu"] in hs
    assert ["horizontal", "sigmoid", "tanh"] in hs
    assert sum(k.ops[0] == "nn.conv2d" for k in result.kernels) == 1                 # only the 3x3 one


def test_sibling_int8_convs_exact(tmp_path, fuse_all_siblings):
    qmodel = sibling_int8_convs(3, tmp_path)
    result = check_int8(tmp_path, qmodel, max_lsb=1)
    assert sum(k.ops[0] == "horizontal" for k in result.kernels) == 1


# ----------------------------------------------------------------------------------------- the shared model

def shared_model(suffix=""):
    path = shared_or_skip("models", "onnx", f"tiny_transformer_block_op20{suffix}.onnx")
    return path, np.load(shared_or_skip("models", "onnx", "tiny_transformer_block_op20.io.npz"))


def test_shared_transformer_block_float(tmp_path):
    path, io = shared_model()
    before = compile_model(path, disabled_passes=["fuse_horizontal"])
    result = compile_model(path)
    (got,) = run_host(build_host(result, tmp_path), result, [io["input"]])
    assert_close_to(got, io["ort_float"])
    q_k_v = [k for k in before.kernels if k.ops == ["nn.matmul", "add"]]
    assert len(q_k_v) == 3                                           # before: one kernel per projection
    (h,) = [k for k in result.kernels if k.ops[0] == "horizontal"]
    assert h.ops == ["horizontal", "nn.matmul", "add", "add", "add"]
    assert [k.ops[0] for k in result.kernels] == ["nn.layer_norm", "horizontal", "nn.batch_matmul", "nn.softmax",
                                                  "nn.batch_matmul", "nn.matmul", "nn.layer_norm", "nn.matmul",
                                                  "nn.matmul"]


def test_shared_transformer_block_int8(tmp_path):
    path, io = shared_model("_qdq")
    result = compile_model(path)
    (got,) = run_host(build_host(result, tmp_path), result, [io["input"]])
    np.testing.assert_array_equal(got, run_module(result.module, [io["input"]])[0])
    hist = lsb_histogram(got, io["ort_qdq"], output_scale(onnx.load(path)))
    assert max(hist) <= 1, sorted(hist.items())
    assert ["horizontal", "qnn.matmul"] + ["qnn.requantize", "qnn.add"] * 3 in [k.ops for k in result.kernels]
    assert not any(op.startswith("nn.") for k in result.kernels for op in k.ops)
