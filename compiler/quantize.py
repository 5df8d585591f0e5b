"""``tinyfuse quantize``: a float ONNX model and calibration samples -> an int8 QDQ ONNX model that
tinyfuse compiles to int8 kernels, through onnxruntime's own quantization tooling.

    summary = quantize("kws.onnx", "calib.npz", "kws_int8.onnx")     # dict, see below

Steps (onnxruntime.quantization; tinyfuse computes no scale or zero point itself):

1. constant weights behind DequantizeLinear (a float export that kept int8 weights, as
   kws_ref_model_float32.onnx) are folded into float32 initializers, ``(q - zero_point) * scale``
   per tensor or along the node's axis, so the quantizer sees float weights; a model that quantizes
   activations (QuantizeLinear on a non-constant) is refused: it is quantized already;
2. ``quant_pre_process``: shape inference and onnxruntime's graph optimizations (BatchNormalization
   folded into the Conv before, not after, its weights are quantized);
3. ``quantize_static`` with a CalibrationDataReader over the samples and MCU defaults (the TFLite int8
   quantization spec that TFLite Micro and CMSIS-NN kernels implement): QDQ format, weights int8
   symmetric per channel (zero point 0), activations int8 asymmetric (``activations='int16'``: int16
   symmetric, the 16x8 scheme), calibration MinMax (``method``: minmax, entropy, percentile), bias int32
   with scale s_x * s_w;
4. the output gets ``metadata_props`` ``tinyfuse.quantize`` (the settings and the samples' count), so a
   later ``quantize`` may replace it; any other existing file at the output path is left alone (error).

Calibration samples: the .npz/.npy format of ``tinyfuse validate --inputs`` (one array per graph
input, first axis = samples), float. A float .tflite is refused (convert it to ONNX first).

The summary: ``output``, ``samples``, ``activations``, ``method``, ``opset`` (of the output), ``folded`` (DequantizeLinear folded),
``quantized_ops`` (operator type -> count of QDQ-wrapped nodes), and onnxruntime's evaluation of the
quantized model against the float one on the calibration samples: ``top1_agreement``, ``max_abs_error``
(optimizations off: the QDQ graph as written).
"""
from __future__ import annotations

import os
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

from ._version import __version__
from .errors import TinyfuseError
from .frontend.detect import model_format

MARK = "tinyfuse.quantize"
ACTIVATIONS = ("int8", "int16")
METHODS = ("minmax", "entropy", "percentile")


class _Info:
    """A graph input as validate.load_samples reads it: name, shape, dtype."""

    def __init__(self, name: str, shape: tuple[int, ...], dtype: str = "float32"):
        self.name, self.shape, self.dtype = name, shape, dtype


def graph_inputs(model) -> list[_Info]:
    """The graph's non-initializer inputs; TinyfuseError for a non-float or dynamic one."""
    inits = {t.name for t in model.graph.initializer}
    out = []
    for v in model.graph.input:
        if v.name in inits:
            continue
        tt = v.type.tensor_type
        if tt.elem_type != 1:
            raise TinyfuseError(f"quantize: graph input '{v.name}' is not float32 (elem_type {tt.elem_type}): "
                                "a float model is needed")
        dims = [d.dim_value if d.HasField("dim_value") else 1 if i == 0 else 0 for i, d in enumerate(tt.shape.dim)]
        if any(d <= 0 for d in dims):
            raise TinyfuseError(f"quantize: graph input '{v.name}' has a dynamic shape beyond the batch axis")
        out.append(_Info(v.name, tuple(dims)))
    return out


def fold_constant_dequantize(model) -> int:
    """Replace every DequantizeLinear whose inputs are all initializers by its float32 value (an
    initializer of the same name); the number folded. TinyfuseError when a QuantizeLinear or a
    DequantizeLinear of a non-constant is present (the model quantizes activations already)."""
    from onnx import numpy_helper
    g = model.graph
    init = {t.name: t for t in g.initializer}
    folded = []
    for n in g.node:
        const = n.op_type == "DequantizeLinear" and all(i in init for i in n.input if i)
        if n.op_type in ("QuantizeLinear", "DynamicQuantizeLinear") or n.op_type.startswith("QLinear") or \
                (n.op_type == "DequantizeLinear" and not const):
            raise TinyfuseError(f"quantize: node '{n.name}' ({n.op_type}) quantizes activations: the model is quantized "
                                "already; give the float model")
        if const:
            folded.append(n)
    for n in folded:
        x, scale = (numpy_helper.to_array(init[i]) for i in n.input[:2])
        zp = numpy_helper.to_array(init[n.input[2]]) if len(n.input) > 2 and n.input[2] else np.zeros_like(scale)
        axis = next((a.i for a in n.attribute if a.name == "axis"), 1)
        if scale.ndim == 1 and x.ndim > 1:
            shape = [1] * x.ndim
            shape[axis % x.ndim] = -1
            scale, zp = scale.reshape(shape), zp.reshape(shape)
        value = ((x.astype(np.float64) - zp.astype(np.float64)) * scale.astype(np.float64)).astype(np.float32)
        g.initializer.append(numpy_helper.from_array(value, n.output[0]))
        g.node.remove(n)
    used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    return len(folded)


