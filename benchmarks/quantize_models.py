"""tinyfuse quantize on two float models, and the compiled int8 result against onnxruntime's int8
execution of the same QDQ model.

- KWS (DS-CNN, kws_ref_model_float32.onnx): calibration and evaluation samples from
  examples/kws_samples.py (espeak-ng speech and noise through the MLPerf Tiny MFCC front end; seeds 0 and
  1, 72 samples each). The .io.npz beside the model holds one seeded input, i.i.d. over the int8 model's
  input range (no correlation between frames): not speech.
- MobileNetV2-0.35 (mobilenetv2_035_96.onnx, seeded random weights, so no real images to match):
  standard-normal inputs as its .io.npz input is (mean 0, std 1), seeds 0 and 1, 32 samples each.

Per model: onnxruntime's int8 vs float on the evaluation samples; the compiled C (host gcc) vs the float
model (tinyfuse validate --float-model: top-1 agreement, max error); the C with --rounding double (TFLM's)
and single against onnxruntime on the QDQ model with optimizations off (each node in float on the
dequantized values, then QuantizeLinear) and on (QLinearConv: integer sums, float requantization), in
output LSBs; and, where the single-rounding C differs from onnxruntime (optimizations off), the first
kernel whose int8 output differs (onnxruntime's QuantizeLinear output of the same node, NCHW -> NHWC),
each differing element with the real-arithmetic value of the kernel on the same inputs
(harness/real_oracle.py, float64): which side left exact arithmetic.

    python benchmarks/quantize_models.py [--out DIR]      (needs espeak-ng for the KWS samples)
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tinyfuse.driver import compile_model  # noqa: E402
from tinyfuse.harness.batch import build_host_batch, run_host_batch  # noqa: E402
from tinyfuse.harness.per_layer import trace_kernels  # noqa: E402
from tinyfuse.harness.real_oracle import evaluate_real, kernel_inputs  # noqa: E402
from tinyfuse.harness.verdict import output_quant  # noqa: E402
from tinyfuse.quantize import quantize  # noqa: E402
from tinyfuse.validate import validate  # noqa: E402

SHARED = ROOT.parent / "shared" / "models" / "onnx"


def kws_samples(path: Path, seed: int) -> None:
    spec = importlib.util.spec_from_file_location("kws_samples", ROOT / "examples" / "kws_samples.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main([str(path), "--seed", str(seed)])


def normal_samples(path: Path, seed: int, name: str, shape, n: int = 32) -> None:
    np.savez(path, **{name: np.random.default_rng(seed).standard_normal((n, *shape)).astype(np.float32)})


def ort_outputs(model: Path, name: str, xs, optimize: bool) -> np.ndarray:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize else \
        ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    return np.stack([sess.run(None, {name: x})[0] for x in xs])


def c_outputs(result, xs) -> np.ndarray:
    with tempfile.TemporaryDirectory() as tmp:
        outs = run_host_batch(build_host_batch(result, tmp), result, [[x.reshape(result.inputs[0].shape)] for x in xs])
    return np.stack([o[0] for o in outs])


def lsb_line(c: np.ndarray, y: np.ndarray, scale: float, what: str) -> str:
    lsb = np.abs(np.rint(c.astype(np.float64) / scale) - np.rint(y.astype(np.float64) / scale)).reshape(len(c), -1)
    return (f"  {what}: {int(np.sum(lsb == 0))}/{lsb.size} outputs equal, max {int(lsb.max())} LSB, "
            f"samples bit-exact {int(np.sum(np.all(lsb == 0, axis=1)))}/{len(c)}")


def node_tensors(model: Path) -> tuple[dict[str, str], dict[str, tuple], Path]:
    """{node name: the int8 tensor its output is quantized into}, {int8 tensor: (its float input, scale,
    zero point)}, and a copy of the model with every QuantizeLinear's input and output as graph outputs."""
    from onnx import numpy_helper
    m = onnx.load(str(model))
    init = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    qs = [n for n in m.graph.node if n.op_type == "QuantizeLinear"]
    q_of = {n.input[0]: n.output[0] for n in qs}
    before = {n.output[0]: (n.input[0], float(init[n.input[1]]), int(init[n.input[2]])) for n in qs}
    out = {}
    for n in m.graph.node:
        out[n.name] = n.output[0] if n.op_type == "QuantizeLinear" else q_of.get(n.output[0], n.output[0])
    known = {o.name for o in m.graph.output} | {i.name for i in m.graph.input}
    extra = sorted({t for n in qs for t in (n.input[0], n.output[0])} - known)
    m.graph.output.extend(onnx.helper.make_empty_tensor_value_info(t) for t in extra)
    path = Path(tempfile.mkdtemp()) / "all_outputs.onnx"
    onnx.save(m, str(path))
    return out, before, path


