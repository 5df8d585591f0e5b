"""Frame-by-frame runs: ``tinyfuse run MODEL --frames N [--input frames.npz]``.

A streaming model (``IRModule.states``: TFLite resource variables, variable tensors) runs one
frame per ``<name>_run(arena, state)`` after one ``<name>_reset(state)``; its output at frame k
depends on every earlier frame. The generated C runs the N frames in one process (host gcc, or one
qemu image for a target: harness/batch.py) and every frame's outputs are compared with

- TFLite Micro for a .tflite model: one interpreter invoked N times, which keeps its variables
  between invocations (harness/tflm_worker.py), the independent oracle;
- tinyfuse's numpy reference (the IR interpreter with the state fed back), as extra information.

A stateless model runs the same way (N independent inferences). An int8 (or other integer) frame
is exact when its bytes equal the oracle's; a float frame matches within ``FLOAT_RTOL`` x max|ref|.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from ..errors import TinyfuseError
from ..userdir import input_file
from .inputs import _arrays, _check_values, random_inputs
from .oracles import TFLM, OracleUnavailable, oracle_name, tflm_outputs
from .verdict import FLOAT_RTOL, REAL_KEYS, is_quantized

MAX_FRAMES = 100_000


def frame_inputs(path: str | None, infos, n: int, seed: int) -> list[list[np.ndarray]]:
    """``frames[k][i]``: input i of frame k. From ``path`` (.npy, or .npz by input name; first axis
    = frames; the first ``n`` are used) or, without a path, random frames drawn from one
    ``numpy.random.default_rng(seed)`` stream (harness/inputs.py ranges)."""
    if not 0 < n <= MAX_FRAMES:
        raise TinyfuseError(f"--frames {n}: give 1 to {MAX_FRAMES} frames")
    if path is None:
        return [random_inputs(infos, seed * MAX_FRAMES + k) for k in range(n)]
    p = input_file(path, "--input")
    try:
        arrays = _arrays(p, np.load(p, allow_pickle=False), infos)
    except TinyfuseError:
        raise
    except Exception as e:        # OSError, ValueError, zipfile.BadZipFile, ...
        raise TinyfuseError(f"--input {path}: not a readable .npy/.npz file ({type(e).__name__})") from None
    frames = []
    for a, t in zip(arrays, infos):
        if a.ndim < 1 or a.shape[0] < n or a[0].size != int(np.prod(t.shape)):
            raise TinyfuseError(f"--input {path}: input '{t.name}' has shape {list(a.shape)}; --frames {n} needs "
                                f"(at least {n}, *{list(t.shape)})")
        _check_values(path, a[:n], t)
        frames.append(a[:n].astype(t.dtype).reshape((n, *t.shape)))
    return [[f[k] for f in frames] for k in range(n)]


def numpy_frames(result, frames) -> list[list[np.ndarray]]:
    """tinyfuse's numpy reference frame by frame, the state of frame k fed to frame k + 1."""
    from ..ir.interpreter import run_module
    mod = result.module
    n_states = len(mod.states)
    state = [s.initial() for s in mod.states]
    outs = []
    for frame in frames:
        got = run_module(mod, [*frame, *state])
        if n_states:
            got, state = got[:len(got) - n_states], got[len(got) - n_states:]
        outs.append(list(got))
    return outs


def c_frames(result, target, frames, workdir: Path) -> tuple[list[list[np.ndarray]], str | None]:
    """The generated C's outputs of every frame, (outputs, "qemu" or None on the host)."""
    from .batch import build_host_batch, run_host_batch, run_target_batch
    if target.is_host:
        return run_host_batch(build_host_batch(result, workdir), result, frames), None
    return run_target_batch(result, target, frames, workdir), "qemu"


def oracle_frames(model_path, result, frames, stateful=()) -> list[list[np.ndarray]]:
    """The independent oracle's outputs of every frame (TFLM's stateful interpreter for .tflite;
    onnxruntime with the state fed back for an ONNX model compiled with ``stateful`` pairs).
    Raises OracleUnavailable when it cannot run the model."""
    if oracle_name(model_path) != TFLM:
        if result.states and stateful:
            from .stateful_onnx import onnxruntime_frames
            return onnxruntime_frames(model_path, stateful, frames)
        if result.states:
            raise OracleUnavailable("no oracle of a stateful ONNX model")
        from .oracles import onnxruntime_outputs
        return [list(onnxruntime_outputs(model_path, result.inputs, f, getattr(result, "bound_inputs", None))) for f in frames]
    stacked = [np.stack([f[i] for f in frames]) for i in range(len(result.inputs))]
    ys = tflm_outputs(model_path, stacked, len(result.outputs), arena_hint=2 * result.arena_bytes,
                      frames=len(frames))
    return [[y[k] for y in ys] for k in range(len(frames))]


