"""``tinyfuse validate``: many inputs through the generated C and through an independent reference,
with accuracy metrics per output (in the manner of X-CUBE-AI's ``validate``).

    summary = validate("kws.tflite", "samples.npz", labels="labels.npy")   # dict, see below
    print(validate_text(summary))

The generated C is built once, with a batch test main that runs every sample (on the host in one
process, on a qemu target in one image with the samples compiled in: ``tinyfuse.harness.batch``).
The reference is the oracle ``run`` uses, chosen the same way (harness/sample_oracle.py): onnxruntime
for an .onnx model, TFLite Micro for a .tflite (LiteRT for a float .tflite TFLM refuses), tinyfuse's
numpy reference when none can run the model (a hybrid .tflite; one line says why), or the float model
given as ``float_model`` through its own oracle.

Samples: an .npz with one array per model input (key = the input's name, or ``input`` for a
single-input model, or the only key) or an .npy for a single input; the first axis counts the N
samples ((N, *shape), or (N, *shape[1:]) when the model's batch is 1; an array of exactly the
model's shape is one sample). Their dtype must be the input's: an integer input takes samples of
exactly its dtype (int32 samples for an int8 input are refused, not wrapped), a float32 input takes
any float samples (rounded to float32). Float samples for a quantized (int8/uint8/int16) input are
refused unless ``quantize_inputs`` (``--quantize-inputs``): then ``q = clamp(round_half_even(x / scale)
+ zero_point)`` with the input's scale and zero point from the model file (saturating, as
QuantizeLinear). Integer samples for a float reference are dequantized, ``(q - zero_point) * scale``.

Metrics per output, over all N samples, on the values as compared (raw integers when both sides
are integer; else floats, an int8 output dequantized with its scale and zero point):
``max_abs_error`` = max |c - r|; ``rmse`` = sqrt(mean((c - r)^2)); ``cosine`` = <c, r> / (|c| |r|)
over all flattened values; ``top1_agreement`` = fraction of samples whose argmax over the last axis
agrees; ``exact`` = samples whose whole output is bit-equal (integer outputs against an integer
reference, else None); ``accuracy`` / ``reference_accuracy`` = fraction of samples whose argmax
equals the label (labels: (N,) class indices or (N, C) one-hot).

Pass criteria (``--fail-under METRIC=VALUE``, :func:`check_criteria`): ``exact`` (fraction of samples
whose output is bit-equal), ``top1`` (top-1 agreement), ``cosine`` or ``accuracy`` must be at least
VALUE on every output; the summary's ``criteria`` lists each with its value and ``passed`` is False
when one fails (``tinyfuse validate`` then exits 1).
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .errors import TinyfuseError
from .userdir import input_file

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


def _sample_for(x: np.ndarray, t, q, quantize_inputs: bool, path) -> np.ndarray:
    """One sample of input ``t`` in the input's dtype (module doc: the dtype rules); TinyfuseError naming
    the input, the sample dtype and the expected one."""
    want, got = np.dtype(t.dtype), x.dtype
    if got == want:
        return x
    if want.kind == "f" and got.kind == "f":
        return x.astype(want)
    if want.kind in "iu" and got.kind == "f" and quantize_inputs:
        if q is None:
            raise TinyfuseError(f"--inputs {path}: input '{t.name}' is {t.dtype} without a per-tensor scale and zero "
                                "point in the model file: quantize the samples yourself")
        return _quantize(x, q, t.dtype)
    hint = (f"; --quantize-inputs quantizes float samples with the input's scale {q[0]:.6g} and zero point {q[1]}"
            if want.kind in "iu" and got.kind == "f" and q is not None else "")
    raise TinyfuseError(f"--inputs {path}: input '{t.name}' takes {t.dtype} samples, got {got}{hint}")


def _prepare(samples, infos, qin, float_ref: bool, path, quantize_inputs: bool = False) -> tuple[list, list]:
    """(inputs of the generated C, inputs of the reference) per sample: each sample in its input's
    dtype (:func:`_sample_for`); a float reference gets the float samples as given, integer samples
    dequantized."""
    ours, refs = [], []
    for s in samples:
        o, r = [], []
        for x, t, q in zip(s, infos, qin):
            o.append(_sample_for(x, t, q, quantize_inputs, path))
            if float_ref and x.dtype.kind == "f":
                r.append(x.astype(np.float32))
            else:
                r.append(_dequantize(o[-1], q) if float_ref and o[-1].dtype.kind in "iu" and q else o[-1])
        ours.append(o)
        refs.append(r)
    return ours, refs


def _progress(n: int, enabled: bool, what: str):
    if not enabled or n <= PROGRESS_MIN:
        return iter
    from tqdm import tqdm
    return lambda it: tqdm(it, total=n, desc=what, unit="sample", file=sys.stderr, leave=False)


def validate(model: str | Path, inputs: str | Path, labels: str | Path | None = None, target: str = "host",
             float_model: str | Path | None = None, progress: bool = True, result=None,
             quantize_inputs: bool = False, fail_under=(), **compile_options) -> dict:
    """Run every sample of ``inputs`` through the generated C (built once; ``target`` host or a qemu
    target) and the reference; metrics per output (see the module docstring). ``result``: an
    already compiled model (else ``compile_model(model, target=target, **compile_options)``).
    ``quantize_inputs``: float samples for a quantized input are quantized (module doc), else refused.
    ``fail_under``: (metric, minimum) pairs (:func:`check_criteria`)."""
    from .driver import compile_model
    from .harness.batch import build_host_batch, run_host_batch, run_target_batch
    from .harness.sample_oracle import sample_oracle
    from .targets import get_target
    tgt = get_target(target)
    if float_model is not None:
        input_file(float_model, "--float-model")
    t0 = time.perf_counter()
    result = result or compile_model(model, target=tgt.name, **compile_options)
    _criteria_apply(fail_under, result, float_model, labels)
    samples = load_samples(inputs, result.inputs)
    qin, qout = io_quantization(result)
    ours_in, ref_in = _prepare(samples, result.inputs, qin, float_model is not None, inputs, quantize_inputs)
    y = load_labels(labels, len(samples)) if labels is not None else None
    ref_path = float_model or model
    ref = sample_oracle(ref_path, None if float_model else result, len(result.outputs), ref_in,
                        2 * result.arena_bytes)
    with tempfile.TemporaryDirectory(prefix="tinyfuse_validate_") as tmp:
        if tgt.is_host:
            outs = run_host_batch(build_host_batch(result, tmp), result, ours_in)
        else:
            outs = run_target_batch(result, tgt, ours_in, tmp)
    refs = ref.outputs(ref_in, _progress(len(samples), progress, ref.name))
    per_output = []
    for i, t in enumerate(result.outputs):
        c = np.stack([o[i] for o in outs])
        r = np.stack([np.asarray(x[i]).reshape(t.shape) for x in refs])
        dequantized = float_model is not None and c.dtype.kind in "iu" and r.dtype.kind == "f" and qout[i] is not None
        if dequantized:
            c = _dequantize(c, qout[i])
        per_output.append({"name": t.name, "shape": list(t.shape), "dtype": t.dtype, "dequantized": dequantized,
                           **output_metrics(c, r, y if i == 0 or len(result.outputs) == 1 else None)})
    s = {"model": result.name, "target": tgt.name, "reference": f"{ref.name} ({Path(ref_path).name})",
         "reference_note": ref.note, "samples": len(samples), "labels": labels is not None, "outputs": per_output,
         "seconds": round(time.perf_counter() - t0, 2)}
    s["criteria"] = check_criteria(s, fail_under)
    s["passed"] = all(c["passed"] for c in s["criteria"])
    return s


CRITERIA = {"exact": "exact", "top1": "top1_agreement", "cosine": "cosine", "accuracy": "accuracy"}


def parse_criterion(text: str) -> tuple[str, float]:
    """``METRIC=VALUE`` of ``--fail-under`` (METRIC one of :data:`CRITERIA`, VALUE a number, a
    fraction for exact/top1/accuracy): (metric, value). ValueError with the reason otherwise."""
    metric, sep, value = text.partition("=")
    if not sep or metric.strip() not in CRITERIA:
        raise ValueError(f"expected METRIC=VALUE with METRIC one of {', '.join(CRITERIA)}, got '{text}'")
    try:
        v = float(value)
    except ValueError:
        raise ValueError(f"'{value}' is not a number (in '{text}')") from None
    if not np.isfinite(v):
        raise ValueError(f"'{value}' is not a finite number")
    return metric.strip(), v


def _criteria_apply(fail_under, result, float_model, labels) -> None:
    """TinyfuseError before anything runs when a --fail-under metric cannot apply (check_criteria)."""
    for metric, _ in fail_under:
        floating = [t for t in result.outputs if not t.dtype.startswith(("int", "uint"))]
        if metric == "exact" and (float_model is not None or floating):
            what = "against a --float-model" if float_model is not None else f"output '{floating[0].name}' is float"
            raise TinyfuseError(f"--fail-under exact: no bit-exact count {what}; use top1 or cosine")
        if metric == "accuracy" and labels is None:
            raise TinyfuseError("--fail-under accuracy needs --labels (class indices of the samples)")


def criterion(text: str) -> tuple[str, float]:
    """argparse type of ``--fail-under``: :func:`parse_criterion`, its ValueError as argparse's error."""
    import argparse
    try:
        return parse_criterion(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def check_criteria(s: dict, fail_under) -> list[dict]:
    """Each (metric, minimum) of ``fail_under`` on every output of the summary ``s``: {metric, minimum,
    output, value, passed}. ``exact`` is the fraction of samples whose output is bit-equal. TinyfuseError
    when a metric does not apply (exact on float outputs, accuracy without --labels)."""
    rows = []
    for metric, minimum in fail_under:
        for o in s["outputs"]:
            value = o.get(CRITERIA[metric])
            if metric == "exact" and value is not None:
                value = value / s["samples"]
            if value is None:
                why = "float outputs (no bit-exact count; use top1 or cosine)" if metric == "exact" else "no --labels"
                raise TinyfuseError(f"--fail-under {metric}: does not apply to output '{o['name']}' {o['dtype']}: {why}")
            rows.append({"metric": metric, "minimum": minimum, "output": o["name"], "value": value,
                         "passed": bool(value >= minimum)})
    return rows


def validate_text(s: dict) -> str:
    """The validate summary as a table per output (tabulate), the reference's note and the criteria."""
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
    lines = ([s["reference_note"]] if s.get("reference_note") else []) + [
        f"validate {s['model']} on {s['target']} against {s['reference']}: {s['samples']} samples "
        f"in {s['seconds']:.1f} s", tabulate(body, head, tablefmt="simple", disable_numparse=True)]
    for c in s.get("criteria", []):
        lines.append(f"--fail-under {c['metric']}={c['minimum']:g}: output '{c['output']}' {c['value']:.6g} "
                     + ("passed" if c["passed"] else "FAILED"))
    return "\n".join(lines)


__all__ = ["CRITERIA", "check_criteria", "criterion", "io_quantization", "load_labels", "load_samples", "output_metrics",
           "parse_criterion", "validate", "validate_text"]
