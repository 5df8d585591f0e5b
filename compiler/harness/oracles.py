"""The independent oracles ``tinyfuse run`` compares the generated C with.

- onnxruntime (CPU provider) for an ONNX model;
- TFLite Micro (the ``tflite-micro`` package) for a TFLite model, and for ``--tflite-ref``;
- LiteRT (``ai-edge-litert``, reference kernels; harness/litert.py) for a float TFLite model that
  TFLM refuses (float16 weights behind DEQUANTIZE): TFLM stays first, it is the int8 oracle and
  runs every float model it can; hybrid models (int8 weights, float activations) get no LiteRT run
  (its hybrid kernels quantize activations at run time);
- tinyfuse's own numpy reference (the IR interpreter), which ``run`` always has.

An oracle that cannot run the model (onnxruntime rejecting a valid Conv with ``auto_pad=SAME_UPPER``
and dilations, TFLM refusing a hybrid model or a custom op, a package missing) raises
:class:`OracleUnavailable` with a one-line reason; the caller reports it and compares with the numpy
reference alone. TFLM runs in a child process (tflm_worker.py): a too small arena can crash it, and
its arena is grown from the model's own estimate until it allocates.
"""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from ..frontend.detect import model_format
from .litert import LITERT, litert_outputs

ONNXRUNTIME = "onnxruntime"
TFLM = "TFLite Micro"
TFLM_MAX_ARENA = 1 << 30        # bytes: no model tinyfuse compiles needs more
TFLM_MIN_ARENA = 64 << 10


class OracleUnavailable(Exception):
    """An oracle cannot run the model; ``str(e)`` is the one-line reason."""


def oracle_name(model_path) -> str:
    """The oracle of a model file: ``TFLM`` for TFLite content, else ``ONNXRUNTIME``."""
    return TFLM if model_format(model_path) == "tflite" else ONNXRUNTIME


