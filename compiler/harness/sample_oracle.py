"""The reference of ``tinyfuse validate``: many samples through the oracle ``run`` would use
(harness/oracles.py ``model_oracle``), chosen the same way:

- ONNX: onnxruntime (CPU provider, one session for every sample);
- TFLite: TFLite Micro, in a child process (tflm_worker.py: every sample invoked in order by one
  interpreter, as the batch build runs them; TFLM's own messages never reach the terminal); when TFLM
  refuses a float model (float16 weights behind DEQUANTIZE) LiteRT with its reference kernels;
- when none of them can run the compiled model itself (TFLM refuses a hybrid model, onnxruntime a
  valid node): tinyfuse's numpy reference (the IR interpreter on the model's own float32 weights), with
  one line saying why. A ``--float-model`` no oracle can run is an error (its IR is not compiled here).

    ref = sample_oracle("kws.tflite", result, n_outputs=1)    # result: the compiled model, or None
    outs = ref.outputs(samples, progress)                      # outs[k][i]: output i of sample k
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TinyfuseError
from ..frontend.detect import model_format
from .litert import LITERT, litert_outputs
from .oracles import ONNXRUNTIME, TFLM, OracleUnavailable, float_tflite, numpy_outputs, tflm_outputs

NUMPY = "numpy reference"
_ORT_DTYPES = {"tensor(float)": np.float32, "tensor(int8)": np.int8, "tensor(uint8)": np.uint8,
               "tensor(int16)": np.int16, "tensor(int32)": np.int32, "tensor(int64)": np.int64}


@dataclass
class SampleOracle:
    """One oracle of a model file: ``name`` (onnxruntime, TFLite Micro, LiteRT, numpy reference),
    ``note`` (why the model's first oracle was passed over, or None), ``run(samples, progress)``."""

    name: str
    note: str | None
    run: object

    def outputs(self, samples: list[list[np.ndarray]], progress=iter) -> list[list[np.ndarray]]:
        """``[k][i]``: output i of sample k. TinyfuseError when the oracle fails on the samples (e.g. a
        --float-model of another network)."""
        try:
            return self.run(samples, progress)
        except (OracleUnavailable, RuntimeError, ValueError) as e:
            raise TinyfuseError(f"{self.name} cannot run the model on the samples ({_first_line(e)}): is it the "
                                "same network as the model?") from None


def _first_line(e, limit: int = 200) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return lines[0][:limit] if lines else type(e).__name__


def _onnxruntime(path: str, result=None) -> SampleOracle:
    """onnxruntime over the samples; the inputs ``result`` bound at compile time (``--bind``) are fed too,
    each sample is shaped as ``result`` compiled its input (``--input-shape``)."""
    try:
        import onnxruntime as ort
    except ImportError:
        raise OracleUnavailable("the onnxruntime package is not installed") from None
    so = ort.SessionOptions()
    so.log_severity_level = 4
    try:
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception as e:      # onnxruntime's Fail / InvalidGraph / NotImplemented
        raise OracleUnavailable(_first_line(e)) from None
    bound = dict(getattr(result, "bound_inputs", None) or {})
    infos = [t for t in sess.get_inputs() if t.name not in bound]
    compiled = {t.name: t.shape for t in getattr(result, "inputs", None) or ()}

    def shape(t):
        return compiled.get(t.name) or [d if isinstance(d, int) else 1 for d in t.shape]

    def run(samples, progress):
        out = []
        for xs in progress(samples):
            feeds = {t.name: np.asarray(x).astype(_ORT_DTYPES.get(t.type, np.asarray(x).dtype)).reshape(
                shape(t)) for t, x in zip(infos, xs)} | bound
            try:
                out.append(sess.run(None, feeds))
            except Exception as e:
                raise OracleUnavailable(_first_line(e)) from None
        return out
    return SampleOracle(ONNXRUNTIME, None, run)


def _stack(samples) -> list[np.ndarray]:
    return [np.stack([np.asarray(s[i]) for s in samples]) for i in range(len(samples[0]))]


def _tflm(path: str, n_outputs: int, arena_hint: int, samples) -> SampleOracle:
    """TFLM on every sample in one child process; run once here, so a refusal is known before use."""
    ys = tflm_outputs(path, _stack(samples), n_outputs, arena_hint, frames=len(samples))
    done = [[y[k] for y in ys] for k in range(len(samples))]
    return SampleOracle(TFLM, None, lambda s, progress: done)


def _litert(path: str, note: str) -> SampleOracle:
    return SampleOracle(LITERT, note, lambda samples, progress: [litert_outputs(path, xs, OracleUnavailable)
                                                                 for xs in progress(samples)])


def _numpy(result, note: str) -> SampleOracle:
    return SampleOracle(NUMPY, note, lambda samples, progress: [numpy_outputs(result, xs, rounded=False)
                                                                for xs in progress(samples)])


def sample_oracle(model_path, result, n_outputs: int, samples: list[list[np.ndarray]],
                  arena_hint: int = 0) -> SampleOracle:
    """The oracle of ``model_path`` (module doc) for ``samples`` (``[k][i]``, each in the model's input
    dtype). ``result``: the compiled model when ``model_path`` is the model itself (the numpy fallback),
    None for a --float-model. TinyfuseError (one line) when no oracle can run a --float-model."""
    path = str(model_path)
    try:
        if model_format(path) != "tflite":
            return _onnxruntime(path, result)
        try:
            return _tflm(path, n_outputs, arena_hint, samples)
        except OracleUnavailable as e:
            if not float_tflite(path):
                raise
            tflm_error = f"TFLite Micro: {str(e).rstrip('.')}"
        try:
            litert_outputs(path, samples[0], OracleUnavailable)        # refuses now, not after the C ran
            return _litert(path, f"{tflm_error}; {LITERT} (reference kernels) is the oracle")
        except OracleUnavailable as e:
            raise OracleUnavailable(f"{tflm_error}; {e}") from None
    except OracleUnavailable as e:
        who = TFLM if model_format(path) == "tflite" else ONNXRUNTIME
        if result is None:
            raise TinyfuseError(f"{path}: {who} cannot run it ({e})") from None
        return _numpy(result, f"{who} cannot run the model ({e}); comparing with tinyfuse's numpy reference only")


__all__ = ["NUMPY", "SampleOracle", "sample_oracle"]
