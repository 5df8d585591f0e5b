#!/usr/bin/env python3
"""Published models as their authors ship them (ONNX as the exporters wrote them; a few .tflite the same
projects publish), compiled and run with the command a new user types (`tinyfuse run MODEL --json`, host
build; --input-shape for a dynamic dim, --bind for a constant input) against the run's oracle (onnxruntime;
TFLite Micro for int8 .tflite). Small ones also under qemu (`--target cortex-m4`, one int8 detector `cortex-m55`). The models are not in
this repository: give the folder they were saved in (MODELS: file name, source repository @ commit, path).

    python benchmarks/published_onnx.py DIR [--out benchmarks/data/published_onnx.md] [--only NAME ...]

Columns: sha256 (first 16 hex digits) of the file as taken from the source; compiles; the run's verdict with
max |C - oracle| and that over max |oracle| (float) or TFLM's equal outputs (int8); arena and weight bytes;
the fused kernels (the most frequent kernel forms, `xN` when several kernels have that form); the first
blocker found on the way and what became of it. A float model whose verdict is MISMATCH is also compared
with a float64 evaluation (onnx.reference on a float64 copy of the model), C and onnxruntime alike, to say
whose float32 rounding the difference is. A model absent from DIR keeps its row from the previous --out
file, marked so.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

OWW = "https://github.com/dscripka/openWakeWord@db05bf22402f openwakeword/resources/models/"
ST_SERVICES = "https://github.com/STMicroelectronics/stm32ai-modelzoo-services@46924c0a8b76 "
ST_ZOO = ("https://github.com/STMicroelectronics/stm32ai-modelzoo@2d9c459456f1 (snapshot of the fork "
          "bvenreply/stm32ai-modelzoo) ")


@dataclass
class Model:
    file: str
    source: str
    flags: list[str] = field(default_factory=list)
    blocker: str = "-"
    target: str = ""              # also run under qemu on this target (cortex-m4, cortex-m55)


MODELS = [
    Model("silero_vad.onnx", "https://github.com/snakers4/silero-vad@806dcba3f0b5 src/silero_vad/data/silero_vad.onnx",
          ["--input-shape", "input=1x512", "--input-shape", "state=2x1x128", "--bind", "sr=16000"],
          "If on the sample rate: --bind sr (unbound: one error naming sr, the 8 kHz branch not converting at "
          "512 samples)"),
    Model("slim320.onnx", "https://github.com/Linzaer/Ultra-Light-Fast-Generic-Face-Detector-1MB@dffdddda9794 "
          "models/onnx/version-slim-320.onnx"),
    Model("rfb320.onnx", "https://github.com/Linzaer/Ultra-Light-Fast-Generic-Face-Detector-1MB@dffdddda9794 "
          "models/onnx/version-RFB-320.onnx"),
    Model("yunet.onnx", "https://github.com/RuDr8A/RealTime-PPE-Compliance@1eb40b10d421 face_detection_yunet_2026may.onnx "
          "(OpenCV zoo YuNet, PyTorch 1.7 export, dynamic H x W)", ["--input-shape", "input=1x3x320x320"]),
    Model("oww_melspectrogram.onnx", OWW + "melspectrogram.onnx", ["--input-shape", "input=1x1760"],
          "fixed: Clip whose min is computed at run time (ReduceMax(x) - 80 dB)", "cortex-m4"),
    Model("oww_embedding_model.onnx", OWW + "embedding_model.onnx"),
    Model("oww_alexa_v0.1.onnx", OWW + "alexa_v0.1.onnx", [], "-", "cortex-m4"),
    Model("oww_hey_rhasspy_v0.1.onnx", OWW + "hey_rhasspy_v0.1.onnx", [], "-", "cortex-m4"),
    Model("oww_hey_jarvis_v0.1.onnx", OWW + "hey_jarvis_v0.1.onnx", [],
          "fixed: If on a condition computed from the audio (the verifier model runs when score >= 0.5): "
          "both branches and a select", "cortex-m4"),
    Model("st_mobilenet_v2_0.35_128_tfs_channel_first.onnx", ST_SERVICES +
          "common/onnx_utils/sample_models/mobilenet_v2_0.35_128_tfs_channel_first.onnx"),
    Model("st_mobilenet_v2_128_0.5.onnx", ST_SERVICES + "tutorials/notebooks/models/mobilenet_v2_128_0.5.onnx"),
    Model("st_st_ssd_mobilenet_v1_025_256.onnx", ST_SERVICES +
          "common/onnx_utils/sample_models/st_ssd_mobilenet_v1_025_256.onnx"),
    Model("st_yamnet_256_64x96_tl.onnx", ST_SERVICES + "common/onnx_utils/sample_models/yamnet_256_64x96_tl.onnx"),
    Model("stzoo_mobilenet_v2_0.35_128_int8.tflite", ST_ZOO + "image_classification/models/mobilenetv2/"
          "ST_pretrainedmodel_public_dataset/person/mobilenet_v2_0.35_128/mobilenet_v2_0.35_128_int8.tflite"),
    Model("stzoo_ssd_mobilenet_v1_025_192_int8.tflite", ST_ZOO + "object_detection/models/ssd_mobilenetv1/"
          "ST_pretrainedmodel_public_dataset/COCO/ssd_mobilenet_v1_0.25_192/ssd_mobilenet_v1_025_192_int8.tflite",
          [], "fixed: TFLite TILE (of the anchor grid; TFLite Micro has no TILE, so LiteRT below), then fixed: "
          "a model output that is a constant (the anchors)"),
    Model("yolox_nano.onnx", "https://github.com/hamacom2004jp/iinfer@c7f9a3c5216c models/yolox_nano.onnx "
          "(YOLOX-Nano, PyTorch 2.1.1 export)", [],
          "none: MISMATCH is float32 rounding on both sides (float64 line below)"),
    Model("cct_xs_v1_global.onnx", "https://github.com/NateMccomb/TeslaCamViewer@ef7496bb6b02 vendor/models/"
          "cct_xs_v1_global.onnx (fast-plate-ocr's CCT-XS plate OCR, tf2onnx 1.16.1; uint8 NHWC image)", [],
          "fixed: MatMul of a constant (learned attention queries) by an activation"),
    Model("nanodet_m.onnx", "https://github.com/hpc203/nanodet-opncv-dnn-cpp-python@15dd99c651d5 nanodet_m.onnx "
          "(NanoDet-m 416, PyTorch 1.7 export, initializers also listed as graph inputs)"),
    Model("str_ww_ref_model.tflite", "https://github.com/mlcommons/tiny@1afd2c9820f7 benchmark/training/"
          "streaming_wakeword/trained_models/str_ww_ref_model.tflite (MLPerf Tiny v1.3 streaming wake word)",
          [], "-", "cortex-m4"),
    Model("stzoo_st_yolo_lc_v1_192_int8.tflite", "https://github.com/MohamedElhadidy0019/stm32ai-modelzoo@81bdd9a912b0 "
          "(a fork's snapshot of the ST model zoo, 2024) object_detection/pretrained_models/st_yolo_lc_v1/"
          "ST_pretrainedmodel_public_dataset/coco_2017_person/st_yolo_lc_v1_192/st_yolo_lc_v1_192_int8.tflite",
          [], "-", "cortex-m55"),
]

HEADER = ("| model | source URL@commit path | sha256 | command | compiles | vs oracle | arena B | weights B | "
          "fused kernels | first blocker |\n|---|---|---|---|---|---|---:|---:|---|---|")


def tinyfuse(cmd: str, path: Path, flags: list[str]) -> dict:
    """``tinyfuse CMD PATH FLAGS --json``: the JSON, or {"error": last stderr line} when it stopped."""
    proc = subprocess.run([sys.executable, "-m", "tinyfuse", cmd, str(path), "--json", *flags],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        return {"exit": proc.returncode, "error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return {"exit": proc.returncode, **json.loads(proc.stdout)}


def compile_kwargs(flags: list[str]) -> dict:
    """compile_model keyword arguments of the CLI flags this table uses."""
    out: dict = {"input_shapes": [], "bind": []}
    for flag, value in zip(flags[::2], flags[1::2]):
        out[{"--input-shape": "input_shapes", "--bind": "bind"}[flag]].append(value)
    return out


def fused_kernels(path: Path, flags: list[str]) -> str:
    """The most frequent kernel forms of the build (kernel names without their index), most frequent first."""
    import warnings
    from tinyfuse.driver import compile_model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = compile_model(str(path), **compile_kwargs(flags))
    forms = Counter(re.sub(r"^k\d+_(fused_)?", "", k.name) for k in result.kernels)
    shown = [f"{name} x{n}" if n > 1 else name for name, n in forms.most_common(4)]
    return ", ".join(shown) + (f", +{len(forms) - 4} forms" if len(forms) > 4 else "")


def verdict(r: dict) -> str:
    """The run's verdict, short: float distances or the int8 comparison with TFLM."""
    word = "match" if r.get("outputs_match") else "MISMATCH"
    if r.get("quantized"):
        tflm = (f"TFLM {r['tflm_equal']}/{r['outputs_total']} equal" if r.get("tflm_equal") is not None
                else f"no TFLM: {r.get('oracle_unavailable') or '-'}")
        return f"{word} ({tflm}, real-arithmetic oracle {'holds' if r.get('real_oracle_holds') else 'fails'})"
    diff, ref = r.get("max_abs_diff"), r.get("max_abs_ref") or 0.0
    if diff is None:
        return word
    return f"{word} vs {r.get('compared_with')}: max abs {diff:.2g}, rel {diff / ref if ref else 0.0:.2g}"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def row(m: Model, path: Path) -> tuple[str, dict]:
    """One table row for a model present on disk, and the run's JSON."""
    r = tinyfuse("run", path, m.flags)
    cmd = f"`tinyfuse run {m.file}{' ' + ' '.join(m.flags) if m.flags else ''}`"
    head = f"| {m.file} | {m.source} | {sha256(path)} | {cmd} |"
    if "error" in r:
        stop = r["error"].split("; supported:")[0]      # the operator list of an unsupported-op error left out
        return f"{head} no | - | - | - | - | {m.blocker} (stops at: {stop}) |", r
    kernels = fused_kernels(path, m.flags)
    return (f"{head} yes | {verdict(r)} | {r.get('arena_bytes', '-')} | {r.get('weights_bytes', '-')} | {kernels} | "
            f"{m.blocker} |"), r


