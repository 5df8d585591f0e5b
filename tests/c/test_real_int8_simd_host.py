"""The published int8 keyword spotter (keyword_spotting_on_off_v3, [1, 98, 1, 104]: width-1 convs)
compiled for cortex-m4 (arm_dsp) and cortex-m55 (arm_mve) and built on the host through simd_host.h,
the portable stand-ins of the intrinsics, under ASan/UBSan with guard regions: every output equal
to TFLite Micro on several inputs. The same model under qemu: tests/target/test_real_int8_targets.py."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness.multi import build_host_multi, run_host_multi
from tests.conftest import require_programs, shared_or_skip, tflm_run

MODEL = "keyword_spotting_on_off_v3"


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_published_kws_simd_kernels_equal_tflm_on_the_host(target, tmp_path):
    require_programs("gcc")
    path = shared_or_skip("models", "real", f"{MODEL}.tflite")
    result = compile_model(path, target=target)
    assert {k.variant for k in result.kernels} & {"arm_dsp", "arm_mve"}, "no SIMD kernel was chosen"
    rng = np.random.default_rng(7)
    xs = [rng.integers(-128, 128, result.inputs[0].shape).astype(np.int8) for _ in range(3)]
    exe = build_host_multi([result], tmp_path, sanitize=True, guard=64, arena_fill=0xA5, simd_host=True)
    for i, x in enumerate(xs):
        (got,) = run_host_multi(exe, [result], [[x]])[0]
        (want,) = tflm_run(path, [x], arena_size=2 * 1024 * 1024)
        assert np.array_equal(got.reshape(want.shape), want), f"{MODEL} {target} input {i}: {got} vs TFLM {want}"
