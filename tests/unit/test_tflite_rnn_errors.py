"""TFLite UNIDIRECTIONAL_SEQUENCE_LSTM and SVDF models tinyfuse cannot compile exactly give one
clear error line naming the operator (tests/builders/tflm_lstm.py, tflm_svdf.py build them)."""
from __future__ import annotations

import pytest

from tinyfuse.errors import TinyfuseError


@pytest.mark.parametrize("kw, needle", [
    (dict(activation="RELU"), "activation RELU: tinyfuse's LSTM kernel computes tanh"),
    (dict(int8=False, activation="RELU6"), "activation RELU6"),
    (dict(cell_scale=0.0003), "is not a power of two"),
    (dict(cifg=True), "int8 CIFG models, without the input gate, are not supported: TFLM refuses them too"),
])
def test_lstm_refused(kw, needle):
    from tests.builders.tflm_lstm import lstm
    from tinyfuse.frontend.tflite.reader import from_tflite
    if "cell_scale" in kw:
        model = _lstm_cell_scale(lstm, kw["cell_scale"])
    else:
        model = lstm(batch=1, steps=2, inp=3, hidden=4, **kw)
    with pytest.raises(TinyfuseError) as e:
        from_tflite(model, "m")
    msg = str(e.value)
    assert msg.startswith("operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM v1") and needle in msg and "\n" not in msg, msg


def _lstm_cell_scale(lstm, scale):
    """An int8 LSTM whose int16 cell state has ``scale`` (not a power of two)."""
    import math
    from unittest import mock

    from tests.builders import tflm_lstm
    real = tflm_lstm._tensor

    def tensor(shape, dtype, name, q=None, data=None, variable=False):
        if name == "c" and q is not None:
            q = (scale, 0)
        return real(shape, dtype, name, q, data, variable)
    with mock.patch.object(tflm_lstm, "_tensor", tensor):
        assert not math.log2(scale).is_integer()
        return lstm(batch=1, steps=2, inp=3, hidden=4)


@pytest.mark.parametrize("builder", ["lstm", "svdf"])
def test_state_must_be_variable(builder):
    from tinyfuse.frontend.tflite.reader import from_tflite
    if builder == "lstm":
        from tests.builders.tflm_lstm import lstm
        model, needle = lstm(batch=1, steps=2, inp=3, hidden=4, variable_state=False), "must be a variable tensor"
    else:
        from tests.builders.tflm_svdf import svdf
        model, needle = svdf(batch=1, inp=3, filters=2, memory=3, rank=1, variable_state=False), \
            "(the activation state) must be a variable tensor"
    with pytest.raises(TinyfuseError) as e:
        from_tflite(model, "m")
    assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)
