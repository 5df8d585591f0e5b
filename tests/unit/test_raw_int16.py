"""Unquantized (raw) int16 tensors, as TFLM's audio front ends carry samples: the data-movement ops
take them (RESHAPE here, as micro_speech's audio_preprocessor), the arithmetic ops refuse them with
one error line (their int16 kernels are int16x8: they need quantization parameters)."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse.errors import TinyfuseError


def _model(opcode: str, q=None) -> bytes:
    from tests.builders.tflm_signal import SignalNet
    m = SignalNet()
    x = m.input((1, 8), "int16", q=q)
    if opcode == "RESHAPE":
        y = m.tensor((2, 4), "int16", q=q)
        m.builtin("RESHAPE", [x, m.const(np.array([2, 4], np.int32))], y)
    else:
        y = m.tensor((1, 8), "int16", q=q)
        m.builtin(opcode, [x, x], y, "AddOptions")
    return m.build([y])


def test_reshape_moves_raw_int16_add_refuses_it():
    from tinyfuse.frontend.tflite.reader import from_tflite
    from tinyfuse.ir.interpreter import run_module
    x = np.arange(-4, 4, dtype=np.int16).reshape(1, 8) * 1000
    out = run_module(from_tflite(_model("RESHAPE"), "m"), [x])
    np.testing.assert_array_equal(np.asarray(out[0]), x.reshape(2, 4))
    with pytest.raises(TinyfuseError, match="int16 tensor .* has no quantization parameters") as e:
        from_tflite(_model("ADD"), "m")
    assert "\n" not in str(e.value)