def first_divergence(model: Path, result, x: np.ndarray) -> list[str]:
    """The first kernel of the single-rounding C whose output differs from onnxruntime's (no
    optimizations) tensor of the same node, and each differing element with its real value."""
    tensor_of, before, extended = node_tensors(model)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(extended), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    ort_values = dict(zip(names, sess.run(None, {sess.get_inputs()[0].name: x})))
    inputs = [x.reshape(result.inputs[0].shape)]
    with tempfile.TemporaryDirectory() as tmp:
        traced = trace_kernels(result, inputs, tmp)
    args = kernel_inputs(result, inputs, traced)
    for i, (s, got) in enumerate(zip(result.steps, traced)):
        tensor = tensor_of.get((s.call.op.source_spans() or [""])[-1])
        want = ort_values.get(tensor)
        if want is None or got.dtype != np.int8:
            continue
        nhwc = want.ndim == 4 and np.sum(want.transpose(0, 2, 3, 1).reshape(-1) != got.reshape(-1)) < \
            np.sum(want.reshape(-1) != got.reshape(-1))                     # the C's layout: NCHW or NHWC
        want = want.transpose(0, 2, 3, 1) if nhwc else want
        src, scale, zp = before.get(tensor, (None, 1.0, 0))
        pre = ort_values.get(src)
        pre = (pre.transpose(0, 2, 3, 1) if nhwc else pre) / np.float32(scale) + zp if pre is not None else None
        diff = np.flatnonzero(want.reshape(-1) != got.reshape(-1))
        if diff.size:
            real, _ = evaluate_real(s.call.op, args[i], "half_even")
            real = np.asarray(real).reshape(-1)
            lines = [f"  first divergent kernel #{i} {s.kernel.name} ({s.call.op.source_spans()[-1]}): "
                     f"{diff.size}/{got.size} elements differ"]
            for j in diff[:8]:
                c, o, r = int(got.reshape(-1)[j]), int(want.reshape(-1)[j]), int(real[j])
                who = f"onnxruntime = real arithmetic, the C {c - r:+d} LSB" if o == r else \
                    f"the C = real arithmetic, onnxruntime {o - r:+d} LSB" if c == r else "neither equals real arithmetic"
                v = f" (onnxruntime's float32 value before QuantizeLinear: {pre.reshape(-1)[j]:.6f} LSB)" \
                    if pre is not None else ""
                lines.append(f"    element {j}: C {c}, onnxruntime {o}, real arithmetic {r}: {who}{v}")
            return lines
    return ["  no kernel differs from onnxruntime's tensor of its node"]


def report(name: str, float_model: Path, cal: Path, ev: Path, out: Path) -> None:
    input_name = np.load(cal).files[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = quantize(float_model, cal, out)
        print(f"== {name}: {float_model.name} -> {out.name} ({q['samples']} calibration samples; "
              f"quantized nodes {q['quantized_ops']})")
        xs = np.load(ev)[input_name]
        f = ort_outputs(float_model, input_name, xs, False)
        y0, y1 = (ort_outputs(out, input_name, xs, opt) for opt in (False, True))
        top = np.mean(f.reshape(len(xs), -1).argmax(1) == y0.reshape(len(xs), -1).argmax(1))
        print(f"  onnxruntime int8 vs float on {len(xs)} evaluation samples: top-1 agreement {top:.2%}, "
              f"max |error| {np.max(np.abs(y0 - f)):.4g} (max |float| {np.max(np.abs(f)):.4g})")
        v = validate(out, ev, float_model=float_model, progress=False)["outputs"][0]
        print(f"  tinyfuse C (host) vs float model (validate --float-model): top-1 agreement {v['top1_agreement']:.2%}, "
              f"max |error| {v['max_abs_error']:.4g}, cosine {v['cosine']:.6f}")
        results = {r: compile_model(str(out), rounding=r) for r in ("double", "single")}
        scale = output_quant(results["single"], 0)[0]
        for r, result in results.items():
            c = c_outputs(result, xs)
            print(lsb_line(c, y0, scale, f"C --rounding {r} vs onnxruntime int8, optimizations off"))
            print(lsb_line(c, y1, scale, f"C --rounding {r} vs onnxruntime int8, optimizations on "))
            if r == "single":
                bad = np.flatnonzero(np.any(np.rint(c / scale).reshape(len(xs), -1) !=
                                            np.rint(y0 / scale).reshape(len(xs), -1), axis=1))
                for k in bad[:2]:
                    print(f"  sample {k}:")
                    print("\n".join(first_divergence(out, result, xs[k])))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="directory for the samples and quantized models (default: temp)")
    args = ap.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="quantize_models_"))
    out.mkdir(parents=True, exist_ok=True)
    kws_samples(out / "kws_cal.npz", 0)
    kws_samples(out / "kws_eval.npz", 1)
    report("KWS", SHARED / "kws_ref_model_float32.onnx", out / "kws_cal.npz", out / "kws_eval.npz", out / "kws_int8.onnx")
    normal_samples(out / "mbv2_cal.npz", 0, "input", (1, 3, 96, 96))
    normal_samples(out / "mbv2_eval.npz", 1, "input", (1, 3, 96, 96))
    report("MobileNetV2-0.35", SHARED / "mobilenetv2_035_96.onnx", out / "mbv2_cal.npz", out / "mbv2_eval.npz",
           out / "mbv2_int8.onnx")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
