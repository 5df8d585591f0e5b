"""TFLM micro_speech's audio preprocessor (int16 FFT, integer filter bank, noise-estimate state) on
Cortex-M0 and Cortex-M4 under qemu: every frame equals TFLite Micro's stateful interpreter byte for byte."""
import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness.frames import c_frames
from tinyfuse.targets import get_target
from tests.builders.audio_frontend import audio_preprocessor, speech_like
from tests.builders.tflm_signal import tflm_frames
from tests.target.conftest import require_tools


@pytest.mark.parametrize("target", ["cortex-m0", "cortex-m4"])
def test_audio_preprocessor_int8_on_target_equals_tflm(target, tmp_path):
    require_tools(target)
    model = audio_preprocessor(True)
    frames = [[f] for f in speech_like(12)]
    outs, _ = c_frames(compile_model(model, target=target), get_target(target), frames, tmp_path)
    want = tflm_frames(model, frames)
    bad = [k for k, (o, w) in enumerate(zip(outs, want)) if np.asarray(o[0]).tobytes() != w[0].tobytes()]
    assert bad == [], f"frames differing from TFLM on {target}: {bad}"
