"""The independent oracle of an ONNX model compiled with ``--stateful IN=OUT,...``: onnxruntime run
frame by frame with the state fed back (each OUT of frame k is the IN of frame k + 1; zeros at
frame 0, as ``<name>_reset``). Returns the outputs the compiled model keeps (the non-state outputs,
in graph order), so they compare one to one with the generated C's."""
from __future__ import annotations

import numpy as np

_DTYPES = {1: np.float32, 3: np.int8, 2: np.uint8, 6: np.int32, 7: np.int64}


def onnxruntime_frames(model_path, pairs, frames: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    """``frames[k]``: the non-state inputs of frame k in graph order; ``pairs``: (input, output) names.
    ``[k][i]``: non-state output i of frame k."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(str(model_path), so, providers=["CPUExecutionProvider"])
    state_in = dict(pairs)
    feeds_of = [i for i in sess.get_inputs() if i.name not in state_in]
    outs_kept = [o.name for o in sess.get_outputs() if o.name not in state_in.values()]
    state = {}
    for i in sess.get_inputs():
        if i.name in state_in:
            state[i.name] = np.zeros(i.shape, _DTYPES.get(_elem(i.type), np.float32))
    results = []
    for frame in frames:
        feeds = {i.name: np.asarray(x) for i, x in zip(feeds_of, frame)}
        got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {**feeds, **state})))
        state = {a: got[b] for a, b in pairs}
        results.append([got[n] for n in outs_kept])
    return results


def _elem(type_name: str) -> int:
    return {"tensor(float)": 1, "tensor(int8)": 3, "tensor(uint8)": 2, "tensor(int32)": 6,
            "tensor(int64)": 7}.get(type_name, 1)
