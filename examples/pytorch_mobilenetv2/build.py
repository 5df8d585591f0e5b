"""Build a PyTorch MobileNetV2 the way users bring one (issue 14): torchvision's architecture with seeded
random weights (no download), exported to ONNX by torch.onnx and, when ``litert-torch`` is installed, to
float and int8 .tflite by the PyTorch → LiteRT converter, which keeps the NCHW input (a TRANSPOSE to
NHWC follows it) and writes an explicit PAD before the convs.

Runs in a scratch venv OUTSIDE the project (torch, torchvision, onnx, optionally litert-torch):

    python -m venv /work/scratch/torchvenv
    /work/scratch/torchvenv/bin/pip install torch torchvision onnx litert-torch
    /work/scratch/torchvenv/bin/python examples/pytorch_mobilenetv2/build.py --out build/pytorch_mobilenetv2

Writes <out>/mobilenetv2_<width>_<size>.onnx, _float.tflite, _int8.tflite (int8: PT2E static
quantization, per-channel weights, calibrated on ``--calib`` seeded uniform random images in [0, 1))
and <out>/calib.npy (those images, NCHW float32); with ``--nhwc-input`` also _nhwc_float/_nhwc_int8
.tflite, the same network behind an NHWC input (no leading TRANSPOSE: the reference for fusing it). The files are several MB: never commit them.
measure.py (in the project venv) compiles them and writes the arena table.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
import torchvision


def build_model(width: float, seed: int) -> torch.nn.Module:
    """torchvision mobilenet_v2 (1000 classes), weights from ``torch.manual_seed(seed)`` init, eval mode."""
    torch.manual_seed(seed)
    model = torchvision.models.mobilenet_v2(weights=None, width_mult=width)
    with torch.no_grad():                      # random BN statistics, so the activations are not trivial
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    return model.eval()


class NHWCInput(torch.nn.Module):
    """The model behind a permute of an NHWC input: what the graph would be with the input transpose
    fused away (a reference row for measure.py, not a different network)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x.permute(0, 3, 1, 2))


def export_onnx(model, x: torch.Tensor, path: Path) -> None:
    torch.onnx.export(model, (x,), str(path), input_names=["input"], output_names=["logits"], opset_version=17,
                      dynamo=False)


def export_tflite(model, x: torch.Tensor, calib: np.ndarray, stem: Path) -> list[Path]:
    """Float and int8 .tflite through litert-torch (PT2E quantizer, per-channel, static)."""
    import litert_torch
    from litert_torch.quantize.pt2e_quantizer import PT2EQuantizer, get_symmetric_quantization_config
    from litert_torch.quantize.quant_config import QuantConfig
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    out = []
    path = stem.with_name(stem.name + "_float.tflite")
    litert_torch.convert(model, (x,)).export(str(path))
    out.append(path)
    quantizer = PT2EQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True, is_dynamic=False))
    exported = torch.export.export(model, (x,)).module()
    prepared = prepare_pt2e(exported, quantizer)
    with torch.no_grad():
        for img in calib:
            prepared(torch.from_numpy(img[None]))
    quantized = convert_pt2e(prepared, fold_quantize=False)
    path = stem.with_name(stem.name + "_int8.tflite")
    litert_torch.convert(quantized, (x,), quant_config=QuantConfig(pt2e_quantizer=quantizer)).export(str(path))
    out.append(path)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("build/pytorch_mobilenetv2"))
    ap.add_argument("--width", type=float, default=0.35)
    ap.add_argument("--size", type=int, default=96)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--calib", type=int, default=16)
    ap.add_argument("--no-tflite", action="store_true", help="ONNX only")
    ap.add_argument("--nhwc-input", action="store_true",
                    help="also the .tflite of the model behind an NHWC input permute (no input TRANSPOSE)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    model = build_model(args.width, args.seed)
    rng = np.random.default_rng(args.seed)
    calib = rng.uniform(0.0, 1.0, (args.calib, 3, args.size, args.size)).astype(np.float32)
    np.save(args.out / "calib.npy", calib)
    x = torch.from_numpy(calib[:1])
    stem = args.out / f"mobilenetv2_{str(args.width).replace('.', '')}_{args.size}"
    export_onnx(model, x, stem.with_suffix(".onnx"))
    print("wrote", stem.with_suffix(".onnx"))
    if not args.no_tflite:
        for p in export_tflite(model, x, calib, stem):
            print("wrote", p)
    if args.nhwc_input and not args.no_tflite:
        nhwc = np.ascontiguousarray(calib.transpose(0, 2, 3, 1))
        for p in export_tflite(NHWCInput(model).eval(), torch.from_numpy(nhwc[:1]), nhwc,
                               stem.with_name(stem.name + "_nhwc")):
            print("wrote", p)


if __name__ == "__main__":
    main()
