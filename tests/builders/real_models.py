"""The real edge models of ../shared/models/real that run in float (MediaPipe: float16 weights behind
DEQUANTIZE), their inputs and their oracle, LiteRT with the reference kernels (TFLM refuses float16
DEQUANTIZE). Shared by tests/c/test_real_models.py and tests/target/test_real_models_target.py."""
from __future__ import annotations

import importlib.util

import numpy as np

from tests.conftest import skip_or_fail

# model → the value range of its input image (MediaPipe's preprocessing: BlazeFace [-1, 1], landmarks and
# selfie segmentation [0, 1]; selfie_segmentation's oracle is LiteRT on a copy with its custom
# Convolution2DTransposeBias rewritten into TRANSPOSE_CONV, harness/litert_custom.py)
FLOAT_REAL = {"face_detection_short_range": (-1.0, 1.0), "hand_landmark_lite": (0.0, 1.0),
              "selfie_segmentation": (0.0, 1.0)}
RTOL = 1e-4      # per output: max |tinyfuse - LiteRT| <= RTOL x max |LiteRT|


def image_inputs(model: str, shape, seed: int = 5, n: int = 2) -> list[np.ndarray]:
    """``n`` seeded uniform images in the model's input range, float32 NHWC."""
    lo, hi = FLOAT_REAL[model]
    rng = np.random.default_rng(seed)
    return [rng.uniform(lo, hi, shape).astype(np.float32) for _ in range(n)]


def litert_run(path, inputs) -> list[np.ndarray]:
    """LiteRT (BUILTIN_REF resolver) outputs, every output in the model's order."""
    if importlib.util.find_spec("ai_edge_litert") is None:
        skip_or_fail("ai-edge-litert is not installed (pip install ai-edge-litert)")
    from tinyfuse.harness.litert import litert_outputs
    from tinyfuse.harness.oracles import OracleUnavailable
    return litert_outputs(path, inputs, OracleUnavailable)


def assert_outputs_match(got, want, what: str) -> None:
    assert len(got) == len(want), f"{what}: {len(got)} outputs, LiteRT has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{what} output {i}: shape {g.shape}, LiteRT {w.shape}"
        err, ref = float(np.max(np.abs(g - w))), float(np.max(np.abs(w)))
        assert err <= RTOL * ref, f"{what} output {i}: max |tinyfuse - LiteRT| {err:.3g} > {RTOL} x {ref:.3g}"
