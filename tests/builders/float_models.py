"""Float ONNX models built for the tests: the demo DS-CNN, a residual block, a tiny MLP, one-graph
models from a list of nodes."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.conftest import ROOT
def build_dscnn(tmp_path: Path) -> onnx.ModelProto:
    """The demo DS-CNN of examples/build_models.py, saved as tmp_path/dscnn.onnx."""
    spec = importlib.util.spec_from_file_location("build_models", ROOT / "examples" / "build_models.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build_dscnn(str(tmp_path / "dscnn.onnx"))


def residual_block() -> onnx.ModelProto:
    """x → conv → BN → relu → conv → BN → (+ x) → relu → GAP → flatten → gemm → softmax (NCHW)."""
    rng = np.random.default_rng(3)
    inits, nodes = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(arr.astype(np.float32), name))
        return name

    def conv_bn(x, name, relu):
        const(f"{name}_w", rng.standard_normal((8, 8, 3, 3)) * 0.2)
        nodes.append(helper.make_node("Conv", [x, f"{name}_w"], [f"{name}_c"], pads=[1, 1, 1, 1], name=name))
        for p, v in (("g", rng.uniform(0.5, 1.5, 8)), ("b", rng.normal(0, 0.1, 8)), ("m", rng.normal(0, 0.1, 8)),
                     ("v", rng.uniform(0.5, 1.5, 8))):
            const(f"{name}_{p}", v)
        nodes.append(helper.make_node("BatchNormalization", [f"{name}_c"] + [f"{name}_{p}" for p in "gbmv"],
                                      [f"{name}_bn"], name=f"{name}_bn"))
        if relu:
            nodes.append(helper.make_node("Relu", [f"{name}_bn"], [f"{name}_r"], name=f"{name}_relu"))
            return f"{name}_r"
        return f"{name}_bn"

    y = conv_bn(conv_bn("x", "c1", True), "c2", False)
    nodes += [helper.make_node("Add", [y, "x"], ["s"], name="residual"),
              helper.make_node("Relu", ["s"], ["sr"], name="relu_out"),
              helper.make_node("GlobalAveragePool", ["sr"], ["g"], name="gap"),
              helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
              helper.make_node("Gemm", ["f", const("fc_w", rng.standard_normal((5, 8))),
                                        const("fc_b", rng.standard_normal(5))], ["logits"], transB=1, name="fc"),
              helper.make_node("Softmax", ["logits"], ["y"], axis=1, name="softmax")]
    graph = helper.make_graph(nodes, "residual", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 6, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def tiny_mlp(path: Path, n_in: int = 16, n_hidden: int = 24, n_out: int = 8) -> Path:
    """x[1, n_in] → MatMul + Add → Relu → MatMul + Add → Softmax (float32), saved at ``path``."""
    rng = np.random.default_rng(3)
    w1, w2 = rng.standard_normal((n_in, n_hidden)), rng.standard_normal((n_hidden, n_out))
    inits = [numpy_helper.from_array(a.astype(np.float32), n) for a, n in
             ((w1, "w1"), (rng.standard_normal(n_hidden), "b1"), (w2, "w2"), (rng.standard_normal(n_out), "b2"))]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["hr"]), helper.make_node("MatMul", ["hr", "w2"], ["o"]),
             helper.make_node("Add", ["o", "b2"], ["ob"]), helper.make_node("Softmax", ["ob"], ["y"], axis=1)]
    graph = helper.make_graph(nodes, "tiny_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n_in])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n_out])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, path)
    return path


def _elem_type(v) -> int:
    """FLOAT for any float example array (float64 examples feed float32 inputs), else its own type."""
    dtype = np.asarray(v).dtype
    return TensorProto.FLOAT if dtype.kind == "f" else helper.np_dtype_to_tensor_dtype(dtype)


def model_of(nodes, inputs: dict[str, np.ndarray], outputs, opset: int = 13, inits=None) -> onnx.ModelProto:
    """One graph of ``nodes``: graph inputs named and shaped as ``inputs`` (example arrays; float32 unless
    an example is an integer or bool array),
    ``outputs`` names (shape unknown) or {name: shape}, ``inits`` {name: array} as initializers."""
    shapes = outputs if isinstance(outputs, dict) else dict.fromkeys(outputs)
    graph = helper.make_graph(
        nodes, "t",
        [helper.make_tensor_value_info(k, _elem_type(v), np.shape(v)) for k, v in inputs.items()],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, s) for o, s in shapes.items()],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def rand(*shape, seed=0, low=None):
    """float32 standard normal of ``shape``; with ``low``: |x| + low (positive, e.g. variances)."""
    x = np.asarray(np.random.default_rng(seed).standard_normal(shape), np.float32)
    return x if low is None else np.asarray(np.abs(x) + low, np.float32)


def model_bytes(nodes, inputs, outputs=("Y",), inits=None, opset=13, domain_opsets=()) -> bytes:
    """A serialized ONNX model of ``nodes`` (outputs float, shape unknown). inputs: {name: shape} (float)
    or {name: (elem_type, shape)}; ``domain_opsets``: extra (domain, version) imports."""
    f = TensorProto.FLOAT
    vis = [helper.make_tensor_value_info(k, *(v if isinstance(v, tuple) and isinstance(v[0], int) and
                                              not isinstance(v[1], int) else (f, v))) for k, v in inputs.items()]
    graph = helper.make_graph(nodes, "bad", vis, [helper.make_tensor_value_info(o, f, None) for o in outputs],
                              initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()])
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in domain_opsets]
    return helper.make_model(graph, opset_imports=opsets).SerializeToString()


def good_model() -> bytes:
    """X[1, 3, 8, 8] → Conv 3x3 (8 channels, pads 1) → Relu → Y: a model tinyfuse compiles."""
    w = np.random.default_rng(0).standard_normal((8, 3, 3, 3)).astype(np.float32)
    return model_bytes([helper.make_node("Conv", ["X", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                        helper.make_node("Relu", ["c"], ["Y"])], {"X": [1, 3, 8, 8]}, inits={"W": w})
