"""The per-kernel real-arithmetic oracle (compiler/harness/real_oracle.py, issue 13) on the int8
MLPerf Tiny models (ONNX and their TFLite twins) and the onnxruntime-quantized models: every int8
kernel's output of the generated C (gcc, host trace build) against the real arithmetic of its ops on
its own inputs from the same run. Columns: int8 kernels checked, output elements exact / 1 LSB
off, kernels over 1 LSB, the largest difference, and the same figures per op family the brief asked
to measure (softmax, average pool / MEAN as a conv of ones, int8 add, layer norm), whose fixed-point
arithmetic (TFLM's softmax, the rounded pool division) differs most from real arithmetic.

    python benchmarks/real_oracle.py [--seeds N]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tinyfuse.driver import compile_model  # noqa: E402
from tinyfuse.harness.inputs import random_inputs  # noqa: E402
from tinyfuse.harness.real_oracle import check_kernels, model_rounding  # noqa: E402
from tinyfuse.ir import Call, Function, post_order  # noqa: E402

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "models"
MODELS = ["onnx/kws_ref_model.onnx", "onnx/pretrainedResnet_quant.onnx", "onnx/ad01_int8.onnx",
          "tflite/kws_ref_model.tflite", "tflite/pretrainedResnet_quant.tflite", "tflite/ad01_int8.tflite",
          "onnx/mobilenetv2_035_96_qdq.onnx", "onnx/mobilenetv2_035_96_qop.onnx",
          "onnx/resnet10_w16_64_qdq.onnx", "onnx/resnet10_w16_64_qop.onnx",
          "onnx/tiny_transformer_block_op20_qdq.onnx", "onnx/tiny_transformer_block_op20_qop.onnx"]
FAMILIES = {"qnn.softmax": "softmax", "qnn.avg_pool2d": "avg pool", "qnn.add": "int8 add",
            "qnn.mul": "int8 mul", "qnn.layer_norm": "layer norm", "qnn.lut": "LUT"}


def families(fn: Function) -> set[str]:
    """The op families of interest in a kernel; a depthwise conv of ones is an average pool / MEAN."""
    out = set()
    for n in post_order(fn.body):
        if isinstance(n, Call) and isinstance(n.op, Function):
            out |= families(n.op)
        elif isinstance(n, Call) and n.op in FAMILIES:
            out.add(FAMILIES[n.op])
        elif isinstance(n, Call) and n.op == "qnn.conv2d" and n.args[1].__class__.__name__ == "Constant" \
                and (n.args[1].value == 1).all() and n.attrs["groups"] > 1:
            out.add("avg pool")
    return out


def measure(model: Path, seeds: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = compile_model(str(model))
    total = {"checked": 0, "lsb0": 0, "lsb1": 0, "over": 0, "max_lsb": 0}
    per_family = defaultdict(lambda: [0, 0])          # family -> [kernels, max LSB]
    for seed in range(seeds):
        with tempfile.TemporaryDirectory() as tmp:
            report = check_kernels(result, random_inputs(result.inputs, seed), tmp, model_rounding(model))
        s = report.summary()
        total["checked"] = s["checked"]
        for k in ("lsb0", "lsb1", "over"):
            total[k] += s[k] + (s["unchecked"] if k == "over" else 0)
        total["max_lsb"] = max(total["max_lsb"], s["max_lsb"])
        for k in report.kernels:
            for f in families(result.steps[k.index].call.op):
                per_family[f][0] += seed == 0
                per_family[f][1] = max(per_family[f][1], k.max_lsb, k.interior_lsb)
    return total, dict(per_family)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1, help="random inputs per model (seeds 0..N-1)")
    args = ap.parse_args()
    print(f"{'model':<42} {'kernels':>7} {'0 LSB':>9} {'1 LSB':>7} {'>1 LSB':>7} {'max':>4}  families (kernels, max LSB)")
    for m in MODELS:
        total, fam = measure(SHARED / m, args.seeds)
        fams = ", ".join(f"{f} ({n}, {x})" for f, (n, x) in sorted(fam.items())) or "-"
        print(f"{m:<42} {total['checked']:>7} {total['lsb0']:>9} {total['lsb1']:>7} {total['over']:>7} "
              f"{total['max_lsb']:>4}  {fams}")


if __name__ == "__main__":
    main()
