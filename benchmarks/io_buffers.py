#!/usr/bin/env python3
"""Arena bytes with the model inputs and outputs in the arena (default) and in caller-owned buffers
(``--io-buffers caller``), per model and target.

Columns: arena (arena form: I/O + activations + scratch) | arena (caller form: activations +
scratch) | caller I/O bytes | caller arena + I/O (the RAM the caller form needs in total).
Models: the issue-14 MobileNetV1 96x96 U8S8 QDQ (tests/builders/mobilenet_v1.py, onnxruntime's
quantize_static; goal arena <= 32,640 B) and the shared int8 QDQ models.

    python3 benchmarks/io_buffers.py [--targets host cortex-m4]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ONNX = ROOT.parent / "shared" / "models" / "onnx"

from tinyfuse.driver import compile_model  # noqa: E402

SHARED = [("KWS (DS-CNN) int8", "kws_ref_model.onnx"), ("ResNet-8 int8", "pretrainedResnet_quant.onnx"),
          ("ResNet-10 w16 QDQ", "resnet10_w16_64_qdq.onnx"), ("MobileNetV2-0.35 96 QDQ", "mobilenetv2_035_96_qdq.onnx")]


def mobilenet_v1_u8s8():
    from tests.builders.mobilenet_v1 import mobilenet_v1, quantize_static_qdq
    with tempfile.TemporaryDirectory() as tmp:
        return quantize_static_qdq(mobilenet_v1(96, widths=(8, 16, 32, 32, 64), first_stride=2), Path(tmp), "QUInt8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", nargs="+", default=["host", "cortex-m4"])
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    models = [("MobileNetV1 96 U8S8 QDQ (builder)", mobilenet_v1_u8s8())]
    models += [(label, ONNX / f) for label, f in SHARED if (ONNX / f).is_file()]
    print("| model | target | arena (I/O in arena) B | arena (--io-buffers caller) B | caller I/O B | caller arena + I/O B |")
    print("|---|---|---:|---:|---:|---:|")
    for label, model in models:
        for t in args.targets:
            a = compile_model(model, target=t)
            c = compile_model(model, target=t, io_buffers="caller")
            print(f"| {label} | {t} | {a.arena_bytes} | {c.arena_bytes} | {c.io_bytes} | {c.arena_bytes + c.io_bytes} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
