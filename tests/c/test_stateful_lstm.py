"""A streaming LSTM exported the way PyTorch exports it (examples/build_lstm.py: explicit h/c state
inputs and outputs) compiled with ``--stateful h_in=h_out,c_in=c_out``: 50 frames through the
generated C in one process (the state persists in the state region between ``<name>_run`` calls)
equal onnxruntime with the state fed back (harness/stateful_onnx.py) within 1e-4 × max|ref| on
every frame; the numpy interpreter with the state fed back agrees too."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import assert_close_to, require_programs
from tinyfuse.errors import TinyfuseError

_PATH = Path(__file__).resolve().parents[2] / "examples" / "build_lstm.py"
_spec = importlib.util.spec_from_file_location("build_lstm", _PATH)
build_lstm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_lstm)
FRAMES = 50


def test_stream_lstm_50_frames_vs_onnxruntime(tmp_path):
    require_programs("gcc")
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.batch import build_host_batch, run_host_batch
    from tinyfuse.harness.stateful_onnx import onnxruntime_frames
    from tinyfuse.ir.interpreter import run_module
    path = build_lstm.build_stream_lstm(str(tmp_path / "stream_lstm.onnx"), seed=0)
    result = compile_model(path, stateful=build_lstm.STATE_PAIRS)
    assert [t.name for t in result.inputs] == ["x"] and [t.name for t in result.outputs] == ["logits"]
    assert [s.name for s in result.states] == ["h_in", "c_in"] and result.state_bytes >= 2 * 4 * build_lstm.HIDDEN
    frames = [[f] for f in build_lstm.frames(FRAMES)]
    outs = run_host_batch(build_host_batch(result, tmp_path / "build"), result, frames)
    refs = onnxruntime_frames(path, build_lstm.STATE_PAIRS, frames)
    state = [np.zeros(s.shape, np.float32) for s in result.module.states]
    for k, (o, r) in enumerate(zip(outs, refs)):
        assert_close_to(o[0], r[0].reshape(o[0].shape))
        interp = run_module(result.module, [*frames[k], *state])
        assert_close_to(np.asarray(interp[0]).reshape(o[0].shape), r[0].reshape(o[0].shape))
        state = list(interp[1:])
    # the state matters: frame 49 run from a zero state differs from the carried one
    (alone,) = onnxruntime_frames(path, build_lstm.STATE_PAIRS, frames[-1:])
    assert not np.allclose(alone[0], refs[-1][0], atol=1e-4)


@pytest.mark.parametrize("text, needle", [
    ("h_in", "'h_in' is not IN=OUT"),
    ("h_in=nope", "'nope' is not a graph output (the outputs: logits, h_out, c_out)"),
    ("h_in=c_out,c_in=c_out", "named twice"),
    ("x=h_out", "input [1, 1, 10] float32 and output [1, 1, 32] float32 differ"),
])
def test_stateful_pairs_refused_clearly(tmp_path, text, needle):
    from tinyfuse.driver import compile_model
    from tinyfuse.frontend.onnx.stateful_io import parse_pairs
    path = build_lstm.build_stream_lstm(str(tmp_path / "m.onnx"))
    with pytest.raises(TinyfuseError, match=None) as e:
        compile_model(path, stateful=parse_pairs(text))
    assert needle in str(e.value), str(e.value)


def test_cli_compile_stateful(tmp_path, capsys):
    """``tinyfuse compile --stateful``: the header declares the state API; a bad pair is one error line."""
    from tinyfuse.cli import main
    path = build_lstm.build_stream_lstm(str(tmp_path / "stream_lstm.onnx"))
    assert main(["compile", path, "--stateful", "h_in=h_out,c_in=c_out", "-o", str(tmp_path / "out")]) == 0
    header = (tmp_path / "out" / "stream_lstm.h").read_text()
    assert "#define STREAM_LSTM_STATE_SIZE 256" in header and "int stream_lstm_reset(void *state);" in header
    assert "#define STREAM_LSTM_NUM_INPUTS 1" in header and "#define STREAM_LSTM_NUM_OUTPUTS 1" in header
    capsys.readouterr()
    assert main(["compile", path, "--stateful", "h_in", "-o", str(tmp_path / "bad")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --stateful: 'h_in' is not IN=OUT (a graph input and a graph output name)"], err


def test_cli_run_frames_against_onnxruntime(tmp_path, capsys):
    """``tinyfuse run --stateful ... --frames 50``: every frame compared with onnxruntime, the state fed back."""
    import json

    from tinyfuse.cli import main
    path = build_lstm.build_stream_lstm(str(tmp_path / "stream_lstm.onnx"))
    code = main(["run", path, "--stateful", "h_in=h_out,c_in=c_out", "--frames", str(FRAMES), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["oracle"] == "onnxruntime" and summary["oracle_unavailable"] is None
    assert summary["matching_frames"] == FRAMES and summary["outputs_match"] and summary["state_bytes"] == 256