def frame_verdicts(result, outs, refs) -> list[dict]:
    """Per frame: ``exact`` (bytes equal), ``max_abs_diff`` and ``match`` (exact for integer
    outputs, within FLOAT_RTOL x max|ref| for float ones)."""
    verdicts = []
    for k, (o, r) in enumerate(zip(outs, refs)):
        exact = all(np.array_equal(np.asarray(a).reshape(-1), np.asarray(b, a.dtype).reshape(-1)) for a, b in zip(o, r))
        diff = max((float(np.max(np.abs(a.astype(np.float64) - np.asarray(b, np.float64).reshape(a.shape))))
                    for a, b in zip(o, r) if a.size), default=0.0)
        ref_max = max((float(np.max(np.abs(np.asarray(b, np.float64)))) for b in r if np.size(b)), default=0.0)
        floats = any(t.dtype.startswith("float") for t in result.outputs)
        verdicts.append({"frame": k, "exact": exact, "max_abs_diff": diff,
                         "match": exact or (floats and diff <= FLOAT_RTOL * ref_max)})
    return verdicts


def run_frames(model_path, result, target, frames, keep: str | None = None, stateful=()) -> dict:
    """Run ``frames`` through the generated C and the oracles; a JSON-able summary with one verdict
    per frame (``frames``), the counts and ``outputs_match`` (every frame matches the oracle, or the
    numpy reference when the oracle cannot run)."""
    with tempfile.TemporaryDirectory(prefix="tinyfuse_frames_") as tmp:
        outs, board = c_frames(result, target, frames, Path(keep) if keep else Path(tmp))
    oracle, reason = oracle_name(model_path), None
    try:
        refs = oracle_frames(model_path, result, frames, stateful)
    except OracleUnavailable as e:
        refs, oracle, reason = numpy_frames(result, frames), "numpy reference", str(e)
    per = frame_verdicts(result, outs, refs)
    numpy_exact = sum(v["exact"] for v in frame_verdicts(result, outs, numpy_frames(result, frames)))
    n, exact, quantized = len(frames), sum(v["exact"] for v in per), is_quantized(result)
    return {"model": result.name, "target": target.name, "board": board, "oracle": oracle,
            "oracle_unavailable": reason, "n_frames": n, "exact_frames": exact,
            "matching_frames": sum(v["match"] for v in per), "numpy_exact_frames": numpy_exact,
            "outputs_match": all(v["match"] for v in per), "state_bytes": result.state_bytes,
            "arena_bytes": result.arena_bytes, "frames": per,
            "last_outputs": [o.reshape(-1)[:8].tolist() for o in outs[-1]],
            # the keys of a single inference's verdict (verdict.compare), so `run --json` has one key set
            **model_figures(result), "oracle_error": reason, "compared_with": oracle,
            "max_abs_diff": max((v["max_abs_diff"] for v in per), default=0.0), "max_abs_ref": None,
            "quantized": quantized, "ref_exact": numpy_exact == n if quantized else None, "max_lsb_diff": None,
            "tflm_exact": exact == n if oracle == TFLM and reason is None else None, "tflm_error": None,
            **dict.fromkeys(REAL_KEYS), "tflm_equal": None, "tflm_max_lsb": None,
            "outputs_total": sum(int(o.size) for o in outs[-1]) * n, "rtol": None, "rounding": result.options.rounding,
            "weights_dtype": result.options.weights_dtype, "half_compared_with": None, "half_max_abs_diff": None,
            "half_max_abs_ref": None, "verdict": "match" if all(v["match"] for v in per) else "MISMATCH"}


def model_figures(result) -> dict:
    """The compiled model's figures in every ``run --json``: kernels, arena/naive/weights bytes, MACs."""
    return {"kernels": len(result.steps), "arena_bytes": result.arena_bytes, "naive_bytes": result.naive_bytes,
            "weights_bytes": result.weights_bytes, "macs": result.macs}


def single_frame_keys(result, outs) -> dict:
    """The frame keys of :func:`run_frames` for one stateless inference (``run`` without ``--frames``):
    one frame, no per-frame list, its first output values; so `run --json` has one key set."""
    return {"n_frames": 1, "exact_frames": None, "matching_frames": None, "numpy_exact_frames": None,
            "frames": None, "last_outputs": [o.reshape(-1)[:8].tolist() for o in outs],
            "state_bytes": result.state_bytes}


def frames_text(s: dict) -> str:
    """The frame-by-frame summary: one line per frame, then the totals."""
    lines = [f"{'frame':>6} {'exact':>6} {'max |diff|':>11}"]
    lines += [f"{v['frame']:>6} {'yes' if v['exact'] else 'NO':>6} {v['max_abs_diff']:>11.3g}" for v in s["frames"]]
    if s["oracle_unavailable"]:
        lines.append(f"oracle unavailable ({s['oracle_unavailable']}); compared with the numpy reference")
    where = f" on {s['target']}" + (" under qemu" if s["board"] else "")
    lines.append(f"{s['exact_frames']}/{s['n_frames']} frames byte-identical to {s['oracle']}{where}; "
                 f"{s['matching_frames']}/{s['n_frames']} match; numpy reference: {s['numpy_exact_frames']}/"
                 f"{s['n_frames']} identical")
    lines.append(f"state {s['state_bytes']} bytes + arena {s['arena_bytes']} bytes")
    lines.append("MATCH" if s["outputs_match"] else "MISMATCH")
    return "\n".join(lines)
