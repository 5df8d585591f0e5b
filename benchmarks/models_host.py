#!/usr/bin/env python3
"""Host tables for the float and int8 models in ../shared/models: kernels with/without fuse_ops,
arena vs naive bytes (and TFLM's planned head for the MLPerf Tiny int8 models), accuracy against
onnxruntime / TFLite Micro, and for int8 the LSB histogram vs onnxruntime at both roundings.

    python3 benchmarks/models_host.py            # all tables
"""
from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MODELS = ROOT.parent / "shared" / "models"

from tinyfuse.driver import compile_model  # noqa: E402
from tinyfuse.harness import build_host, run_host  # noqa: E402
from tinyfuse.ir.interpreter import run_module  # noqa: E402

FLOAT = ["kws_ref_model_float32", "pretrainedResnet", "ad01_fp32", "mobilenetv2_035_96", "resnet10_w16_64"]
INT8_TFLM = {"kws_ref_model": 16000, "pretrainedResnet_quant": 49152, "ad01_int8": 768}
INT8_ORT = ["mobilenetv2_035_96_qdq", "mobilenetv2_035_96_qop", "resnet10_w16_64_qdq", "resnet10_w16_64_qop"]


def ort(path, x):
    import onnxruntime as rt
    s = rt.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return s.run(None, {s.get_inputs()[0].name: x})[0]


def run(path, x, **opts):
    t0 = time.perf_counter()
    r = compile_model(path, **opts)
    secs = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as d:
        (y,) = run_host(build_host(r, d), r, [x])
    return r, y, secs


def io(name):
    return np.load(MODELS / "onnx" / f"{name.rsplit('_q', 1)[0] if name.endswith(('_qdq', '_qop')) else name}.io.npz")


def float_table():
    print("| model | kernels fused | kernels unfused | arena_bytes | naive_bytes | max abs diff / max abs ref | compile s |")
    print("|---|---|---|---|---|---|---|")
    for m in FLOAT:
        p = MODELS / "onnx" / f"{m}.onnx"
        x = io(m)["input"]
        r, y, secs = run(p, x)
        ru, yu, _ = run(p, x, disabled_passes=("fuse_ops",))
        ref = ort(p, x)
        rel = float(np.max(np.abs(y - ref)) / np.max(np.abs(ref)))
        assert np.allclose(y, yu, rtol=1e-5, atol=1e-6)
        print(f"| {m} | {len(r.steps)} | {len(ru.steps)} | {r.arena_bytes:,} | {r.naive_bytes:,} | {rel:.1e} | {secs:.2f} |")


def tflm(name, x):
    import tflite_micro
    it = tflite_micro.runtime.Interpreter.from_file(str(MODELS / "tflite" / f"{name}.tflite"), arena_size=1 << 20)
    it.set_input(x, 0)
    it.invoke()
    return it.get_output(0)


def int8_tflm_table():
    print("| model | kernels | arena_bytes | TFLM head | naive_bytes | inputs equal to TFLM (zero + npz + 5 random) |")
    print("|---|---|---|---|---|---|")
    for m, head in INT8_TFLM.items():
        p = MODELS / "onnx" / f"{m}.onnx"
        r = compile_model(p)
        rng = np.random.default_rng(2024)
        shape = r.inputs[0].shape
        xs = [np.zeros(shape, np.int8), io(m)["input"]] + [rng.integers(-128, 128, shape).astype(np.int8) for _ in range(5)]
        with tempfile.TemporaryDirectory() as d:
            exe = build_host(r, d)
            same = sum(np.array_equal(run_host(exe, r, [x])[0], tflm(m, x)) for x in xs)
        print(f"| {m} | {len(r.steps)} | {r.arena_bytes:,} | {head:,} | {r.naive_bytes:,} | {same}/{len(xs)} |")


def int8_ort_table():
    print("| model | rounding | kernels | arena_bytes | C == numpy reference | LSB diff vs onnxruntime (count) |")
    print("|---|---|---|---|---|---|")
    for m in INT8_ORT:
        p = MODELS / "onnx" / f"{m}.onnx"
        x = io(m)["input"]
        want = ort(p, x)
        for rounding in ("double", "single"):
            r, y, _ = run(p, x, rounding=rounding)
            exact = np.array_equal(y, run_module(r.module, [x])[0])
            scale = r.module.main.body.op.body.attrs["scale"]
            hist = Counter(np.rint(np.abs(y.astype(np.float64) - want) / scale).astype(int).reshape(-1).tolist())
            print(f"| {m} | {rounding} | {len(r.steps)} | {r.arena_bytes:,} | {exact} | "
                  + ", ".join(f"{k}: {v}" for k, v in sorted(hist.items())) + " |")


if __name__ == "__main__":
    if not MODELS.exists():
        sys.exit(f"{MODELS} not found")
    float_table()
    print()
    int8_tflm_table()
    print()
    int8_ort_table()
