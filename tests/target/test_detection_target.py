"""DETECTION_POSTPROCESS under qemu: the SSD head of tests/builders/tflm_detection.py (int8
predictors, DEQUANTIZE, regular and fast NMS) and a one-op float model with 60 anchors, on cortex-m0
(software float and double) and cortex-m4 (single-precision FPU, software double), byte for byte
against TFLite Micro on the host (the box decoding's exp runs in double: the target's libm gives the
same float results)."""
import numpy as np
import pytest

from tests.builders import tflm_detection as td
from tests.builders.tflm_signal import tflm_frames
from tests.target.conftest import require_tools


def _run(model, inputs, target, tmp_path):
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.batch import run_target_batch
    from tinyfuse.targets import get_target
    result = compile_model(model, target=target)
    return run_target_batch(result, get_target(target), [inputs], tmp_path)[0]


@pytest.mark.parametrize("target", ["cortex-m0", "cortex-m4"])
def test_detection_postprocess_targets(target, tmp_path):
    require_tools(target)
    rng = np.random.default_rng(11)
    cases = [td.ssd(rng, int8=True, use_regular_nms=regular) for regular in (False, True)]
    b, classes = 60, 4
    one = td.model(b, classes, td.anchors(rng, b), use_regular_nms=True, max_detections=10, detections_per_class=4)
    cases.append((one, td.inputs(rng, b, classes)))
    for k, (model, inputs) in enumerate(cases):
        inputs = inputs if isinstance(inputs, list) else [inputs]
        want = tflm_frames(model, [inputs])[0]
        got = _run(model, inputs, target, tmp_path / str(k))
        n = int(want[3][0])
        assert n > 0
        for i, (g, w) in enumerate(zip(got, want)):
            g = g.reshape(w.shape)
            if i < 3:
                g, w = g[:, :n], w[:, :n]
            assert g.tobytes() == w.tobytes(), f"case {k} output {i}: {g.reshape(-1)[:8]} vs TFLM {w.reshape(-1)[:8]}"
