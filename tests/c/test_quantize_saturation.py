"""A float input far outside int32 range quantizes to the saturated code, not undefined behaviour.

ONNX QuantizeLinear (opset 13): y = saturate(round(x / scale) + zero_point). The generated C used to
convert round(x / scale) to int32 directly, undefined for |x / scale| >= 2^31 (UBSan: signed overflow;
in practice -1e10 and -1e3 gave different codes). Hand-computed expectation: scale 0.05, zero point 3:
-1e10 → -128 → (-128 - 3) · 0.05 = -6.55; +1e10 → 127 → 6.2; 6.4 → 128 + 3 → 127 → 6.2; -5 → -100 + 3 = -97
→ -5.0.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from tests.conftest import compile_and_run, require_programs


def _qdq_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])
    inits = [helper.make_tensor("s", TensorProto.FLOAT, [], [0.05]), helper.make_tensor("z", TensorProto.INT8, [], [3])]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    return helper.make_model(helper.make_graph(nodes, "qbig", [x], [y], inits),
                             opset_imports=[helper.make_opsetid("", 13)])


def test_quantize_of_huge_floats_saturates(tmp_path):
    require_programs("gcc")
    x = np.array([[-1e10, -1e3, 1e10, 3e9, -5.0, 0.0, 6.4, 2.0 ** 31]], np.float32)
    (y,), _ = compile_and_run(_qdq_model(), [x], tmp_path)
    expected = np.array([[-6.55, -6.55, 6.2, 6.2, -5.0, 0.0, 6.2, 6.2]], np.float32)
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-6)
