"""The twin of a --weights-dtype float16 build: the float32 build whose float constants hold the
binary16-rounded values (numpy's float32 → float16 → float32, round to nearest even), and the same
kernel code. The float16 build's outputs must equal the twin's exactly (binary16 → binary32 is exact)."""
from __future__ import annotations

import numpy as np


def compile_rounded_twin(monkeypatch, model, **options):
    """compile_model(model, weights_dtype='float16', ...) with the conversion replaced by rounding the
    float32 constants in place (they stay float32 in flash, read without tf_h2f)."""
    import tinyfuse.driver as driver

    def rounded(pool, kernels):
        for i, (name, arr) in enumerate(pool.arrays):
            if arr.dtype == np.float32 and np.all(np.abs(arr) <= 65504):
                pool.arrays[i] = (name, arr.astype(np.float16).astype(np.float32))
        return []

    with monkeypatch.context() as m:
        m.setattr(driver, "half_weights", rounded)
        return driver.compile_model(model, weights_dtype="float16", **options)


def fc_float32_model(w: np.ndarray, bias: np.ndarray, batch: int = 2) -> bytes:
    """x float32 [batch, K] → FULLY_CONNECTED(x, W, bias) → [batch, N]; W [N, K] and the bias float32
    constants (a float .tflite TFLite Micro runs)."""
    from tests.builders.tflite_weights import S, _Builder
    F32 = S.TensorType.FLOAT32
    b = _Builder()
    x, wt = b.tensor((batch, w.shape[1]), F32), b.tensor(w.shape, F32, w.astype(np.float32))
    bias_t, y = b.tensor(bias.shape, F32, bias.astype(np.float32)), b.tensor((batch, w.shape[0]), F32)
    b.op("FULLY_CONNECTED", [x, wt, bias_t], [y], S.BuiltinOptions.FullyConnectedOptions, S.FullyConnectedOptionsT())
    return b.build([x], [y])


def conv_bn_model(seed: int = 0):
    """X[1, 8, 10, 10] → Conv 3x3 (16, pads 1) → BatchNormalization → Relu → Y (float32 ONNX, opset 13):
    tinyfuse folds the BatchNormalization into the conv weights before rounding them to binary16."""
    from onnx import helper
    from tests.builders.float_models import model_of
    rng = np.random.default_rng(seed)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)   # noqa: E731
    inits = {"W": f(16, 8, 3, 3), "B": f(16), "g": f(16), "be": f(16), "m": f(16), "v": np.abs(f(16)) + 0.5}
    nodes = [helper.make_node("Conv", ["X", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "g", "be", "m", "v"], ["n"]),
             helper.make_node("Relu", ["n"], ["Y"])]
    return model_of(nodes, {"X": np.zeros((1, 8, 10, 10))}, {"Y": [1, 16, 10, 10]}, 13, inits)