def float64_line(m: Model, path: Path) -> str:
    """A float model's distance to float64 arithmetic, C and onnxruntime, on one seeded normal input."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    from tinyfuse.driver import compile_model
    from tinyfuse.harness import build_host, run_host
    model = onnx.load(str(path))
    feeds = {i.name: np.random.default_rng(0).standard_normal(
        [d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32) for i in model.graph.input}
    exact = ReferenceEvaluator(as_float64(model)).run(None, {k: v.astype(np.float64) for k, v in feeds.items()})
    ours = ort.InferenceSession(str(path)).run(None, feeds)
    result = compile_model(str(path), **compile_kwargs(m.flags))
    build = Path(f"/tmp/published_onnx_{path.stem}")
    build.mkdir(exist_ok=True)
    c_out = run_host(build_host(result, build), result, list(feeds.values()))
    scale = max(float(np.abs(e).max()) for e in exact)
    d_c = max(float(np.abs(c - e).max()) for c, e in zip(c_out, exact))
    d_ort = max(float(np.abs(o - e).max()) for o, e in zip(ours, exact))
    d_both = max(float(np.abs(c - o).max()) for c, o in zip(c_out, ours))
    return (f"- {m.file}: on a seeded normal input, max |C - float64| = {d_c:.2g}, max |onnxruntime - float64| = "
            f"{d_ort:.2g}, max |C - onnxruntime| = {d_both:.2g} (max |float64| = {scale:.3g}; the run's tolerance "
            f"is 1e-4 x that = {1e-4 * scale:.2g})")


def verifier_line(m: Model, path: Path) -> str:
    """hey_jarvis runs its verifier (the If's then branch) only when the first score is >= 0.5, which no seeded
    input of the run reaches: the input of 1800 seeded normal draws (scales 0.5..16) with the highest first score
    (onnxruntime on the model with that score as an extra output), then `tinyfuse run --input` on it."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    model = onnx.load(str(path))
    model.graph.output.append(onnx.helper.make_tensor_value_info("p1.1", onnx.TensorProto.FLOAT, None))
    session, rng, best = ort.InferenceSession(model.SerializeToString()), np.random.default_rng(0), (-1.0, None)
    for scale in (0.5, 1, 2, 4, 8, 16):
        for _ in range(300):
            x = (rng.standard_normal((1, 16, 96)) * scale).astype(np.float32)
            p1 = float(session.run(None, {"x.1": x})[1].item())
            best = max(best, (p1, x), key=lambda b: b[0])
    npy = Path(f"/tmp/published_onnx_{path.stem}_then.npy")
    np.save(npy, best[1])
    r = tinyfuse("run", path, [*m.flags, "--input", str(npy)])
    return (f"- {m.file}: the verifier branch on an input whose first score is {best[0]:.4f} (>= 0.5: the If's then "
            f"branch): {verdict(r) if 'error' not in r else r['error']}")


def litert_line(m: Model, path: Path) -> str:
    """An int8 .tflite TFLite Micro cannot run (TILE): the C beside LiteRT's builtin kernels without the XNNPACK
    delegate (TFLite's arithmetic; its optimized kernels may round 1 LSB away from TFLM's reference ones; the
    reference resolver has no TILE v3) on one seeded input, in LSB of the int8 tensor each float output
    dequantizes."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    from tinyfuse.driver import compile_model
    from tinyfuse.harness import build_host, run_host
    it = Interpreter(str(path), experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    feeds = []
    for d in it.get_input_details():
        info = np.iinfo(d["dtype"])
        feeds.append(np.random.default_rng(0).integers(info.min, info.max + 1, d["shape"]).astype(d["dtype"]))
        it.set_tensor(d["index"], feeds[-1])
    it.invoke()
    want = {d["name"]: it.get_tensor(d["index"]) for d in it.get_output_details()}
    tensors = {t["index"]: t for t in it.get_tensor_details()}
    scale = {tensors[op["outputs"][0]]["name"]: tensors[op["inputs"][0]]["quantization"][0]
             for op in it._get_ops_details() if op["op_name"] == "DEQUANTIZE"}
    result = compile_model(str(path))
    build = Path(f"/tmp/published_onnx_{path.stem}")
    build.mkdir(exist_ok=True)
    got = run_host(build_host(result, build), result, feeds)
    parts = []
    for t, g in zip(result.outputs, got):
        lsb = np.abs(np.asarray(g, np.float64) - want[t.name]) / scale.get(t.name, 1.0)
        parts.append(f"output {t.name}: {int((lsb > 0.01).sum())}/{lsb.size} differ, max {lsb.max():.2f} LSB")
    return f"- {m.file}: TFLite Micro cannot run it; the C beside LiteRT (no delegate) on a seeded input: " + \
        "; ".join(parts)


def as_float64(model):
    """A copy of ``model`` computing in float64: float32 initializers, Constant values and graph I/O widened
    (Resize's scales stay float32, as Resize-11+ requires)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, numpy_helper
    m = onnx.ModelProto()
    m.CopyFrom(model)
    keep = {n.input[2] for n in m.graph.node if n.op_type == "Resize" and len(n.input) > 2}
    for i, t in enumerate(m.graph.initializer):
        if t.data_type == TensorProto.FLOAT and t.name not in keep:
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float64), t.name))
    for n in m.graph.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT and n.output[0] not in keep:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float64)))
    for v in [*m.graph.input, *m.graph.output]:
        v.type.tensor_type.elem_type = TensorProto.DOUBLE
    del m.graph.value_info[:]
    return m


