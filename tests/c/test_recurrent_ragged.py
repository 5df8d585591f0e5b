"""ONNX LSTM / GRU edges against onnxruntime (compiled → gcc → run, and the numpy interpreter; tests.conftest
check): per-row ``sequence_lens`` (ragged batches, constant and runtime), every activation of the ONNX list
with its alpha / beta, different activations per direction, LSTM ``input_forget``."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.builders import rand
from tests.conftest import check

N = helper.make_node
T, B, IN, H = 5, 3, 3, 4
ALPHA_BETA = {"affine": (0.7, -0.2), "leakyrelu": (0.05, None), "thresholdedrelu": (0.1, None),
              "scaledtanh": (1.3, 0.6), "hardsigmoid": (0.3, 0.4), "elu": (0.8, None)}
NO_PARAMS = ("relu", "tanh", "sigmoid", "softsign", "softplus")
NAMES = {"relu": "Relu", "tanh": "Tanh", "sigmoid": "Sigmoid", "affine": "Affine", "leakyrelu": "LeakyRelu",
         "thresholdedrelu": "ThresholdedRelu", "scaledtanh": "ScaledTanh", "hardsigmoid": "HardSigmoid",
         "elu": "Elu", "softsign": "Softsign", "softplus": "Softplus"}


def _run(tmp_path, op, direction, lens=None, runtime_lens=False, **attrs):
    d, g = 2 if direction == "bidirectional" else 1, 4 if op == "LSTM" else 3
    inits = {"W": rand(d, g * H, IN, seed=1), "R": rand(d, g * H, H, seed=2), "B": rand(d, 2 * g * H, seed=3)}
    inputs = {"X": rand(T, B, IN), "h0": rand(d, B, H, seed=5)}
    lens_name = ""
    if lens is not None:
        lens_name = "L"
        (inputs if runtime_lens else inits)["L"] = np.asarray(lens, np.int32)
    ins = ["X", "W", "R", "B", lens_name, "h0"]
    outs = ["Y", "Yh"]
    if op == "LSTM":
        inputs["c0"] = rand(d, B, H, seed=6)
        inits["P"] = rand(d, 3 * H, seed=4)
        ins += ["c0", "P"]
        outs.append("Yc")
    node = N(op, ins, outs, hidden_size=H, direction=direction, **attrs)
    check(tmp_path, [node], inputs, outs, opset=14, inits=inits)


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_sequence_lens_ragged(tmp_path, op, direction):
    """Rows of length 5, 2 and 0: Y zero past each length, Y_h / Y_c the state at each row's own last step
    (zeros for the empty row, as onnxruntime)."""
    _run(tmp_path, op, direction, lens=[5, 2, 0])


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
def test_sequence_lens_runtime_input(tmp_path, op):
    """sequence_lens as a graph input (int32 [B]), bidirectional."""
    _run(tmp_path, op, "bidirectional", lens=[3, 5, 1], runtime_lens=True)


def _acts_attrs(names):
    alphas = [ALPHA_BETA[n][0] for n in names if n in ALPHA_BETA]
    betas = [ALPHA_BETA[n][1] for n in names if n in ALPHA_BETA and ALPHA_BETA[n][1] is not None]
    kw = {"activations": [NAMES[n] for n in names]}
    if alphas:
        kw["activation_alpha"] = alphas
    if betas:
        kw["activation_beta"] = betas
    return kw


@pytest.mark.parametrize("act", list(NAMES))
def test_lstm_activation(tmp_path, act):
    """The activation in the gate slot f, then in the cell input and output slots g and h."""
    _run(tmp_path, "LSTM", "forward", clip=3.0, **_acts_attrs([act, "tanh", "tanh"]))
    _run(tmp_path, "LSTM", "reverse", **_acts_attrs(["sigmoid", act, act]))


@pytest.mark.parametrize("act", list(NAMES))
def test_gru_activation(tmp_path, act):
    _run(tmp_path, "GRU", "forward", linear_before_reset=1, **_acts_attrs(["sigmoid", act]))
    _run(tmp_path, "GRU", "reverse", clip=3.0, **_acts_attrs([act, "tanh"]))


def test_activations_differ_per_direction(tmp_path):
    """Bidirectional with other activations (and alphas) in the reverse direction."""
    _run(tmp_path, "LSTM", "bidirectional",
         **_acts_attrs(["hardsigmoid", "scaledtanh", "softsign", "sigmoid", "leakyrelu", "elu"]))
    _run(tmp_path, "GRU", "bidirectional", lens=[4, 1, 5], **_acts_attrs(["sigmoid", "relu", "hardsigmoid", "tanh"]))


def test_activation_defaults(tmp_path):
    """LeakyRelu, HardSigmoid and Elu without alpha / beta: the ONNX operators' defaults."""
    _run(tmp_path, "LSTM", "forward", activations=["HardSigmoid", "LeakyRelu", "Elu"])


def test_input_forget(tmp_path):
    """input_forget = 1: f = 1 − i; with peepholes, ragged rows, both directions."""
    _run(tmp_path, "LSTM", "bidirectional", lens=[2, 5, 4], input_forget=1)
