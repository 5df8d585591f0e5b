"""Arena before → after fold_pad on the PyTorch-exported MobileNetV2 that build.py writes (issue 14).

For every model in ``--dir`` (the .onnx, its int8 QDQ twin made here with onnxruntime.quantization on
build.py's calibration images, and the _float / _int8 .tflite when build.py could make them) it compiles
for the host with fold_pad on and off, runs the C once on calibration image 0 and compares it with the
independent oracle (onnxruntime for ONNX, TFLM for int8 .tflite, LiteRT for float .tflite), and prints
one Markdown row: model | arena off → on | kernels off → on | pad / transpose kernels | TFLM arena head
(tflite_micro ``print_allocations``, the planned activation arena) | oracle check.

    PYTHONPATH=.imp .venv/bin/python examples/pytorch_mobilenetv2/measure.py --dir build/pytorch_mobilenetv2
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host

TFLM_HEAD = ("import sys, tflite_micro as t; "
             "t.runtime.Interpreter.from_file(sys.argv[1], arena_size=16 << 20).print_allocations()")


def tflm_head(path: Path) -> int | None:
    """TFLM's planned arena head in bytes (the activations, I/O included), from print_allocations."""
    p = subprocess.run([sys.executable, "-c", TFLM_HEAD, str(path)], capture_output=True, text=True)
    m = re.search(r"Arena allocation head (\d+) bytes", p.stdout + p.stderr)
    return int(m.group(1)) if m else None


def quantize_qdq(onnx_path: Path, calib: np.ndarray) -> Path:
    """The int8 QDQ twin (onnxruntime.quantization.quantize_static, per-channel, QDQ format)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter({"input": img[None]} for img in calib)

        def get_next(self):
            return next(self.it, None)
    out = onnx_path.with_name(onnx_path.stem + "_qdq.onnx")
    if not out.exists():
        quantize_static(str(onnx_path), str(out), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    return out


def oracle(path: Path, x: np.ndarray) -> np.ndarray:
    """The reference output: onnxruntime (ONNX), TFLM (int8 .tflite) or LiteRT (float .tflite)."""
    if path.suffix == ".onnx":
        import onnxruntime as ort
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        return sess.run(None, {sess.get_inputs()[0].name: x})[0]
    if x.dtype == np.int8:
        import tflite_micro
        it = tflite_micro.runtime.Interpreter.from_file(str(path), arena_size=16 << 20)
        it.set_input(x, 0)
        it.invoke()
        return np.array(it.get_output(0), copy=True)
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_path=str(path))
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def model_input(path: Path, img: np.ndarray, result) -> np.ndarray:
    """Calibration image 0 in the model's input dtype and layout (int8 quantized with its q)."""
    shape, dtype = result.inputs[0].shape, result.inputs[0].dtype
    x = img[None] if tuple(shape) == img[None].shape else img[None].transpose(0, 2, 3, 1)
    if dtype == "int8":
        from ai_edge_litert.interpreter import Interpreter
        it = Interpreter(model_path=str(path))
        scale, zp = it.get_input_details()[0]["quantization"]
        return np.clip(np.round(x / scale) + zp, -128, 127).astype(np.int8)
    return x.astype(np.float32)


def check(path: Path, img: np.ndarray, result, workdir: Path) -> str:
    """Run the C once and compare with the oracle: 'exact', max |diff| in LSB or relative."""
    x = model_input(path, img, result)
    (got,) = run_host(build_host(result, workdir), result, [x])
    want = oracle(path, x).reshape(np.shape(got))
    d = np.abs(np.asarray(got, np.float64) - want.astype(np.float64))
    if want.dtype == np.int8:
        return "exact" if d.max() == 0 else f"max {int(d.max())} LSB ({int((d > 0).sum())} differ)"
    return f"max rel {d.max() / max(np.abs(want).max(), 1e-30):.1e}"


def row(path: Path, img: np.ndarray, tmp: Path) -> str:
    counts, checks = {}, []
    for label, disabled in (("off", ("fold_pad",)), ("on", ())):
        r = compile_model(str(path), disabled_passes=disabled)
        names = [k.name for k in r.kernels]
        counts[label] = (r.arena_bytes, len(names), sum(n.endswith("_pad") for n in names),
                         sum("transpose" in n for n in names))
        checks.append(f"{label}: " + check(path, img, r, tmp / f"{path.stem}_{label}"))
    head = tflm_head(path) if path.suffix == ".tflite" else None
    (a0, k0, p0, t0), (a1, k1, p1, t1) = counts["off"], counts["on"]
    return (f"| {path.name} | {a0:,} → {a1:,} | {k0} → {k1} | {p0} → {p1} | {t0} → {t1} | "
            f"{'' if head is None else f'{head:,}'} | {'; '.join(checks)} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=Path("build/pytorch_mobilenetv2"))
    args = ap.parse_args()
    calib = np.load(args.dir / "calib.npy")
    onnx_files = sorted(p for p in args.dir.glob("*.onnx") if not p.stem.endswith("_qdq"))
    models = onnx_files + [quantize_qdq(p, calib) for p in onnx_files] + sorted(args.dir.glob("*.tflite"))
    print("| model | arena off → on (bytes) | kernels off → on | pad kernels | transpose kernels "
          "| TFLM arena head | C vs oracle |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for p in models:
            print(row(p, calib[0], Path(tmp)), flush=True)


if __name__ == "__main__":
    main()
