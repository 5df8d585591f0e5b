"""Models for the caller-owned I/O tests (``--io-buffers caller``)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def two_io_model() -> onnx.ModelProto:
    """x[1,4,6,6], z[1,3,6,6] → y0 = Conv1x1(Relu(x)) + z, y1 = Relu(z) (opset 13, seeded weights): the
    arena form runs a Relu in place over a model input."""
    w = np.random.default_rng(0).standard_normal((3, 4, 1, 1)).astype(np.float32)
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Conv", ["r", "w"], ["c"]),
             helper.make_node("Add", ["c", "z"], ["y0"]), helper.make_node("Relu", ["z"], ["y1"])]
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in
          (("x", [1, 4, 6, 6]), ("z", [1, 3, 6, 6]), ("y0", [1, 3, 6, 6]), ("y1", [1, 3, 6, 6]))]
    graph = helper.make_graph(nodes, "two_io", io[:2], io[2:], [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def two_io_feeds() -> dict[str, np.ndarray]:
    """Seeded standard-normal inputs of ``two_io_model``."""
    rng = np.random.default_rng(1)
    return {"x": rng.standard_normal((1, 4, 6, 6)).astype(np.float32),
            "z": rng.standard_normal((1, 3, 6, 6)).astype(np.float32)}