def _reader(infos, samples):
    from onnxruntime.quantization import CalibrationDataReader

    class Reader(CalibrationDataReader):
        def __init__(self):
            self._it = iter([{t.name: np.asarray(x, np.float32).reshape(t.shape) for t, x in zip(infos, s)}
                             for s in samples])

        def get_next(self):
            return next(self._it, None)
    return Reader()


def _check_output(model: Path, output: Path) -> None:
    """The output must not be the model, nor an existing file tinyfuse quantize did not write."""
    if output.exists() and output.resolve() == model.resolve():
        raise TinyfuseError(f"quantize: -o {output} is the input model")
    if output.is_dir():
        raise TinyfuseError(f"quantize: -o {output} is a directory; give the .onnx file to write")
    if output.exists():
        import onnx
        try:
            props = {p.key for p in onnx.load(str(output), load_external_data=False).metadata_props}
        except Exception:
            props = set()
        if MARK not in props:
            raise TinyfuseError(f"quantize: {output} exists and was not written by tinyfuse quantize; remove it or "
                                "choose another -o")


def _settings(activations: str, method: str):
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType
    if activations not in ACTIVATIONS:
        raise TinyfuseError(f"quantize: --activations must be one of {', '.join(ACTIVATIONS)}, got '{activations}'")
    if method not in METHODS:
        raise TinyfuseError(f"quantize: --method must be one of {', '.join(METHODS)}, got '{method}'")
    calib = {"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
             "percentile": CalibrationMethod.Percentile}[method]
    return dict(quant_format=QuantFormat.QDQ, per_channel=True, reduce_range=False,
                activation_type=QuantType.QInt16 if activations == "int16" else QuantType.QInt8,
                weight_type=QuantType.QInt8, calibrate_method=calib,
                extra_options={"WeightSymmetric": True, "ActivationSymmetric": activations == "int16"})


def quantize(model: str | Path, calibration: str | Path, output: str | Path, activations: str = "int8",
             method: str = "minmax") -> dict:
    """Quantize the float ONNX ``model`` with the samples of ``calibration`` into ``output`` (module
    doc); the summary dict. TinyfuseError (one line) for a .tflite or an already quantized model,
    samples that do not fit the graph inputs, or an output path that is not tinyfuse's to write."""
    import onnx
    from onnxruntime.quantization import quant_pre_process, quantize_static

    from .validate import load_samples
    model, output = Path(model), Path(output)
    if not model.is_file():
        raise TinyfuseError(f"quantize: {model}: no such file")
    if model_format(model) == "tflite":
        raise TinyfuseError(f"quantize: {model} is a TFLite model; quantize takes a float ONNX model (convert it, e.g. "
                            "python -m tf2onnx.convert --tflite MODEL.tflite --output MODEL.onnx, or quantize with the "
                            "TFLite converter and a representative dataset)")
    _check_output(model, output)
    options = _settings(activations, method)
    try:
        proto = onnx.load(str(model))
    except Exception as e:
        raise TinyfuseError(f"quantize: {model}: not a readable ONNX model ({type(e).__name__})") from None
    folded = fold_constant_dequantize(proto)
    infos = graph_inputs(proto)
    samples = load_samples(calibration, infos)
    for t, x in zip(infos, samples[0]):
        if x.dtype.kind != "f":
            raise TinyfuseError(f"quantize: --calibration {calibration}: input '{t.name}' takes float samples, got {x.dtype}")
    with tempfile.TemporaryDirectory(prefix="tinyfuse_quantize_") as tmp:
        src, pre, out = Path(tmp) / "float.onnx", Path(tmp) / "pre.onnx", Path(tmp) / "q.onnx"
        onnx.save(proto, str(src))
        with _quiet():
            quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
            quantize_static(str(pre), str(out), _reader(infos, samples), **options)
        q = onnx.load(str(out))
        _mark(q, activations, method, len(samples), folded)
        output.parent.mkdir(parents=True, exist_ok=True)
        part = output.with_name(f".{output.name}.{os.getpid()}.tmp")
        onnx.save(q, str(part))
        os.replace(part, output)
    opset = next((o.version for o in q.opset_import if o.domain in ("", "ai.onnx")), None)
    return {"output": str(output), "samples": len(samples), "activations": activations, "method": method,
            "opset": opset, "folded": folded, "quantized_ops": quantized_ops(q), **agreement(model, output, infos, samples)}


