"""Tiny streaming .tflite models with state, built with the tflite-micro model editor and run by
TFLite Micro (one interpreter, frame after frame, keeping its variables) as the exact oracle:

- :func:`ring_model`: the microWakeWord pattern. A CALL_ONCE init subgraph assigns the resource
  variables; the main subgraph reads a ring buffer, concatenates the new frame, slices off the
  oldest frame and assigns the rest back; a second variable accumulates the frames (int8 ADD,
  read and assigned in one invocation). Outputs: the concatenation, reshaped to [1, (history + 1) *
  width] and requantized to zero point 0 (the ring's bytes + 3, saturating: every byte of the state
  is observed, and the concatenation is no model output, so it can become a ring buffer), and the
  accumulator.
- :func:`variable_tensor_model`: an ``is_variable`` tensor (TFLM resets it to its zero point)
  read by an ADD.
"""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_misc import _mods, act, const, operator

Q = (0.05, -3)          # (scale, zero point) of every int8 tensor


_op = operator


def _handle(name: str, shared: str):
    me, S = _mods()
    t = me.Tensor(shape=(), dtype=S.TensorType.RESOURCE, name=name)
    return t, _op("VAR_HANDLE", [], [t], "VarHandleOptions", sharedName=shared)


def ring_init(history: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The initial (ring [1, history, width], accumulator [1, 1, width]) int8 values of ring_model."""
    ring = (np.arange(history * width, dtype=np.int64) * 7 % 50 - 25).astype(np.int8).reshape(1, history, width)
    return ring, np.full((1, 1, width), 4, np.int8)


def ring_model(history: int = 3, width: int = 4) -> bytes:
    """Input x int8 [1, 1, width]; outputs ring [1, (history + 1) * width] (the ring buffer + 3) and
    acc [1, 1, width]."""
    me, S = _mods()
    ring0, acc0 = ring_init(history, width)
    h_ring, vh_ring = _handle("h_ring", "ring/states")
    h_acc, vh_acc = _handle("h_acc", "acc/states")
    init_ops = [vh_ring, _op("ASSIGN_VARIABLE", [h_ring, const(ring0, "ring0", Q)], []),
                vh_acc, _op("ASSIGN_VARIABLE", [h_acc, const(acc0, "acc0", Q)], [])]
    x = act((1, 1, width), Q, "x")
    m_ring, mh_ring = _handle("m_ring", "ring/states")
    m_acc, mh_acc = _handle("m_acc", "acc/states")
    old = act((1, history, width), Q, "ring_read")
    cat = act((1, history + 1, width), Q, "ring_concat")
    new = act((1, history, width), Q, "ring_next")
    acc_old, acc_new = act((1, 1, width), Q, "acc_read"), act((1, 1, width), Q, "acc")
    flat = act((1, (history + 1) * width), Q, "ring_flat")
    seen = act((1, (history + 1) * width), (Q[0], 0), "ring")
    ops = [_op("CALL_ONCE", [], [], "CallOnceOptions", initSubgraphIndex=1), mh_ring, mh_acc,
           _op("READ_VARIABLE", [m_ring], [old]),
           _op("CONCATENATION", [old, x], [cat], "ConcatenationOptions", axis=1),
           _op("STRIDED_SLICE", [cat, const(np.array([0, 1, 0], np.int32), "begin"),
                                 const(np.array([0, 0, 0], np.int32), "end"),
                                 const(np.array([1, 1, 1], np.int32), "strides")], [new],
               "StridedSliceOptions", beginMask=0b101, endMask=0b111),
           _op("ASSIGN_VARIABLE", [m_ring, new], []),
           _op("READ_VARIABLE", [m_acc], [acc_old]),
           _op("ADD", [acc_old, x], [acc_new], "AddOptions"),
           _op("ASSIGN_VARIABLE", [m_acc, acc_new], []),
           _op("RESHAPE", [cat, const(np.array([1, (history + 1) * width], np.int32), "flat_shape")], [flat]),
           _op("QUANTIZE", [flat], [seen])]
    m = me.Model(description="tinyfuse tflm_state ring")
    m.add_subgraph(tensors=[x, seen, acc_new], operators=ops, inputs=[x], outputs=[seen, acc_new], name="main")
    m.add_subgraph(tensors=[], operators=init_ops, inputs=[], outputs=[], name="init")
    return bytes(m.build())


def variable_tensor_model(width: int = 6, zero_point: int = 5) -> bytes:
    """y = ADD(x, v) int8 [1, width], v an ``is_variable`` tensor that nothing assigns (its zero point)."""
    me, _ = _mods()
    x, y = act((1, width), Q, "x"), act((1, width), Q, "y")
    v = act((1, width), (Q[0], zero_point), "v_state")
    v.is_variable = True
    m = me.Model(description="tinyfuse tflm_state variable tensor")
    m.add_subgraph(tensors=[x, v, y], operators=[_op("ADD", [x, v], [y], "AddOptions")], inputs=[x], outputs=[y])
    return bytes(m.build())


def read_after_write_model(width: int = 16) -> bytes:
    """Input x int8 [1, 1, width]; output [1, 2, width] = (v as the frame starts, v after
    ASSIGN_VARIABLE(v, x) in the same frame): a read before and a read after a write of one state.
    v starts as the CALL_ONCE init value (ring_init's accumulator)."""
    me, _ = _mods()
    _, v0 = ring_init(1, width)
    h_init, vh_init = _handle("h_init", "v")
    init_ops = [vh_init, _op("ASSIGN_VARIABLE", [h_init, const(v0, "v0", Q)], [])]
    x = act((1, 1, width), Q, "x")
    h, vh = _handle("h", "v")
    before, after = act((1, 1, width), Q, "v_before"), act((1, 1, width), Q, "v_after")
    y = act((1, 2, width), Q, "y")
    ops = [_op("CALL_ONCE", [], [], "CallOnceOptions", initSubgraphIndex=1), vh,
           _op("READ_VARIABLE", [h], [before]), _op("ASSIGN_VARIABLE", [h, x], []),
           _op("READ_VARIABLE", [h], [after]),
           _op("CONCATENATION", [before, after], [y], "ConcatenationOptions", axis=1)]
    m = me.Model(description="tinyfuse tflm_state read after write")
    m.add_subgraph(tensors=[x, y], operators=ops, inputs=[x], outputs=[y], name="main")
    m.add_subgraph(tensors=[], operators=init_ops, inputs=[], outputs=[], name="init")
    return bytes(m.build())


# okay_nabu's inner activations that depend on every stream state: the first conv (stream), the
# pointwise convs after the depthwise ones (stream_1 ... stream_4, via the concatenations) and the
# logit before the sigmoid (stream_5); int8, so equality with TFLM checks the state bytes' effect
OKAY_NABU_PROBES = (59, 63, 73, 83, 87, 91)


def with_outputs(tflite: bytes, tensors=OKAY_NABU_PROBES) -> bytes:
    """The model with subgraph 0's tensors ``tensors`` appended to its outputs (built in memory:
    the shared model file is never copied into the project)."""
    from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
    m = me.read(tflite)
    sg = m.subgraphs[0]
    sg.outputs = list(sg.outputs) + [sg.tensors[i] for i in tensors]
    return bytes(m.build())