_ORT_PREFIX = re.compile(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ")


def _first_line(text, limit: int = 200) -> str:
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    return lines[0][:limit] if lines else "no message"


def onnxruntime_outputs(model_path: str, infos, inputs, bound=None) -> list[np.ndarray]:
    """onnxruntime's outputs for ``inputs`` (one array per ``infos`` entry, fed by name), with the graph
    inputs tinyfuse bound at compile time (``bound``: name → value, ``--bind``) fed too.
    Raises OracleUnavailable when onnxruntime is missing or rejects/cannot run the model."""
    try:
        import onnxruntime as ort
    except ImportError:
        raise OracleUnavailable("the onnxruntime package is not installed") from None
    so, ro = ort.SessionOptions(), ort.RunOptions()
    so.log_severity_level = ro.log_severity_level = 4      # fatal only: a failure is reported below
    try:
        sess = ort.InferenceSession(str(model_path), so, providers=["CPUExecutionProvider"])
        return sess.run(None, {**(bound or {}), **{t.name: x for t, x in zip(infos, inputs)}}, ro)
    except Exception as e:   # onnxruntime raises its own Fail/InvalidGraph/RuntimeException types
        raise OracleUnavailable(_ORT_PREFIX.sub("", _first_line(e, 400))) from None


def _tflm_reason(proc: subprocess.CompletedProcess) -> str:
    """The line of TFLM's stderr that says why it refused the model."""
    for ln in proc.stderr.splitlines():
        s = ln.strip()
        if s and not s.startswith(("Traceback", "File ", "^", "~")) and ln[:1] != " ":
            return _SOURCE_PREFIX.sub("", s)[:200]
    return f"exit status {proc.returncode}"


# what TFLM prints when the arena is too small ("... Requested: 992, available 904, missing: 88")
_TOO_SMALL = re.compile(r"Failed to (?:allocate|resize)|missing: (\d+)")
_SOURCE_PREFIX = re.compile(r"^\S+\.(?:cc|h|cpp)(?::\d+)?\s+")   # "tensorflow/lite/.../conv_common.cc "


def _tflm_attempt(tflite_path, arena: int, tmp: Path, n_outputs: int, timeout: float, frames: int | str = 0):
    """One TFLM run with ``arena`` bytes: the outputs, or the number of bytes to try next when the
    arena was too small (at least double, or more than what TFLM said was missing). ``frames``: the
    inputs hold that many consecutive frames, or ``"tensors:I,J,..."``: also those tensors'
    values, as a dict after the outputs (tflm_worker.py)."""
    worker = Path(__file__).with_name("tflm_worker.py")
    proc = subprocess.run([sys.executable, str(worker), str(tflite_path), str(arena), str(tmp / "x.npz"),
                           str(tmp / "y.npz"), str(n_outputs), *([str(frames)] if frames else [])],
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode == 0:
        with np.load(tmp / "y.npz") as y:
            outs = [y[f"y{i}"] for i in range(n_outputs)]
            if isinstance(frames, str):
                outs.append({int(k[1:]): y[k] for k in y.files if k.startswith("t")})
            return outs
    if _TOO_SMALL.search(proc.stderr):
        missing = max((int(m) for m in re.findall(r"missing: (\d+)", proc.stderr)), default=0)
        return max(2 * arena, arena + 2 * missing)
    if proc.returncode < 0:
        raise OracleUnavailable(f"TFLite Micro crashed (signal {-proc.returncode}): {_tflm_reason(proc)}")
    raise OracleUnavailable(_tflm_reason(proc))


def tflm_outputs(tflite_path, inputs, n_outputs: int = 1, arena_hint: int = 0,
                 timeout: float = 600, frames: int | str = 0) -> list[np.ndarray]:
    """TFLite Micro's outputs of the .tflite file ``tflite_path`` for ``inputs`` (in input order).

    The arena starts at ``max(arena_hint, 64 KiB)`` bytes (callers pass twice tinyfuse's own arena)
    and grows (at least doubling) until TFLM allocates its tensors, up to 1 GiB. Raises OracleUnavailable
    when tflite-micro is missing, refuses the model (hybrid model, unknown or custom op), crashes,
    or needs more than 1 GiB. ``frames`` > 0: every input holds that many consecutive frames along a
    new first axis, invoked in order by one interpreter (its variables persist, as in a streaming
    firmware); every output then stacks the frames' outputs. ``frames="tensors:I,J,..."`` (one
    invocation, every tensor kept: TFLM's kPreserveAllTensors): the outputs are followed by one dict
    {tensor index: value} of those tensors of subgraph 0 (:func:`tflm_tensors`).
    """
    if importlib.util.find_spec("tflite_micro") is None:
        raise OracleUnavailable("the tflite-micro package is not installed (pip install tflite-micro)")
    arena = max(int(arena_hint), TFLM_MIN_ARENA)
    with tempfile.TemporaryDirectory(prefix="tinyfuse_tflm_") as tmp:
        np.savez(Path(tmp) / "x.npz", **{f"x{i}": np.ascontiguousarray(x) for i, x in enumerate(inputs)})
        while arena <= TFLM_MAX_ARENA:
            got = _tflm_attempt(tflite_path, arena, Path(tmp), n_outputs, timeout, frames)
            if not isinstance(got, int):
                return got
            arena = got
    raise OracleUnavailable(f"TFLite Micro cannot allocate its tensors in {TFLM_MAX_ARENA} bytes")


def tflm_tensors(tflite_path, inputs, indices, arena_hint: int = 0) -> dict[int, np.ndarray]:
    """TFLite Micro's values of the tensors ``indices`` of subgraph 0 (indices into its tensor list, as
    in the flatbuffer) after one invocation on ``inputs``. Raises OracleUnavailable as :func:`tflm_outputs`."""
    spec = "tensors:" + ",".join(str(int(i)) for i in sorted(set(indices)))
    return tflm_outputs(tflite_path, inputs, 0, arena_hint, frames=spec)[-1]


def reference_outputs(model_path, result, inputs) -> list[np.ndarray]:
    """The oracle's outputs (see :func:`oracle_name`) for the compiled ``result`` and ``inputs``."""
    return model_oracle(model_path, result, inputs)[1]


def float_tflite(path) -> bool:
    """True when no tensor of the .tflite is int8/uint8/int16: a float model (float16 weights allowed).
    Hybrid models (int8 weights, float activations) are not: LiteRT quantizes their activations at
    run time (its hybrid kernels), which is not the float arithmetic tinyfuse compiles them to."""
    from ..frontend.tflite.schema import S, read_model
    try:
        model = read_model(Path(path).read_bytes())
    except Exception:
        return False
    quantized = {S.TensorType.INT8, S.TensorType.UINT8, S.TensorType.INT16}
    return all(t.type not in quantized for sg in model.subgraphs or [] for t in sg.tensors or [])


def model_oracle(model_path, result, inputs, rounded: bool = False) -> tuple[str, list[np.ndarray], str | None]:
    """(oracle name, its outputs, the one-line reason TFLM was passed over or None).

    ONNX: onnxruntime. TFLite: TFLM; when TFLM refuses a float model (:func:`float_tflite`), LiteRT.
    The oracle runs the model file as shipped; ``rounded``: a temporary copy of it whose float weights
    are rounded through binary16 (harness/half_oracle.py: what a ``--weights-dtype float16`` build reads).
    Raises OracleUnavailable (the last oracle's reason, after TFLM's) when none can run it."""
    if rounded:
        from .half_oracle import half_rounded_model
        with tempfile.TemporaryDirectory(prefix="tinyfuse_half_") as tmp:
            return _model_oracle(half_rounded_model(model_path, tmp), result, inputs)
    return _model_oracle(model_path, result, inputs)


def _model_oracle(model_path, result, inputs) -> tuple[str, list[np.ndarray], str | None]:
    if oracle_name(model_path) != TFLM:
        return ONNXRUNTIME, onnxruntime_outputs(model_path, result.inputs, inputs,
                                                getattr(result, "bound_inputs", None)), None
    try:
        return TFLM, tflm_outputs(model_path, inputs, len(result.outputs), arena_hint=2 * result.arena_bytes), None
    except OracleUnavailable as e:
        if not float_tflite(model_path):
            raise
        tflm_error = f"TFLite Micro: {str(e).rstrip('.')}"
    try:
        return LITERT, litert_outputs(model_path, inputs, OracleUnavailable), tflm_error
    except OracleUnavailable as e:
        raise OracleUnavailable(f"{tflm_error}; {e}") from None


def numpy_outputs(result, inputs, rounded: bool | None = None) -> list[np.ndarray]:
    """tinyfuse's own reference: the compiled IR evaluated in numpy (fixed-point exact for int8); a
    stateful model runs one frame from its reset state (its model outputs only). ``rounded`` (default:
    whether the build has ``--weights-dtype float16``): the float constants rounded through binary16
    (half_oracle.py), as the C reads them; False: the model's own float32 values."""
    from ..ir.interpreter import run_module
    states, mod = result.module.states, result.module
    if rounded is None:
        rounded = result.options is not None and result.options.weights_dtype == "float16"
    if rounded:
        from .half_oracle import half_rounded_module
        mod = half_rounded_module(mod)              # the weights the C reads (binary16-rounded)
    outs = run_module(mod, [*inputs, *(s.initial() for s in states)])
    return outs[:len(outs) - len(states)]
