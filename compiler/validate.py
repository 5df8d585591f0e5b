"""``tinyfuse validate``: many inputs through the generated C and through an independent reference,
with accuracy metrics per output (in the manner of X-CUBE-AI's ``validate``).

    summary = validate("kws.tflite", "samples.npz", labels="labels.npy")   # dict, see below
    print(validate_text(summary))

The generated C is built once, with a batch test main that runs every sample (on the host in one
process, on a qemu target in one image with the samples compiled in: ``tinyfuse.harness.batch``).
The reference is TFLite Micro for a .tflite model, onnxruntime for an .onnx model, or the float
model given as ``float_model`` (.onnx through onnxruntime, .tflite through TFLite Micro).

Samples: an .npz with one array per model input (key = the input's name, or ``input`` for a
single-input model, or the only key) or an .npy for a single input; the first axis counts the N
samples ((N, *shape), or (N, *shape[1:]) when the model's batch is 1; an array of exactly the
model's shape is one sample). Float samples for an int8 input are quantized with the input's
scale and zero point, int8 samples for a float reference dequantized (both from the model file).

Metrics per output, over all N samples, on the values as compared (raw integers when both sides
are integer; else floats, an int8 output dequantized with its scale and zero point):
``max_abs_error`` = max |c - r|; ``rmse`` = sqrt(mean((c - r)^2)); ``cosine`` = <c, r> / (|c| |r|)
over all flattened values; ``top1_agreement`` = fraction of samples whose argmax over the last axis
agrees; ``exact`` = samples whose whole output is bit-equal (integer outputs against an integer
reference, else None); ``accuracy`` / ``reference_accuracy`` = fraction of samples whose argmax
equals the label (labels: (N,) class indices or (N, C) one-hot).
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .errors import TinyfuseError
from .userdir import input_file
from .frontend.detect import model_format

PROGRESS_MIN = 10         # a progress bar above this many samples


def load_samples(path: str | Path, infos) -> list[list[np.ndarray]]:
    """``samples[k][i]``: input i of sample k, in the array's own dtype. TinyfuseError when a key or
    shape does not fit the model's inputs."""
    p = input_file(path, "--inputs")
    data = _load_array(p, "--inputs")
    if p.suffix == ".npy":
        if len(infos) != 1:
            raise TinyfuseError(f"--inputs {path}: a .npy holds one array but the model has {len(infos)} inputs")
        arrays = [data]
    else:
        keys = list(data.keys())
        arrays = []
        for t in infos:
            key = t.name if t.name in keys else "input" if "input" in keys and len(infos) == 1 \
                else keys[0] if len(keys) == 1 and len(infos) == 1 else None
            if key is None:
                raise TinyfuseError(f"--inputs {path}: no array named '{t.name}' (keys: {sorted(keys)})")
            arrays.append(data[key])
    batched = [_batched(a, t, path) for a, t in zip(arrays, infos)]
    n = {len(b) for b in batched}
    if n == {0}:
        raise TinyfuseError(f"--inputs {path}: no samples")
    if len(n) != 1:
        raise TinyfuseError(f"--inputs {path}: the inputs hold different sample counts {sorted(n)}")
    return [[b[k] for b in batched] for k in range(n.pop())]


def _batched(a: np.ndarray, t, path) -> np.ndarray:
    shape = tuple(t.shape)
    if a.shape == shape:
        return a[None]
    if a.shape[1:] == shape or (shape and shape[0] == 1 and a.shape[1:] == shape[1:]):
        return a.reshape((a.shape[0], *shape))
    raise TinyfuseError(f"--inputs {path}: input '{t.name}' has shape {list(a.shape)}; expected (N, *{list(shape)})")


def load_labels(path: str | Path, n: int) -> np.ndarray:
    """(N,) int class labels from an .npy of class indices or one-hot rows."""
    p = input_file(path, "--labels")
    y = _load_array(p, "--labels")
    if not hasattr(y, "dtype") or y.dtype.kind not in "iub" and not (y.dtype.kind == "f" and y.ndim == 2):
        raise TinyfuseError(f"--labels {path}: class indices (integers) or one-hot rows expected")
    y = y.argmax(axis=-1) if y.ndim == 2 else y.reshape(-1)
    if len(y) != n:
        raise TinyfuseError(f"--labels {path}: {len(y)} labels for {n} samples")
    return y.astype(np.int64)


def _load_array(p: Path, option: str):
    """np.load of an .npy/.npz the user gave; TinyfuseError (one line) when it is not one."""
    try:
        return np.load(p, allow_pickle=False)
    except Exception as e:
        raise TinyfuseError(f"{option} {p}: not a readable .npy/.npz file ({type(e).__name__})") from None


