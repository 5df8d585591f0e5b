"""ONNX LSTM/GRU attributes tinyfuse refuses give one clear error naming the node (an unknown
activation, an alpha / beta whose default onnxruntime and ONNX disagree on, a constant sequence_lens
outside [0, T]); sequence_lens equal to T for every row is accepted (the same as absent); the numpy reference matches the ONNX reference
evaluator (onnx.reference, independent) on one case per op."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.builders import model_of, rand
from tinyfuse.errors import TinyfuseError

N = helper.make_node
T, B, IN, H = 3, 2, 4, 5


def _model(op="LSTM", lens=None, **kw):
    g = 4 if op == "LSTM" else 3
    inits = {"W": rand(1, g * H, IN, seed=1), "R": rand(1, g * H, H, seed=2)}
    ins = ["X", "W", "R"]
    if lens is not None:
        inits["L"] = np.asarray(lens, np.int32)
        ins += ["", "L"]
    return model_of([N(op, ins, ["Y"], name="rnn", hidden_size=H, **kw)], {"X": rand(T, B, IN)}, ["Y"], 14, inits)


@pytest.mark.parametrize("kw, needle", [
    (dict(activations=["Relu", "Tanh", "Gelu"]), "activations ['relu', 'tanh', 'gelu'] are not 3 of"),
    (dict(activations=["Affine", "Tanh", "Tanh"]), "activation affine needs activation_alpha"),
    (dict(op="GRU", activations=["ScaledTanh", "Tanh"], activation_alpha=[1.0]),
     "activation scaledtanh needs activation_beta"),
    (dict(lens=[T, T + 1]), "sequence_lens [3, 4] outside [0, 3]"),
    (dict(op="GRU", direction="sideways"), "direction 'sideways'"),
    (dict(op="GRU", clip=-1.0), "clip -1.0 is not positive"),
])
def test_refused_with_a_clear_error(kw, needle):
    from tinyfuse.frontend import from_onnx
    with pytest.raises(TinyfuseError) as e:
        from_onnx(_model(**kw))
    msg = str(e.value)
    assert msg.startswith("node 'rnn' (") and needle in msg and "\n" not in msg, msg


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
def test_full_sequence_lens_and_reference(op):
    """The interpreter (ops/recurrent.py compute) equals onnx.reference on a model whose
    sequence_lens is T for every row, and on explicit default activations."""
    from onnx.reference import ReferenceEvaluator

    from tinyfuse.frontend import from_onnx
    from tinyfuse.ir.interpreter import run_module
    acts = ["Sigmoid", "Tanh", "Tanh"][:3 if op == "LSTM" else 2]
    model = _model(op, lens=[T, T], activations=acts)
    x = rand(T, B, IN)
    (got,) = run_module(from_onnx(model), [x])
    (ref,) = ReferenceEvaluator(model).run(None, {"X": x})
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def _lstm_types(cifg=False):
    from tinyfuse.ir.types import TensorType
    rows = (3 if cifg else 4) * H
    shapes = [(T, B, IN), (1, rows, IN), (1, rows, H), (1, 8 * H), (1, B, H), (1, B, H), (1, 3 * H)]
    return [TensorType(s, "float32") for s in shapes]


def test_lstm_operand_count_and_gate_coupling():
    """nn.lstm holds ONNX sequence_lens (8 operands) and TFLite's projection (9) apart by the count;
    10 operands, or TFLite's cifg (i = 1 − f) with ONNX input_forget (f = 1 − i), are refused."""
    from tinyfuse.ir.op import get_op
    from tinyfuse.ir.types import TensorType
    from tinyfuse.ops import recurrent  # noqa: F401  (registers nn.lstm)
    lstm = get_op("nn.lstm")
    attrs = {**lstm.attrs, "hidden_size": H}
    lens, pw, pb = TensorType((B,), "int32"), TensorType((1, 2, H), "float32"), TensorType((1, 2), "float32")
    assert lstm.infer(_lstm_types() + [lens], attrs).shape == (T + 2, 1, B, H)
    proj = _lstm_types(cifg=True)
    proj[2], proj[4] = TensorType((1, 3 * H, 2), "float32"), TensorType((1, B, 2), "float32")
    assert lstm.infer(proj + [pw, pb], {**attrs, "cifg": 1}).shape == ((T + 1) * B * 2 + B * H,)
    with pytest.raises(TinyfuseError, match="takes 7 operands, 8 with lens or 9 with a projection, got 10"):
        lstm.infer(proj + [pw, pb, lens], {**attrs, "cifg": 1})
    with pytest.raises(TinyfuseError, match="cifg .* and input_forget .* exclude each other"):
        lstm.infer(_lstm_types(cifg=True), {**attrs, "cifg": 1, "input_forget": 1})
