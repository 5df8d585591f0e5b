"""TFLM micro_speech's audio preprocessor (tests/builders/audio_frontend.py rebuilds audio_preprocessor_
float.tflite / _int8.tflite from the same op sequence and parameters: its tables equal the shipped
model's), compiled with its 160 bytes of state (the noise estimate) and run frame after frame on the
host: every frame equals TFLite Micro's stateful interpreter byte for byte, on speech-like audio (a
voiced chirp with noise between silences, 20 ms hops of 30 ms windows) and on full-range random frames."""
from __future__ import annotations

import numpy as np
import pytest

from tests.builders.audio_frontend import audio_preprocessor, speech_like
from tests.builders.tflm_signal import tflm_frames
from tests.conftest import require_programs


@pytest.mark.parametrize("int8", [True, False], ids=["int8", "float"])
def test_audio_preprocessor_streams_equal_tflm(int8, tmp_path):
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.frames import c_frames, numpy_frames
    from tinyfuse.targets import get_target
    require_programs("gcc")
    model = audio_preprocessor(int8)
    rng = np.random.default_rng(1)
    frames = [[f] for f in speech_like(40)] + [[rng.integers(-32768, 32768, (1, 480)).astype(np.int16)]
                                              for _ in range(5)]
    result = compile_model(model, target="host")
    assert [s.dtype for s in result.states] == ["uint32"] and result.state_bytes == 160
    got = c_frames(result, get_target("host"), frames, tmp_path)[0]
    want = tflm_frames(model, frames)
    ref = numpy_frames(result, frames)
    for k, (g, w, r) in enumerate(zip(got, want, ref)):
        assert np.asarray(g[0]).tobytes() == w[0].tobytes(), f"frame {k}: {g[0][:8]} vs TFLM {w[0][:8]}"
        assert np.asarray(r[0]).tobytes() == w[0].tobytes(), f"frame {k} (numpy): {r[0][:8]} vs TFLM {w[0][:8]}"
    assert len({w[0].tobytes() for w in want}) > 30            # the features move with the audio
