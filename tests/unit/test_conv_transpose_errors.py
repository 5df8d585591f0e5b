"""ConvTranspose attributes tinyfuse does not support, or that contradict each other, are one-line
TinyfuseErrors naming the node (pure Python: frontend and passes only)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.builders import model_of, rand
from tinyfuse.errors import TinyfuseError

N = helper.make_node


def _convert(xs, ws, **attrs):
    from tinyfuse.frontend import from_onnx
    return from_onnx(model_of([N("ConvTranspose", ["X", "W"], ["Y"], name="up", **attrs)], {"X": rand(*xs)}, ["Y"],
                              13, {"W": rand(*ws, seed=1)}))


@pytest.mark.parametrize("xs,ws,attrs,message", [
    ((1, 1, 3, 3, 4, 5), (1, 2, 3, 3, 3, 3), {}, "only 1-D, 2-D and 3-D transposed convolution"),
    ((1, 2, 4, 4), (2, 3, 3, 3), dict(strides=[2, 2], output_padding=[2, 0]), "output_padding [2, 0] must be smaller"),
    ((1, 2, 4, 4), (2, 3, 3, 3), dict(kernel_shape=[2, 2]), "kernel_shape [2, 2] disagrees"),
    ((1, 3, 4, 4), (3, 3, 3, 3), dict(group=2), "group 2 disagree"),
    ((1, 2, 4, 4), (2, 3, 3, 3), dict(auto_pad="SAME"), "auto_pad 'SAME' is not valid"),
    ((1, 2, 4, 4), (2, 3, 3, 3), dict(pads=[-1, 0, 0, 0]), "must be non-negative"),
])
def test_unsupported_or_contradictory_attributes(xs, ws, attrs, message):
    with pytest.raises(TinyfuseError, match="ConvTranspose") as e:
        _convert(xs, ws, **attrs)
    assert message in str(e.value) and "'up'" in str(e.value) and "\n" not in str(e.value)


def test_attributes_become_the_ops_crop():
    """pads, output_padding and output_shape (ONNX spec formulas) as the op's (top, left, bottom, right)."""
    y = _convert((1, 2, 5, 5), (2, 3, 3, 3), strides=[2, 2], pads=[1, 0, 1, 2], output_padding=[1, 1]).main.body
    assert y.attrs["padding"] == (1, 0, 0, 1) and y.ty.shape == (1, 3, 10, 10)
    y = _convert((1, 2, 5, 5), (2, 3, 3, 3), strides=[3, 2], output_shape=[16, 10]).main.body
    assert y.ty.shape == (1, 3, 16, 10) and y.attrs["padding"] == (0, 1, -1, 0)   # totals -1 and 1, the odd one first
    y = _convert((1, 2, 5, 5), (2, 3, 3, 3), strides=[2, 2], auto_pad="SAME_UPPER").main.body
    assert y.ty.shape == (1, 3, 10, 10) and y.attrs["padding"] == (0, 0, 1, 1)


def test_per_channel_int8_weights_with_groups_are_refused():
    """QDQ per-channel weight scales need one group (IOHW axis 1 holds only M of the G·M channels)."""
    from tests.builders.qdq import _Graph
    from tinyfuse.driver import compile_model
    g = _Graph()
    x = g.dq(g.node("Transpose", [g.input("x", (1, 4, 4, 4))], "t", perm=[0, 3, 1, 2]), (0.05, 0))
    w = g.dq_const(np.ones((4, 3, 2, 2), np.int8), np.full(3, 0.01, np.float32), np.int8, axis=1)
    y = g.node("ConvTranspose", [x, w], "up", group=2, strides=[2, 2])
    with pytest.raises(TinyfuseError, match="per-channel scales: axis 1, one group"):
        compile_model(g.finish(y, (0.1, 0), False, nchw=True))