class _quiet:
    """onnxruntime's quantization tools log through the root logger (e.g. int16 raising the opset to 21):
    kept off the terminal; what matters is in the summary (the output's opset)."""

    def __enter__(self):
        import logging
        self._level = logging.getLogger().level
        logging.getLogger().setLevel(logging.ERROR)

    def __exit__(self, *exc):
        import logging
        logging.getLogger().setLevel(self._level)


def _mark(q, activations: str, method: str, n: int, folded: int) -> None:
    entry = q.metadata_props.add()
    entry.key, entry.value = MARK, (f"tinyfuse {__version__}; onnxruntime quantize_static QDQ, weights int8 symmetric "
                                    f"per-channel, activations {activations}, {method} calibration on {n} samples"
                                    + (f", {folded} constant DequantizeLinear folded" if folded else ""))


def quantized_ops(q) -> dict[str, int]:
    """Operator type -> count of nodes whose weight or first input comes through a DequantizeLinear."""
    dq = {o for n in q.graph.node if n.op_type == "DequantizeLinear" for o in n.output}
    return dict(sorted(Counter(n.op_type for n in q.graph.node if n.op_type not in ("QuantizeLinear", "DequantizeLinear")
                               and any(i in dq for i in n.input)).items()))


def agreement(float_model: Path, quantized: Path, infos, samples) -> dict:
    """onnxruntime (optimizations off) on both models over ``samples``: top-1 agreement of the first
    output (argmax over its last axis) and max |quantized - float| over every output."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    runs = [ort.InferenceSession(str(p), so, providers=["CPUExecutionProvider"]) for p in (float_model, quantized)]
    top, err = [], 0.0
    for s in samples:
        feeds = {t.name: np.asarray(x, np.float32).reshape(t.shape) for t, x in zip(infos, s)}
        f, q = (sess.run(None, feeds) for sess in runs)
        err = max(err, *(float(np.max(np.abs(a.astype(np.float64) - b))) for a, b in zip(q, f)))
        top.append(np.array_equal(np.argmax(f[0].reshape(-1, f[0].shape[-1]), -1),
                                  np.argmax(q[0].reshape(-1, q[0].shape[-1]), -1)))
    return {"top1_agreement": float(np.mean(top)), "max_abs_error": err}


def quantize_text(s: dict, model: str, calibration: str) -> str:
    """The summary as text, with the command that validates the compiled result."""
    ops = ", ".join(f"{k} {v}" for k, v in s["quantized_ops"].items())
    return "\n".join([
        f"wrote {s['output']} (opset {s['opset']}): QDQ, weights int8 per-channel symmetric, activations {s['activations']}, "
        f"{s['method']} calibration on {s['samples']} samples" + (f"; {s['folded']} constant DequantizeLinear folded "
                                                                  "first" if s["folded"] else ""),
        f"quantized nodes: {ops or 'none'}",
        f"onnxruntime, quantized vs float on the calibration samples: top-1 agreement {s['top1_agreement']:.2%}, "
        f"max |error| {s['max_abs_error']:.4g}",
        *(["note: 16x8: tinyfuse requantizes the integer accumulators, onnxruntime quantizes float results between "
           "its DequantizeLinear/QuantizeLinear: expect a few int16 steps between them"] if s["activations"] == "int16"
          else []),
        f"next: tinyfuse validate {s['output']} --float-model {model} --inputs {calibration}"])


__all__ = ["ACTIVATIONS", "METHODS", "fold_constant_dequantize", "quantize", "quantize_text"]


def add_parser(sub, epilog: dict) -> None:
    """The ``quantize`` subcommand."""
    q = sub.add_parser("quantize", help="float ONNX + calibration samples -> int8 QDQ ONNX (onnxruntime's "
                       "quantize_static with MCU defaults)", **epilog)
    q.add_argument("model", help="a float .onnx model")
    q.add_argument("--calibration", required=True, metavar="SAMPLES", help=".npz (one float array per graph input, "
                   "first axis = samples, the format of validate --inputs) or .npy for a single input")
    q.add_argument("-o", "--output", required=True, metavar="OUT.onnx", help="the quantized model (an existing file "
                   "is replaced only when tinyfuse quantize wrote it)")
    q.add_argument("--activations", default="int8", choices=ACTIVATIONS, help="int8 (asymmetric, default) or int16 "
                   "(symmetric, 16x8: int16 activations, int8 weights)")
    q.add_argument("--method", default="minmax", choices=METHODS, help="calibration: minmax (default), entropy, "
                   "percentile (onnxruntime's calibrators)")
    q.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    q.add_argument("--debug", action="store_true", help="show tracebacks")


def cmd_quantize(args) -> int:
    """``tinyfuse quantize``: quantize, print the summary; 0."""
    import json
    s = quantize(args.model, args.calibration, args.output, args.activations, args.method)
    print(json.dumps(s) if args.json else quantize_text(s, args.model, args.calibration))
    return 0