def io_quantization(result) -> tuple[list, list]:
    """(inputs, outputs): per model input/output of the compiled ``result``, (scale, zero_point) when it
    is int8/uint8 quantized per tensor, else None: the frontend's reading of the model (passes/io_quant.py,
    the same figures the header and metadata.json carry), whatever the exporter put between the graph
    input and its first DequantizeLinear."""
    ins, outs = result.module.io_quant or ((None,) * len(result.inputs), (None,) * len(result.outputs))

    def pair(q):
        return (float(q.scale[0]), int(q.zero_point[0])) if q is not None and len(q.scale) == 1 else None
    return [pair(q) for q in ins], [pair(q) for q in outs]


class Reference:
    """The oracle: TFLite Micro (.tflite) or onnxruntime (.onnx), built once, run per sample."""

    def __init__(self, model_path: str | Path, n_outputs: int):
        self.path, self.n_outputs = str(model_path), n_outputs
        if model_format(self.path) == "tflite":
            try:
                import tflite_micro
            except ImportError:
                raise TinyfuseError("a .tflite reference needs TFLite Micro: pip install 'tinyfuse[tflm]'") from None
            self.name = "TFLite Micro"
            try:
                self._tflm = tflite_micro.runtime.Interpreter.from_file(self.path, arena_size=1 << 22)
            except Exception as e:
                raise TinyfuseError(f"{self.path}: TFLite Micro cannot load it ({_first_line(e)})") from None
        else:
            import onnxruntime as ort
            so = ort.SessionOptions()
            so.log_severity_level = 3
            self.name = "onnxruntime"
            try:
                self._ort = ort.InferenceSession(self.path, so, providers=["CPUExecutionProvider"])
            except Exception as e:
                raise TinyfuseError(f"{self.path}: onnxruntime cannot load it ({_first_line(e)})") from None
            self._inputs = self._ort.get_inputs()

    def __call__(self, xs: list[np.ndarray]) -> list[np.ndarray]:
        """The reference's outputs for one sample; TinyfuseError when the sample does not fit its inputs
        (e.g. a --float-model of another network)."""
        try:
            return self._run(xs)
        except Exception as e:
            raise TinyfuseError(f"{self.name} cannot run {self.path} on the samples ({_first_line(e)}): is it "
                                "the same network as the model?") from None

    def _run(self, xs: list[np.ndarray]) -> list[np.ndarray]:
        if hasattr(self, "_tflm"):
            for i, x in enumerate(xs):
                self._tflm.set_input(x, i)
            self._tflm.invoke()
            return [np.array(self._tflm.get_output(i)) for i in range(self.n_outputs)]
        feeds = {t.name: np.asarray(x).astype(_ORT_DTYPES.get(t.type, x.dtype)).reshape(
            [d if isinstance(d, int) else 1 for d in t.shape]) for t, x in zip(self._inputs, xs)}
        return self._ort.run(None, feeds)


def _first_line(e: BaseException, limit: int = 160) -> str:
    lines = str(e).strip().splitlines()
    return lines[0][:limit] if lines else type(e).__name__


_ORT_DTYPES = {"tensor(float)": np.float32, "tensor(int8)": np.int8, "tensor(uint8)": np.uint8,
               "tensor(int32)": np.int32, "tensor(int64)": np.int64}


def output_metrics(ours: np.ndarray, ref: np.ndarray, labels: np.ndarray | None = None) -> dict:
    """The module docstring's metrics of one output; ``ours`` and ``ref`` are (N, *shape)."""
    n = len(ours)
    c, r = ours.astype(np.float64).reshape(n, -1), ref.astype(np.float64).reshape(n, -1)
    diff = c - r
    norm = float(np.linalg.norm(c) * np.linalg.norm(r))
    top_c, top_r = ours.reshape(n, -1, ours.shape[-1] if ours.ndim > 1 else 1).argmax(-1), \
        ref.reshape(n, -1, ref.shape[-1] if ref.ndim > 1 else 1).argmax(-1)
    integer = ours.dtype.kind in "iu" and ref.dtype.kind in "iu"
    m = {"max_abs_error": float(np.abs(diff).max()) if diff.size else 0.0,
         "rmse": float(np.sqrt(np.mean(diff ** 2))) if diff.size else 0.0,
         "cosine": float(np.sum(c * r) / norm) if norm else (1.0 if not np.any(diff) else 0.0),
         "top1_agreement": float(np.mean(np.all(top_c == top_r, axis=1))),
         "exact": int(np.sum(np.all(diff == 0, axis=1))) if integer else None,
         "elements_equal": int(np.sum(diff == 0)) if integer else None, "elements": int(diff.size)}
    if labels is not None:
        m["accuracy"] = float(np.mean(top_c[:, 0] == labels))
        m["reference_accuracy"] = float(np.mean(top_r[:, 0] == labels))
    return m


