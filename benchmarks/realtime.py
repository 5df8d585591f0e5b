"""Real-time mode on the MLPerf Tiny int8 models (KWS DS-CNN, ResNet-8, ToyCar AD), cortex-m4 under
qemu, instruction counts from the TCG plugin (README "Real-time mode"). Prints markdown tables:

1. activation skipping (--skip-zero-activations): per conv / fully connected layer, the fraction of its
   input activations at the zero point on the model's real input (../shared/models/onnx/<m>.io.npz,
   numpy interpreter on the fused IR) and of whole groups of 4 (what the kernel can skip), the
   instructions of that kernel without and with skipping, and whether the outputs equal TFLM's;
2. --wcet: every kernel's instructions over 20 seeded random inputs + the npz input (min, max);
3. step fission: --max-step-instructions 50000 on ResNet-8: steps, the largest measured, and the
   total against <name>_run of the same build and of the default build.

    python benchmarks/realtime.py [--only skip|wcet|steps] [--budget 50000] [--models M.tflite|M.onnx ...]

``--models``: the --wcet table for these model files instead of the three MLPerf Tiny ones (e.g. the
VWW-sized ../shared/models/onnx/mobilenetv2_035_96_qdq.onnx and the .tflite of examples/build_vww.py);
the real input sample is ``<stem>.io.npz`` beside the file (a ``_qdq``/``_qop`` suffix dropped) when
it exists, else only the random inputs.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tinyfuse.driver import compile_model  # noqa: E402
from tinyfuse.harness.bench import bench_target  # noqa: E402
from tinyfuse.harness.inputs import random_inputs  # noqa: E402
from tinyfuse.harness.qemu import build_target, run_target  # noqa: E402
from tinyfuse.harness.realtime import WCET_RANDOM_INPUTS, bench_wcet  # noqa: E402
from tinyfuse.harness.steps import bench_steps  # noqa: E402
from tinyfuse.ir.group import split_group  # noqa: E402
from tinyfuse.ir.interpreter import evaluate  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"
if not SHARED.exists():
    SHARED = Path("/work/shared/models")
MODELS = ("kws_ref_model", "pretrainedResnet_quant", "ad01_int8")
TARGET = "cortex-m4"


def _model(name):
    return SHARED / "tflite" / f"{name}.tflite", np.load(SHARED / "onnx" / f"{name}.io.npz")


def _compile(path, **realtime):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile_model(path, target=TARGET, realtime=realtime or None)


def sparsity(result, x) -> dict[str, tuple]:
    """kernel name -> (anchor kind, input shape, zero point, fraction == zp, fraction of groups of 4 == zp)."""
    env: dict = {}
    evaluate(result.module.main, [x], env)
    out = {}
    for s in result.steps:
        if s.call.op.attrs.get("poly"):        # a poly-fused chain: not a skipping candidate
            continue
        anchor, _ = split_group(s.call.op)
        if anchor is None or anchor.op not in ("qnn.conv2d", "qnn.matmul"):
            continue
        v, zp = np.asarray(env[id(s.call.args[0])]), int(anchor.attrs.get("input_zero_point", 0))
        K = v.shape[-1]
        groups = v.reshape(-1, K)[:, :K // 4 * 4].reshape(-1, K // 4, 4) if K >= 4 else np.zeros((0, 1, 4))
        kind = "fc" if anchor.op == "qnn.matmul" else ("dw" if anchor.attrs["groups"] > 1 else
                                                       "pw" if s.kernel.variant.startswith("skip") else "conv")
        out[s.kernel.name] = (kind, tuple(v.shape), zp, float(np.mean(v == zp)),
                              float(np.mean(np.all(groups == zp, axis=-1))) if groups.size else 0.0)
    return out


def skip_table(tmp: Path) -> None:
    print("## Activation skipping (--skip-zero-activations), cortex-m4, the npz input\n")
    for name in MODELS:
        path, io = _model(name)
        x = io["input"]
        figures, exact = {}, {}
        for flag in (False, True):
            result = _compile(path, skip_zero_activations=flag)
            build = build_target(result, TARGET, tmp / f"{name}-skip{int(flag)}", [x])
            exact[flag] = bool(np.array_equal(run_target(build)[0].reshape(io["tflm"].shape), io["tflm"]))
            figures[flag] = bench_target(build)
            if flag:
                layers = sparsity(result, x)
        print(f"### {name}: {figures[False]['instructions']} -> {figures[True]['instructions']} instructions "
              f"({figures[True]['instructions'] / figures[False]['instructions'] - 1:+.1%}); outputs equal TFLM: "
              f"without {exact[False]}, with {exact[True]}\n")
        print("| kernel | kind | input | zp | act. at zp | groups of 4 at zp | variant with | instr. without | "
              "instr. with | change |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for k0, k1 in zip(figures[False]["kernels"], figures[True]["kernels"]):
            if k0["name"] not in layers:
                continue
            kind, shape, zp, frac, gfrac = layers[k0["name"]]
            a, b = k0["instructions"], k1["instructions"]
            print(f"| {k0['name']} | {kind} | {'x'.join(map(str, shape))} | {zp} | {frac:.1%} | {gfrac:.1%} | "
                  f"{k1['variant']} | {a} | {b} | {b / a - 1:+.1%} |")
        print()


def _model_file(path: Path):
    """(name, path, the io.npz beside it or None) of a --models file."""
    stem = path.name.rsplit(".", 1)[0]
    for base in (stem, stem.removesuffix("_qdq").removesuffix("_qop")):
        npz = path.with_name(f"{base}.io.npz")
        if npz.exists():
            return stem, path, np.load(npz)
    return stem, path, None


def wcet_table(tmp: Path, files: list[Path] | None = None) -> None:
    print(f"## --wcet: per-kernel instructions over {WCET_RANDOM_INPUTS} random inputs + the npz input, "
          "cortex-m4\n")
    models = [_model_file(Path(f)) for f in files] if files else [(n, *_model(n)) for n in MODELS]
    for name, path, io in models:
        rows = {}
        for flag in (False, True):
            result = _compile(path, wcet=flag)
            real = [[io["input"]]] if io is not None and "input" in io else []
            samples = real + [random_inputs(result.inputs, 1 + k) for k in range(WCET_RANDOM_INPUTS)]
            rows[flag] = bench_wcet(result, TARGET, samples, tmp / f"{name}-wcet{int(flag)}")
        w, d = rows[True], rows[False]
        same = sum(not k["data_dependent"] for k in w["kernels"])
        print(f"### {name}: with --wcet {same}/{len(w['kernels'])} kernels min = max; whole call "
              f"{w['instructions_min']}..{w['instructions_max']} (default build: "
              f"{d['instructions_min']}..{d['instructions_max']})\n")
        print("| kernel | min | max | bound | default build min..max |")
        print("|---|---|---|---|---|")
        for k, k0 in zip(w["kernels"], d["kernels"]):
            print(f"| {k['name']} | {k['min']} | {k['max']} | {k['bound']} | {k0['min']}..{k0['max']} |")
        print()


def steps_table(tmp: Path, budget: int) -> None:
    path, io = _model("pretrainedResnet_quant")
    x = io["input"]
    default = bench_target(build_target(_compile(path), TARGET, tmp / "r8-default", [x]))
    result = _compile(path, max_step_instructions=budget)
    build = build_target(result, TARGET, tmp / "r8-steps", [x])
    out = run_target(build)[0]
    f = bench_steps(build)
    per = np.array(f["step_instructions"])
    print(f"## Step fission: --max-step-instructions {budget}, pretrainedResnet_quant (ResNet-8), cortex-m4\n")
    print("| figure | value |")
    print("|---|---|")
    print(f"| steps (calls of _step) | {f['steps']} |")
    print(f"| largest step measured | {f['max_step_instructions']} |")
    print(f"| median / smallest step | {int(np.median(per))} / {per.min()} |")
    print(f"| all steps | {f['steps_total_instructions']} |")
    print(f"| _run of the same build | {f['run_instructions']} |")
    print(f"| overhead of stepping vs that _run | {f['step_overhead']:+d} ({f['step_overhead'] / f['run_instructions']:+.2%}) |")
    print(f"| _run of the default build (poly_fuse on, no fission) | {default['instructions']} |")
    total = f["steps_total_instructions"]
    print(f"| all steps vs the default _run | {total - default['instructions']:+d} "
          f"({total / default['instructions'] - 1:+.2%}) |")
    print(f"| step outputs equal _run's / TFLM's | {f['steps_match_run']} / "
          f"{bool(np.array_equal(out.reshape(io['tflm'].shape), io['tflm']))} |")
    print(f"| arena (with the 16-byte cursor) / default | {result.arena_bytes} / {default['arena_bytes']} |")
    print("\n| kernel | pieces | largest step | smallest step |")
    print("|---|---|---|---|")
    base = 0
    for s in result.steps:
        n = len(s.pieces) or 1
        seg = per[base:base + n]
        print(f"| {s.kernel.name} ({s.kernel.variant}) | {n} | {seg.max()} | {seg.min()} |")
        base += n
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("skip", "wcet", "steps"))
    ap.add_argument("--budget", type=int, default=50000)
    ap.add_argument("--models", nargs="+", help="model files for the --wcet table (default: the MLPerf Tiny three)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tinyfuse_realtime_") as tmp:
        tmp = Path(tmp)
        if args.only in (None, "skip"):
            skip_table(tmp)
        if args.only in (None, "wcet"):
            wcet_table(tmp, args.models)
        if args.only in (None, "steps"):
            steps_table(tmp, args.budget)


if __name__ == "__main__":
    main()
