#!/usr/bin/env python3
"""Arena bytes against TFLM and the layer-by-layer bound, and what poly fusion costs in instructions.

Tables:
  1. arena_bytes (I/O + activations + scratch, int8): model | TFLM head | layer-by-layer bound | ours
     host | ours cortex-m4 | goal | compile seconds. The layer-by-layer bound is the smallest live
     peak any runtime that materialises every layer's output reaches (best kernel order, no in-place
     reuse, no fusion): the "below every layer-by-layer runtime" line.
  2. cortex-m4 instructions (qemu, exact counts) with and without poly_fuse, and the arena each way.

    python3 benchmarks/memory.py            # both tables (table 2 needs qemu + arm-none-eabi-gcc)
    python3 benchmarks/memory.py --no-qemu  # table 1 only
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ONNX = ROOT.parent / "shared" / "models" / "onnx"

from tinyfuse.driver import compile_model  # noqa: E402

# TFLM's planned arena head for the int8 .tflite twins (tflite_micro print_allocations), and the goals
MODELS = [  # (label, file, TFLM head, goal)
    ("KWS (DS-CNN)", "kws_ref_model.onnx", 16000, 8500),
    ("ResNet-8", "pretrainedResnet_quant.onnx", 49152, 24000),
    ("MobileNetV2-0.35 (float32 input)", "mobilenetv2_035_96_qdq.onnx", 138240, 96000),
    ("MobileNetV2-0.35 (int8 input)", "mobilenetv2_035_96_qdq.onnx:int8-input", 138240, 96000),
]


def int8_input_variant(model: onnx.ModelProto) -> onnx.ModelProto:
    """The QDQ model with its input QuantizeLinear removed: the graph input is the int8 tensor, as
    TFLM's int8 model takes it (the float32 input alone is 110,592 bytes)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    q = next(n for n in g.node if n.op_type == "QuantizeLinear" and n.input[0] == g.input[0].name)
    g.node.remove(q)
    shape = [d.dim_value for d in g.input[0].type.tensor_type.shape.dim]
    zp = next((i for i in g.initializer if len(q.input) > 2 and i.name == q.input[2]), None)
    del g.input[0]
    g.input.insert(0, helper.make_tensor_value_info(q.output[0], zp.data_type if zp else TensorProto.UINT8, shape))
    return m


def load(spec: str):
    name, _, variant = spec.partition(":")
    path = ONNX / name
    if not path.exists():
        return None
    if variant == "int8-input":
        return int8_input_variant(onnx.load(path))
    return str(path)


def table1(rows) -> list[dict]:
    out = []
    for label, spec, head, goal in rows:
        model = load(spec)
        if model is None:
            print(f"  {label}: {spec} not found, skipped")
            continue
        t0 = time.perf_counter()
        host = compile_model(model, name="m")
        secs = time.perf_counter() - t0
        m4 = compile_model(model, name="m", target="cortex-m4")
        layer = compile_model(model, name="m", disabled_passes=("poly_fuse",)).memory.bound_no_inplace
        out.append({"model": label, "tflm_head": head, "layer_bound": layer, "host": host.arena_bytes,
                    "cortex_m4": m4.arena_bytes, "lower_bound": host.plan.lower_bound, "goal": goal,
                    "compile_s": round(secs, 1), "fused": sum(bool(s.call.op.attrs.get("poly")) for s in host.steps)})
    return out


def bench(model, extra) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        src = model
        if not isinstance(model, str):
            src = str(Path(tmp) / "m.onnx")
            onnx.save(model, src)
        cmd = [sys.executable, "-m", "tinyfuse", "bench", src, "--target", "cortex-m4", "--json", *extra]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=1800)
        if proc.returncode:
            raise RuntimeError(proc.stderr[-2000:])
        return json.loads(proc.stdout)


def table2(rows) -> list[dict]:
    out = []
    for label, spec, _, _ in rows:
        model = load(spec)
        if model is None:
            continue
        on, off = bench(model, []), bench(model, ["--disable-pass", "poly_fuse"])
        out.append({"model": label, "insns_fused": on["instructions"], "insns_unfused": off["instructions"],
                    "extra": on["instructions"] / off["instructions"] - 1,
                    "arena_fused": on["arena_bytes"], "arena_unfused": off["arena_bytes"]})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-qemu", action="store_true", help="skip the cortex-m4 instruction table")
    ap.add_argument("--json", action="store_true", help="print the tables as JSON")
    args = ap.parse_args(argv)
    t1 = table1(MODELS)
    t2 = [] if args.no_qemu or not shutil.which("qemu-system-arm") else table2(MODELS)
    if args.json:
        print(json.dumps({"arena": t1, "cortex_m4": t2}, indent=1))
        return 0
    print("arena_bytes, int8 (I/O + activations + scratch)")
    print(f"| {'model':<34} | {'TFLM head':>9} | {'layer-by-layer bound':>20} | {'ours (host)':>11} | "
          f"{'ours (cortex-m4)':>16} | {'goal':>12} | fused | compile s |")
    print(f"|{'-' * 36}|{'-' * 11}|{'-' * 22}|{'-' * 13}|{'-' * 18}|{'-' * 14}|-------|-----------|")
    for r in t1:
        ok = "ok" if min(r["host"], r["cortex_m4"]) <= r["goal"] else "MISSED"
        print(f"| {r['model']:<34} | {r['tflm_head']:>9} | {r['layer_bound']:>20} | {r['host']:>11} | "
              f"{r['cortex_m4']:>16} | {r['goal']:>5} {ok:<6} | {r['fused']:>5} | {r['compile_s']:>9} |")
    if t2:
        print("\ncortex-m4 instructions per inference (qemu), with and without poly_fuse")
        print(f"| {'model':<34} | {'poly_fuse':>11} | {'without':>11} | {'extra':>7} | {'arena':>7} | "
              f"{'arena without':>13} |")
        print(f"|{'-' * 36}|{'-' * 13}|{'-' * 13}|{'-' * 9}|{'-' * 9}|{'-' * 15}|")
        for r in t2:
            print(f"| {r['model']:<34} | {r['insns_fused']:>11} | {r['insns_unfused']:>11} | {r['extra']:>+6.1%} | "
                  f"{r['arena_fused']:>7} | {r['arena_unfused']:>13} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