def _quantize(x: np.ndarray, q, dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.clip(np.rint(x / q[0]) + q[1], info.min, info.max).astype(dtype)


def _dequantize(x: np.ndarray, q) -> np.ndarray:
    return ((x.astype(np.float64) - q[1]) * q[0]).astype(np.float32)


def _prepare(samples, infos, qin, float_ref: bool, path) -> tuple[list, list]:
    """(inputs of the generated C, inputs of the reference) per sample: float samples quantized for
    an integer model input, integer samples dequantized for a float reference."""
    ours, refs = [], []
    for s in samples:
        o, r = [], []
        for x, t, q in zip(s, infos, qin):
            integer_model = np.dtype(t.dtype).kind in "iu"
            if integer_model and x.dtype.kind == "f":
                if q is None:
                    raise TinyfuseError(f"--inputs {path}: float samples for the {t.dtype} input '{t.name}', whose "
                                        "quantization the model file does not give; quantize them first")
                o.append(_quantize(x, q, t.dtype))
                r.append(x.astype(np.float32) if float_ref else o[-1])
            else:
                o.append(x.astype(t.dtype))
                r.append(_dequantize(o[-1], q) if float_ref and integer_model and q else o[-1])
        ours.append(o)
        refs.append(r)
    return ours, refs


def _progress(n: int, enabled: bool, what: str):
    if not enabled or n <= PROGRESS_MIN:
        return iter
    from tqdm import tqdm
    return lambda it: tqdm(it, total=n, desc=what, unit="sample", file=sys.stderr, leave=False)


def validate(model: str | Path, inputs: str | Path, labels: str | Path | None = None, target: str = "host",
             float_model: str | Path | None = None, progress: bool = True, result=None, **compile_options) -> dict:
    """Run every sample of ``inputs`` through the generated C (built once; ``target`` host or a qemu
    target) and the reference; metrics per output (see the module docstring). ``result``: an
    already compiled model (else ``compile_model(model, target=target, **compile_options)``)."""
    from .driver import compile_model
    from .harness.batch import build_host_batch, run_host_batch, run_target_batch
    from .targets import get_target
    tgt = get_target(target)
    if float_model is not None:
        input_file(float_model, "--float-model")
    t0 = time.perf_counter()
    result = result or compile_model(model, target=tgt.name, **compile_options)
    samples = load_samples(inputs, result.inputs)
    ref_path = float_model or model
    ref = Reference(ref_path, len(result.outputs))
    qin, qout = io_quantization(result)
    ours_in, ref_in = _prepare(samples, result.inputs, qin, float_model is not None, inputs)
    y = load_labels(labels, len(samples)) if labels is not None else None
    with tempfile.TemporaryDirectory(prefix="tinyfuse_validate_") as tmp:
        if tgt.is_host:
            outs = run_host_batch(build_host_batch(result, tmp), result, ours_in)
        else:
            outs = run_target_batch(result, tgt, ours_in, tmp)
    refs = [ref(x) for x in _progress(len(samples), progress, ref.name)(ref_in)]
    per_output = []
    for i, t in enumerate(result.outputs):
        c = np.stack([o[i] for o in outs])
        r = np.stack([np.asarray(x[i]).reshape(t.shape) for x in refs])
        dequantized = float_model is not None and c.dtype.kind in "iu" and r.dtype.kind == "f" and qout[i] is not None
        if dequantized:
            c = _dequantize(c, qout[i])
        per_output.append({"name": t.name, "shape": list(t.shape), "dtype": t.dtype, "dequantized": dequantized,
                           **output_metrics(c, r, y if i == 0 or len(result.outputs) == 1 else None)})
    return {"model": result.name, "target": tgt.name, "reference": f"{ref.name} ({Path(ref_path).name})",
            "samples": len(samples), "labels": labels is not None, "outputs": per_output,
            "seconds": round(time.perf_counter() - t0, 2)}


def validate_text(s: dict) -> str:
    """The validate summary as a table per output (tabulate)."""
    from tabulate import tabulate
    head = ["output", "max |err|", "RMSE", "cosine", "top-1 agreement", "exact outputs"]
    if s["labels"]:
        head += ["accuracy", "reference accuracy"]
    body = []
    for o in s["outputs"]:
        exact = f"{o['exact']}/{s['samples']}" if o["exact"] is not None else "-"
        name = f"{o['name']} {o['shape']} {o['dtype']}" + (" (dequantized)" if o["dequantized"] else "")
        row = [name, f"{o['max_abs_error']:.4g}", f"{o['rmse']:.4g}", f"{o['cosine']:.6f}",
               f"{o['top1_agreement']:.2%}", exact]
        if s["labels"]:
            row += [f"{o['accuracy']:.2%}" if "accuracy" in o else "-",
                    f"{o['reference_accuracy']:.2%}" if "reference_accuracy" in o else "-"]
        body.append(row)
    lines = [f"validate {s['model']} on {s['target']} against {s['reference']}: {s['samples']} samples "
             f"in {s['seconds']:.1f} s", tabulate(body, head, tablefmt="simple", disable_numparse=True)]
    return "\n".join(lines)


__all__ = ["Reference", "io_quantization", "load_labels", "load_samples", "output_metrics", "validate",
           "validate_text"]
