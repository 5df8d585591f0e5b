"""The sanitizer family models (tests/builders/sanit_families.py) of the op families merged with the
recurrent and streaming work, each with its independent oracle:

- float ONNX graphs, oracle onnxruntime: Pad edge / reflect / wrap (nn.border_pad), MaxPool with its
  Indices output (nn.max_pool2d_indices, int64 exact), LSTM and GRU (nn.lstm, nn.gru), Resize cubic
  and antialiased linear (the taps kernel, lower/resize_taps.py);
- stateful .tflite models run frame after frame (``FamilyModel.frames``; the multi-model harness
  resets the state region once and runs every frame with the state carried), oracle one TFLite Micro
  interpreter invoked frame after frame (it keeps its variable tensors and resource variables):
  SVDF float and int8 (nn.svdf, qnn.svdf), UNIDIRECTIONAL_SEQUENCE_LSTM int8, 16x8 and float (qnn.lstm, qnn.lstm16,
  nn.lstm), the microWakeWord-like ring-buffer model of tests/builders/tflm_state.py (16-byte step:
  the ring_buffer pass turns its shift into a moving window of the state region that wraps within
  the frames run here), its read-after-write and variable-tensor models;
- an ONNX LSTM with state inputs and outputs compiled ``stateful`` (h_in=h_out, c_in=c_out), oracle
  onnxruntime with the state fed back.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from tests.builders.float_models import rand
from tests.conftest import ort_run

N = helper.make_node


def _family():
    from tests.builders.sanit_families import FamilyModel, _onnx_float
    return FamilyModel, _onnx_float


def onnx_new_models() -> list:
    """Float ONNX models: border pads, MaxPool Indices, LSTM, GRU, resize taps."""
    FamilyModel, _onnx_float = _family()
    pads = _onnx_float("f_border_pad", [
        N("Pad", ["X", "p1"], ["Y"], mode="reflect"), N("Pad", ["X", "p2"], ["Y2"], mode="edge"),
        N("Pad", ["X", "p3", "", "ax"], ["Y3"], mode="wrap")],
        {"X": rand(1, 2, 4, 5)}, ["Y", "Y2", "Y3"], opset=19,
        inits={"p1": np.array([0, 0, 2, 3, 0, 1, 3, 4], np.int64), "p2": np.array([0, 1, 2, 0, 0, 0, 5, 3], np.int64),
               "p3": np.array([3, 2, 1, 6], np.int64), "ax": np.array([2, 3], np.int64)})
    x = rand(1, 2, 7, 6)
    graph = helper.make_graph([N("MaxPool", ["X"], ["Y", "I"], kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1]),
                               N("MaxPool", ["X"], ["Y2", "I2"], kernel_shape=[2, 2], storage_order=1)], "t",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info(n, t, None) for n, t in
                               (("Y", TensorProto.FLOAT), ("I", TensorProto.INT64), ("Y2", TensorProto.FLOAT),
                                ("I2", TensorProto.INT64))])
    mp = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    indices = FamilyModel("f_max_pool_indices", mp, [x], ort_run(mp, {"X": x}), tol=1e-6)
    t, b, i, h = 4, 2, 3, 4
    lstm = _onnx_float("f_lstm", [N("LSTM", ["X", "W", "R", "B", "", "h0", "c0", "P"], ["Y", "Yh", "Yc"],
                                    hidden_size=h, direction="bidirectional", clip=0.8)],
                       {"X": rand(t, b, i), "h0": rand(2, b, h, seed=5), "c0": rand(2, b, h, seed=6)},
                       ["Y", "Yh", "Yc"], opset=14,
                       inits={"W": rand(2, 4 * h, i, seed=1), "R": rand(2, 4 * h, h, seed=2),
                              "B": rand(2, 8 * h, seed=3), "P": rand(2, 3 * h, seed=4)})
    gru = _onnx_float("f_gru", [N("GRU", ["X", "W", "R", "B", "", "h0"], ["Y", "Yh"], hidden_size=h,
                                  direction="reverse", linear_before_reset=1)],
                      {"X": rand(t, b, i), "h0": rand(1, b, h, seed=5)}, ["Y", "Yh"], opset=14,
                      inits={"W": rand(1, 3 * h, i, seed=1), "R": rand(1, 3 * h, h, seed=2), "B": rand(1, 6 * h, seed=3)})
    from tests.builders.resize_models import onnx_resize
    out = []
    for name, kw in (("f_resize_cubic", dict(out_size=(1, 2, 8, 11), mode="cubic")),
                     ("f_resize_antialias", dict(out_size=(1, 2, 3, 4), mode="linear", antialias=1))):
        m = onnx_resize((1, 2, 6, 7), **kw)
        xr = rand(1, 2, 6, 7, seed=9)
        out.append(FamilyModel(name, m, [xr], ort_run(m, {"X": xr}), tol=1e-5))
    return [pads, indices, lstm, gru, *out]


def tflm_frames(model: bytes, frames: list[list[np.ndarray]], n_outputs: int) -> list[np.ndarray]:
    """Every output of one TFLite Micro interpreter invoked once per frame (variables carried between
    invocations), stacked ``[frames, *shape]``."""
    import tflite_micro
    it = tflite_micro.runtime.Interpreter.from_bytes(model, arena_size=256 * 1024)
    outs = []
    for frame in frames:
        for i, x in enumerate(frame):
            it.set_input(np.ascontiguousarray(x), i)
        it.invoke()
        outs.append([np.array(it.get_output(k), copy=True) for k in range(n_outputs)])
    return [np.stack([o[k] for o in outs]) for k in range(n_outputs)]


def _stateful(name, model: bytes, shape, dtype, n_frames, n_outputs=1, tol=None, seed=0, carries=True):
    """``n_frames`` random frames and TFLM's outputs; ``carries``: the state matters (the last frame
    run from the reset state gives another output 0 than after the earlier frames)."""
    FamilyModel, _ = _family()
    rng = np.random.default_rng(seed)
    xs = (rng.integers(-128, 128, (n_frames, *shape)).astype(np.int8) if dtype == "int8"
          else rng.integers(-20000, 20000, (n_frames, *shape)).astype(np.int16) if dtype == "int16"
          else rng.standard_normal((n_frames, *shape)).astype(np.float32))
    want = tflm_frames(model, [[x] for x in xs], n_outputs)
    if carries:
        assert not np.array_equal(tflm_frames(model, [[xs[-1]]], 1)[0][0], want[0][-1]), f"{name}: state unused"
    return FamilyModel(name, model, [xs], want, tol=tol, frames=n_frames)


def onnx_stream_lstm(name: str, frames: int = 6, hidden: int = 5, inp: int = 3):
    """A one-step ONNX LSTM with its h / c state as graph inputs and outputs (the PyTorch export),
    compiled with ``stateful`` pairs (h_in=h_out, c_in=c_out); oracle onnxruntime with the state fed
    back, starting from zeros (``<name>_reset``). Output: Y [1, 1, 1, hidden] of every frame."""
    FamilyModel, _ = _family()
    from tests.builders.float_models import model_of
    h0 = np.zeros((1, 1, hidden), np.float32)
    model = model_of([N("LSTM", ["x", "W", "R", "B", "", "h_in", "c_in"], ["Y", "h_out", "c_out"],
                        hidden_size=hidden)], {"x": rand(1, 1, inp), "h_in": h0, "c_in": h0},
                     ["Y", "h_out", "c_out"], 14,
                     {"W": rand(1, 4 * hidden, inp, seed=1), "R": rand(1, 4 * hidden, hidden, seed=2),
                      "B": rand(1, 8 * hidden, seed=3)})
    xs = rand(frames, 1, 1, inp, seed=4)
    h, c, ys = h0, h0, []
    for x in xs:
        y, h, c = ort_run(model, {"x": x, "h_in": h, "c_in": c})
        ys.append(y)
    assert not np.allclose(ort_run(model, {"x": xs[-1], "h_in": h0, "c_in": h0})[0], ys[-1], atol=1e-4)
    return FamilyModel(name, model, [xs], [np.stack(ys)], tol=1e-4, frames=frames,
                       options={"stateful": (("h_in", "h_out"), ("c_in", "c_out"))})


def stateful_models() -> list:
    """SVDF float / int8 (int16 and int8 state), LSTM int8, 16x8 and float, the ring-buffer streaming model,
    a read of a state after its write in one frame, a variable tensor nothing assigns, and an ONNX
    LSTM with state inputs / outputs compiled ``stateful``."""
    from tests.builders.tflm_lstm import lstm
    from tests.builders.tflm_lstm16 import lstm16
    from tests.builders.tflm_state import read_after_write_model, ring_model, variable_tensor_model
    from tests.builders.tflm_svdf import svdf
    return [
        _stateful("s_svdf_float", svdf(2, 5, 6, 4, 3, state="float32", activation="RELU"), (2, 5), "float32", 6,
                  tol=1e-5),
        _stateful("s_svdf_int16_state", svdf(1, 8, 6, 4, 2), (1, 8), "int8", 6, seed=1),
        _stateful("s_svdf_int8_state", svdf(2, 5, 4, 3, 1, state="int8", state_q=(0.02, 3)), (2, 5), "int8", 5,
                  seed=2),
        _stateful("s_lstm_int8", lstm(2, 3, 4, 5), (2, 3, 4), "int8", 5, seed=3),
        _stateful("s_lstm_16x8", lstm16(2, 3, 5, 6, seed=4, x_q=(2.0 ** -11, 9)), (2, 3, 5), "int16", 5, seed=8),
        _stateful("s_lstm_float", lstm(1, 2, 3, 4, seed=5, int8=False, time_major=True), (2, 1, 3), "float32", 4,
                  tol=1e-5, seed=5),
        _stateful("s_ring_buffer", ring_model(5, 16), (1, 1, 16), "int8", 14, n_outputs=2, seed=4),
        _stateful("s_read_after_write", read_after_write_model(16), (1, 1, 16), "int8", 3, seed=6),
        _stateful("s_variable_tensor", variable_tensor_model(6, 5), (1, 6), "int8", 2, seed=7, carries=False),
        onnx_stream_lstm("s_onnx_stream_lstm"),
    ]


__all__ = ["onnx_new_models", "stateful_models", "tflm_frames"]