def target_row(m: Model, path: Path) -> str:
    """The build for ``m.target`` under qemu: the run's verdict and bench's instructions, flash and RAM."""
    r = tinyfuse("run", path, [*m.flags, "--target", m.target])
    if "error" in r:
        return f"| {m.file} | {m.target} | {r['error']} | | | |"
    b = tinyfuse("bench", path, [*m.flags, "--target", m.target, "--no-measure"])
    return (f"| {m.file} | {m.target} | {verdict(r)} | {b.get('instructions', '-')} | {b.get('flash_code', '-')} + "
            f"{b.get('flash_const', '-')} | {b.get('ram_total', '-')} |")


def previous(out: Path | None) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """Rows of an earlier --out file by model name: the main table, the Cortex-M4 table and the float64 notes
    (kept for models absent from DIR or left out by --only)."""
    sections: tuple[dict, dict, dict] = ({}, {}, {})
    if out is None or not out.is_file():
        return sections
    part = 0
    for ln in out.read_text().splitlines():
        if ln.startswith("On Cortex-M") or ln.startswith("On a Cortex-M4"):
            part = 1
        elif ln.startswith("Further checks"):
            part = 2
        elif part < 2 and ln.startswith("| ") and not ln.startswith("| model"):
            sections[part][ln.split("|")[1].strip()] = ln
        elif part == 2 and ln.startswith("- "):
            sections[2][ln[2:].split(":")[0]] = ln
    return sections


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--out")
    ap.add_argument("--only", nargs="*", help="model files to run (the others keep their previous rows)")
    a = ap.parse_args(argv)
    out = Path(a.out) if a.out else None
    old_rows, old_targets, old_notes = previous(out)
    lines, targets, notes = [HEADER], [], []
    absent = "(row of an earlier run: file absent) |"
    for m in MODELS:
        path = Path(a.dir) / m.file
        if not path.is_file() or (a.only and m.file not in a.only):
            if m.file in old_rows:
                keep = old_rows[m.file]
                lines.append(keep if path.is_file() or keep.endswith(absent) else keep[:-1] + absent)
            targets += [old_targets[m.file]] if m.file in old_targets else []
            notes += [old_notes[m.file]] if m.file in old_notes else []
            continue
        text, r = row(m, path)
        lines.append(text)
        print(text, flush=True)
        if r.get("outputs_match") is False and not r.get("quantized") and m.file.endswith(".onnx"):
            notes.append(float64_line(m, path))
        if r.get("quantized") and r.get("oracle_unavailable") and m.file.endswith(".tflite"):
            notes.append(litert_line(m, path))
        if m.file == "oww_hey_jarvis_v0.1.onnx":
            notes.append(verifier_line(m, path))
        if m.target:
            targets.append(target_row(m, path))
    write(out, lines, targets, notes)
    return 0


def write(out: Path | None, lines: list[str], targets: list[str], notes: list[str]) -> None:
    text = "\n".join(lines)
    if targets:
        text += ("\n\nOn Cortex-M under qemu (cortex-m4: mps2-an386, cortex-m55: mps3-an547), `--target T` (run: "
                 "verdict; bench --no-measure: instructions, flash code + constants B, RAM = arena + data + stack B):"
                 "\n\n| model | target | vs oracle | instructions | flash B | RAM B |\n|---|---|---|---:|---:|---:|\n"
                 + "\n".join(targets))
    if notes:
        text += ("\n\nFurther checks (a float MISMATCH against float64 arithmetic; LiteRT where TFLM cannot run a "
                 ".tflite; a branch no seeded input takes):\n\n") \
            + "\n".join(notes)
    print(text)
    if out:
        out.write_text("# Published models against their oracles\n\n`python benchmarks/published_onnx.py DIR --out "
                       f"{out}` (sources and what each column means: the script's docstring)\n\n{text}\n")


if __name__ == "__main__":
    sys.exit(main())
