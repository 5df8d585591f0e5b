"""The published int8 keyword spotter of ../shared/models/real (SiliconLabs MLTK
keyword_spotting_on_off_v3: a 1-D temporal MobileNetV2-style network laid out as [1, 98, 1, 104], 55
CONV_2D, 24 DEPTHWISE_CONV_2D, 24 residual ADD) on every core, byte for byte against TFLite Micro.

Its width-1 convs are where the SIMD kernels' flattened-pixel output index lost the pixel (every
arm_dsp / arm_mve output of a pixel pair went to pixel 0): the host and cortex-m0 were exact, every
SIMD core was wrong. The host build through simd_host.h (the portable stand-ins of the DSP and Helium
intrinsics) runs in tests/c/test_real_int8_simd_host.py without qemu."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tests.conftest import shared_or_skip, tflm_run
from tests.target.conftest import require_tools

MODEL = "keyword_spotting_on_off_v3"
TARGETS = ["cortex-m0", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"]


@pytest.mark.parametrize("target", TARGETS)
def test_published_kws_equals_tflm_on_every_core(target, tmp_path):
    require_tools(target)
    path = shared_or_skip("models", "real", f"{MODEL}.tflite")
    result = compile_model(path, target=target)
    rng = np.random.default_rng(25)
    x = rng.integers(-128, 128, result.inputs[0].shape).astype(np.int8)
    build = build_target(result, target, tmp_path, [x])
    (got,) = run_target(build)
    (want,) = tflm_run(path, [x], arena_size=2 * 1024 * 1024)
    assert build.stats["status"] == 0
    assert np.array_equal(got.reshape(want.shape), want), \
        f"{MODEL} on {target}: {got.ravel().tolist()} vs TFLM {want.ravel().tolist()}"
