"""Build a streaming LSTM classifier (float32 ONNX) the way ``torch.onnx.export`` writes one.

The PyTorch module it mirrors (one frame per call, the state passed in and returned)::

    class StreamLSTM(nn.Module):                  # nn.LSTM(F, H) + nn.Linear(H, C)
        def forward(self, x, h, c):               # x [1, 1, F], h/c [1, 1, H]
            y, (h, c) = self.lstm(x, (h, c))      # y [1, 1, H]
            return self.fc(y.squeeze(0)), h, c     # logits [1, C]

    torch.onnx.export(m, (x, h0, c0), path, input_names=["x", "h_in", "c_in"],
                      output_names=["logits", "h_out", "c_out"], opset_version=17)

What the exporter writes, built here with onnx.helper (torch is not needed): one ``LSTM`` node
(hidden_size H, layout 0) whose W, R, B initializers hold PyTorch's ``weight_ih_l0``,
``weight_hh_l0`` and ``bias_ih_l0 ‖ bias_hh_l0`` with the gate blocks reordered from PyTorch's
(i, f, g, o) to ONNX's (i, o, f, c) and a leading num_directions axis; ``Squeeze(Y, axes=[1])``
(num_directions), ``Squeeze(axes=[0])`` for ``y.squeeze(0)`` and ``Gemm(transB=1)`` for the Linear.
Weights are drawn as PyTorch initializes them (uniform ±1/sqrt(H)) from numpy.random.default_rng(seed):
seeded, not trained.

Compile it as a streaming model: ``tinyfuse run stream_lstm.onnx --stateful h_in=h_out,c_in=c_out``.

Usage: python examples/build_lstm.py OUTDIR   -> writes OUTDIR/stream_lstm.onnx
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FEATURES, HIDDEN, CLASSES = 10, 32, 4
STATE_PAIRS = (("h_in", "h_out"), ("c_in", "c_out"))


def _onnx_gates(w: np.ndarray, hidden: int) -> np.ndarray:
    """PyTorch's gate blocks (i, f, g, o) along axis 0 → ONNX's (i, o, f, c)."""
    i, f, g, o = (w[k * hidden:(k + 1) * hidden] for k in range(4))
    return np.concatenate([i, o, f, g])


def build_stream_lstm(path, seed=0, features=FEATURES, hidden=HIDDEN, classes=CLASSES) -> str:
    rng = np.random.default_rng(seed)
    bound = 1.0 / np.sqrt(hidden)

    def uniform(*shape):
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    w_ih, w_hh, b_ih, b_hh = uniform(4 * hidden, features), uniform(4 * hidden, hidden), uniform(4 * hidden), \
        uniform(4 * hidden)
    fc_w, fc_b = uniform(classes, hidden), uniform(classes)
    inits = [numpy_helper.from_array(a, n) for a, n in (
        (_onnx_gates(w_ih, hidden)[None], "onnx::LSTM_W"), (_onnx_gates(w_hh, hidden)[None], "onnx::LSTM_R"),
        (np.concatenate([_onnx_gates(b_ih, hidden), _onnx_gates(b_hh, hidden)])[None], "onnx::LSTM_B"),
        (np.array([1], np.int64), "onnx::Squeeze_axes"), (np.array([0], np.int64), "onnx::Squeeze_axes_1"),
        (fc_w, "fc.weight"), (fc_b, "fc.bias"))]
    nodes = [
        helper.make_node("LSTM", ["x", "onnx::LSTM_W", "onnx::LSTM_R", "onnx::LSTM_B", "", "h_in", "c_in"],
                         ["/lstm/LSTM_output_0", "h_out", "c_out"], name="/lstm/LSTM", hidden_size=hidden),
        helper.make_node("Squeeze", ["/lstm/LSTM_output_0", "onnx::Squeeze_axes"], ["/lstm/Squeeze_output_0"],
                         name="/lstm/Squeeze"),
        helper.make_node("Squeeze", ["/lstm/Squeeze_output_0", "onnx::Squeeze_axes_1"], ["/Squeeze_output_0"],
                         name="/Squeeze"),
        helper.make_node("Gemm", ["/Squeeze_output_0", "fc.weight", "fc.bias"], ["logits"], name="/fc/Gemm",
                         alpha=1.0, beta=1.0, transB=1),
    ]
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "main_graph",
        [helper.make_tensor_value_info("x", f, [1, 1, features]),
         helper.make_tensor_value_info("h_in", f, [1, 1, hidden]),
         helper.make_tensor_value_info("c_in", f, [1, 1, hidden])],
        [helper.make_tensor_value_info("logits", f, [1, classes]),
         helper.make_tensor_value_info("h_out", f, [1, 1, hidden]),
         helper.make_tensor_value_info("c_out", f, [1, 1, hidden])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="pytorch",
                              producer_version="2.5.0")
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def frames(n, seed=1, features=FEATURES) -> np.ndarray:
    """n seeded random frames [n, 1, 1, features] (N(0, 1), like normalized sensor features)."""
    return np.random.default_rng(seed).standard_normal((n, 1, 1, features)).astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    print(build_stream_lstm(os.path.join(a.outdir, "stream_lstm.onnx"), seed=a.seed))


if __name__ == "__main__":
    main()
