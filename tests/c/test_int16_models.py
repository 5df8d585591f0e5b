"""Whole int16 networks against TFLite Micro, 50 inputs / frames each, byte for byte (host build):

- the architecture of TFLM's keyword benchmark model (keyword_scrambled.tflite: int16 input, seven SVDF
  layers with an int16 activation state, FULLY_CONNECTED, SOFTMAX int8 → int16, QUANTIZE int16 → int32;
  and the int8-state variant keyword_scrambled_8bit), rebuilt with seeded weights by
  tests/builders/tflm_int16_models.py and streamed frame after frame (the SVDF state carries over);
- the MLPerf Tiny DS-CNN keyword spotter quantized 16x8 (int16 activations, int8 per-channel weights,
  int64 biases) from the float model in ../shared/models/tflite.

The Cortex-M4 run (arm_dsp_s16 kernels) is tests/target/test_int16_dsp_target.py."""
from __future__ import annotations

import numpy as np
import pytest

from tests.builders.tflm_int16_models import keyword_svdf, kws_16x8
from tests.builders.tflm_signal import tflm_frames
from tests.conftest import require_programs, shared_or_skip

FRAMES = 50


def int16_frames(shape, n: int = FRAMES, seed: int = 0) -> list[list[np.ndarray]]:
    """``n`` frames of one int16 input: full-range uniform, then normal of several spreads."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        spread = (32768, 8000, 1500, 200)[k % 4]
        out.append([np.clip(np.round(rng.normal(0, spread, shape)), -32768, 32767).astype(np.int16)])
    return out


def kws_16x8_model() -> bytes:
    base = shared_or_skip("models", "tflite")
    return kws_16x8(base / "kws_ref_model_float32.tflite", base / "kws_ref_model.tflite")


def stream_against_tflm(model: bytes, target: str, workdir, n: int = FRAMES):
    """(tinyfuse's outputs, TFLM's outputs, the kernel kinds) of ``n`` frames of ``model`` on ``target``."""
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.frames import c_frames
    from tinyfuse.targets import get_target
    result = compile_model(model, target=target)
    frames = int16_frames(result.inputs[0].shape, n)
    got = c_frames(result, get_target(target), frames, workdir)[0]
    return got, tflm_frames(model, frames), {k.kind for k in result.kernels}


def differing(got, want) -> list[int]:
    return [k for k, (g, w) in enumerate(zip(got, want)) if np.asarray(g[0]).tobytes() != w[0].tobytes()]


@pytest.mark.parametrize("state", ["int16", "int8"])
def test_keyword_svdf_streams_equal_tflm(state, tmp_path):
    require_programs("gcc")
    got, want, kinds = stream_against_tflm(keyword_svdf(0, state), "host", tmp_path)
    assert differing(got, want) == []
    assert len({w[0].tobytes() for w in want}) > FRAMES // 2       # the outputs move with the input
    assert "qnn.svdf.ref" in kinds, kinds


def test_ds_cnn_16x8_equals_tflm(tmp_path):
    require_programs("gcc")
    got, want, _ = stream_against_tflm(kws_16x8_model(), "host", tmp_path)
    assert differing(got, want) == []
    assert len({w[0].tobytes() for w in want}) > FRAMES // 2
