"""One-op tests of ONNX LSTM and GRU (float32): models built with onnx.helper, compiled → gcc → run,
every output (Y, Y_h, Y_c) compared with onnxruntime and the numpy interpreter within 1e-4 × max|ref|
(tests.conftest.check). onnxruntime refuses ``layout = 1``; those cases are compared with the same
layer in layout 0 between explicit Transposes (``oracle_nodes``)."""
from __future__ import annotations

import pytest
from onnx import helper

from tests.builders import rand
from tests.conftest import check

N = helper.make_node

CASES = {  # id: (op, direction, options)
    "lstm_forward": ("LSTM", "forward", {}),
    "lstm_reverse_peepholes": ("LSTM", "reverse", {"peepholes": True}),
    "lstm_bidirectional_clip": ("LSTM", "bidirectional", {"clip": 0.7}),
    "lstm_no_bias_no_state": ("LSTM", "forward", {"bias": False, "state": False}),
    "lstm_batchwise_bidirectional": ("LSTM", "bidirectional", {"layout": 1}),
    "gru_forward": ("GRU", "forward", {}),
    "gru_reverse_linear_before_reset": ("GRU", "reverse", {"lbr": 1}),
    "gru_bidirectional_clip": ("GRU", "bidirectional", {"clip": 0.9}),
    "gru_no_bias_no_state_lbr": ("GRU", "forward", {"bias": False, "state": False, "lbr": 1}),
    "gru_batchwise": ("GRU", "forward", {"layout": 1}),
}
T, B, IN, H = 5, 2, 3, 4


def _layer(op, direction, o, layout, x="X", states=("h0", "c0"), outs=("Y", "Yh", "Yc")):
    lstm = op == "LSTM"
    ins = [x, "W", "R", "B" if o.get("bias", True) else "", "", states[0] if o.get("state", True) else ""]
    if lstm:
        ins += [states[1] if o.get("state", True) else "", "P" if o.get("peepholes") else ""]
    kw = {"hidden_size": H, "direction": direction, "layout": layout}
    if "clip" in o:
        kw["clip"] = o["clip"]
    if "lbr" in o:
        kw["linear_before_reset"] = o["lbr"]
    return N(op, ins, list(outs[:3 if lstm else 2]), **kw)


@pytest.mark.parametrize("case", list(CASES))
def test_recurrent_vs_onnxruntime(tmp_path, case):
    op, direction, o = CASES[case]
    d, g, layout = 2 if direction == "bidirectional" else 1, 4 if op == "LSTM" else 3, o.get("layout", 0)
    inits = {"W": rand(d, g * H, IN, seed=1), "R": rand(d, g * H, H, seed=2), "B": rand(d, 2 * g * H, seed=3),
             "P": rand(d, 3 * H, seed=4)}
    inputs = {"X": rand(B, T, IN) if layout else rand(T, B, IN)}
    if o.get("state", True):
        for k, name in enumerate(("h0", "c0")[:1 + (op == "LSTM")]):
            inputs[name] = rand(B, d, H, seed=5 + k) if layout else rand(d, B, H, seed=5 + k)
    outputs = ["Y", "Yh", "Yc"][:3 if op == "LSTM" else 2]
    oracle = None
    if layout:   # the same layer in layout 0 between Transposes
        pre = [N("Transpose", ["X"], ["xt"], perm=[1, 0, 2]), N("Transpose", ["h0"], ["ht"], perm=[1, 0, 2]),
               N("Transpose", ["c0"], ["ct"], perm=[1, 0, 2])][:2 + (op == "LSTM")]
        post = [N("Transpose", ["y0"], ["Y"], perm=[2, 0, 1, 3]), N("Transpose", ["yh0"], ["Yh"], perm=[1, 0, 2]),
                N("Transpose", ["yc0"], ["Yc"], perm=[1, 0, 2])][:len(outputs)]
        oracle = pre + [_layer(op, direction, o, 0, "xt", ("ht", "ct"), ("y0", "yh0", "yc0"))] + post
    check(tmp_path, [_layer(op, direction, o, layout)], inputs, outputs, opset=14, inits=inits,
          oracle_nodes=oracle)


def test_only_y_h_is_used(tmp_path):
    """Y omitted (''), Y_h feeds an Add: the packed output's state row is a view read by the next kernel."""
    nodes = [N("LSTM", ["X", "W", "R"], ["", "Yh"], hidden_size=H), N("Add", ["Yh", "Yh"], ["Z"])]
    check(tmp_path, nodes, {"X": rand(T, B, IN)}, ["Z"], opset=14,
          inits={"W": rand(1, 4 * H, IN, seed=1), "R": rand(1, 4 * H, H, seed=2)})
