"""One-op tests vs onnxruntime for the forms the ONNX node tests (tests/conformance) cover thinly:
3-D and dilated pooling (1-D, 2-D, 3-D; ceil_mode, pads, count_include_pad)."""
from __future__ import annotations

import pytest
from onnx import helper

from tests.builders import rand
from tests.conftest import check

N = helper.make_node

POOL_CASES = {  # id: (op, input shape, attributes)
    "max_2d_dil2_s2_p1": ("MaxPool", (1, 2, 9, 10), dict(kernel_shape=[3, 2], strides=[2, 1], dilations=[2, 3],
                                                         pads=[1, 0, 2, 1])),
    "max_2d_dil_ceil": ("MaxPool", (1, 2, 10, 9), dict(kernel_shape=[2, 3], strides=[3, 2], dilations=[3, 2],
                                                       pads=[1, 1, 0, 0], ceil_mode=1)),
    "avg_2d_dil_excl": ("AveragePool", (1, 3, 8, 9), dict(kernel_shape=[3, 3], dilations=[2, 2], pads=[2, 1, 1, 2])),
    "avg_2d_dil_incl_ceil": ("AveragePool", (1, 2, 9, 8), dict(kernel_shape=[2, 2], strides=[2, 2], dilations=[2, 3],
                                                               pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)),
    "max_1d_dil": ("MaxPool", (2, 3, 12), dict(kernel_shape=[3], strides=[2], dilations=[2], pads=[1, 2])),
    "max_3d": ("MaxPool", (1, 2, 5, 6, 7), dict(kernel_shape=[2, 3, 2], strides=[2, 1, 2], pads=[1, 1, 0, 0, 1, 1])),
    "max_3d_dil_ceil": ("MaxPool", (1, 2, 7, 6, 8), dict(kernel_shape=[2, 2, 3], strides=[2, 2, 2],
                                                         dilations=[2, 1, 2], ceil_mode=1)),
    "avg_3d_excl": ("AveragePool", (2, 2, 6, 5, 7), dict(kernel_shape=[3, 2, 3], strides=[2, 1, 2],
                                                         pads=[1, 0, 1, 1, 1, 1])),
    "avg_3d_incl_ceil": ("AveragePool", (1, 3, 7, 7, 6), dict(kernel_shape=[3, 3, 2], strides=[2, 2, 2],
                                                              pads=[1, 1, 0, 0, 1, 1], ceil_mode=1,
                                                              count_include_pad=1)),
    "avg_3d_same_upper": ("AveragePool", (1, 2, 5, 6, 7), dict(kernel_shape=[2, 3, 3], strides=[2, 2, 1],
                                                               auto_pad="SAME_UPPER")),
}


@pytest.mark.parametrize("case", POOL_CASES, ids=list(POOL_CASES))
def test_pool_dilated_and_3d(tmp_path, case):
    op, shape, attrs = POOL_CASES[case]
    check(tmp_path, [N(op, ["X"], ["Y"], **attrs)], {"X": rand(*shape)}, ["Y"], opset=19)
