import importlib.util
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

_PATH = Path(__file__).resolve().parents[2] / "examples" / "build_models.py"
_spec = importlib.util.spec_from_file_location("build_models", _PATH)
build_models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_models)


def test_dscnn_builds_and_runs(tmp_path):
    path = build_models.build_dscnn(str(tmp_path / "dscnn_kws.onnx"), seed=0)
    model = onnx.load(path)

    ops = [n.op_type for n in model.graph.node]
    assert ops.count("Conv") == 9
    assert ops.count("BatchNormalization") == 9
    groups = [next((a.i for a in n.attribute if a.name == "group"), 1)
              for n in model.graph.node if n.op_type == "Conv"]
    assert groups.count(64) == 4  # depthwise
    assert groups.count(1) == 5   # conv1 + 4 pointwise

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feed = build_models.calibration_data(1, seed=1)[0]
    (probs,) = sess.run(["probs"], feed)
    assert probs.shape == (1, 12)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)


def test_calibration_data_seeded():
    a = build_models.calibration_data(3, seed=1)
    b = build_models.calibration_data(3, seed=1)
    assert len(a) == 3 and a[0]["input"].shape == (1, 1, 49, 10)
    assert a[0]["input"].dtype == np.float32
    assert all(np.array_equal(x["input"], y["input"]) for x, y in zip(a, b))


def test_quantized_demo_is_qdq_int8(tmp_path):
    """make run's int8 demo: quantize_static QDQ, per-channel int8 weights, and onnxruntime runs it."""
    import onnx
    import onnxruntime as ort
    mod = build_models
    f = mod.build_dscnn(str(tmp_path / "f.onnx"))
    q = mod.quantize_dscnn(f, str(tmp_path / "q.onnx"), n_calibration=4)
    ops = [n.op_type for n in onnx.load(q).graph.node]
    assert ops.count("QuantizeLinear") >= 10 and "BatchNormalization" not in ops
    x = mod.calibration_data(1, seed=9)[0]
    y = ort.InferenceSession(q, providers=["CPUExecutionProvider"]).run(None, x)[0]
    assert y.shape == (1, 12)
