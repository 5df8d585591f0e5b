"""``run --per-layer``: the per-kernel trace of the build ``run`` made (host gcc or a qemu target)
against the numpy reference and TFLite Micro (harness/per_layer.py, harness/layer_map.py), as one
JSON-ready dict (``run --json``'s ``per_layer`` key) and its text table.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from tabulate import tabulate

from ..frontend.detect import model_format
from ..userdir import claim
from .layer_map import OracleUnavailable, kernel_tensors, tflm_values
from .per_layer import FLOAT_RTOL, LayerDiff, diff_layers, reference_kernels, trace_kernels, trace_target

LAYERS_WIDTH = 40


def per_layer(model_path, result, target, inputs: list[np.ndarray], workdir: str | Path) -> dict:
    """Trace one run of ``result`` (built for ``target``: host or a qemu target) on ``inputs`` in
    ``workdir`` and compare every kernel (a stateful model: one frame from its reset state, as TFLM's
    first invocation). Keys: build, board, stateful, tflm (True when TFLite Micro's
    tensors were compared), tflm_note (why not, or None), rtol (float kernels), first_divergent
    (kernel index or None), kernels (one dict per kernel, :func:`_row`)."""
    workdir = Path(workdir)
    if target.is_host:
        got, board = trace_kernels(result, inputs, workdir), None
    else:
        got, board = trace_target(result, target, inputs, workdir)
    tensors = kernel_tensors(result, model_path)
    tflm, note = None, None
    if model_format(model_path) != "tflite":
        note = "TFLite Micro runs .tflite models; this one is ONNX"
    elif not any(t is not None for t in tensors):
        note = "no kernel's output is a tensor of the model"
    else:
        try:
            tflm = tflm_values(model_path, result, inputs, tensors)
        except OracleUnavailable as e:
            note = f"TFLite Micro cannot run the model: {e}"
    diffs = diff_layers(result, got, reference_kernels(result, inputs), tensors, tflm)
    first = next((d.index for d in diffs if d.diverges), None)
    return {"build": target.name, "board": board, "stateful": bool(result.states), "tflm": tflm is not None, "tflm_note": note, "rtol": FLOAT_RTOL,
            "first_divergent": first, "kernels": [_row(d) for d in diffs]}


def _row(d: LayerDiff) -> dict:
    t = d.tflite
    return {"index": d.index, "kernel": d.kernel, "layers": d.layers, "shape": list(d.shape), "dtype": d.dtype,
            "total": d.total, "ref_exact": d.exact, "ref_max_diff": d.max_abs_diff, "ref_max_abs": d.max_abs_ref,
            "ref_matches": d.matches,
            "tflite_tensor": None if t is None else {"index": t.index, "name": t.name, "op": t.op,
                                                     "op_index": t.op_index, "shape": list(t.shape)},
            "tflm_exact": d.tflm_exact, "tflm_max_diff": d.tflm_max_abs_diff, "tflm_matches": d.tflm_matches}


def _shorten(text: str, width: int = LAYERS_WIDTH) -> str:
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "~" + text[len(text) - (width - 1 - head):]


def _max(value, dtype: str) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}" if dtype.startswith("float") else f"{int(value)}"


def _table(rows: list[dict], tflm: bool) -> str:
    head = ["#", "kernel", "layers", "shape", "dtype", "ref equal", "ref max"]
    head += ["TFLM equal", "TFLM max"] if tflm else []
    body = []
    for r in rows:
        line = [r["index"], r["kernel"], _shorten("+".join(r["layers"]) or "(compiler-inserted)"),
                "x".join(map(str, r["shape"])), r["dtype"], f"{r['ref_exact']}/{r['total']}",
                _max(r["ref_max_diff"], r["dtype"])]
        if tflm:
            line += ([f"{r['tflm_exact']}/{r['total']}", _max(r["tflm_max_diff"], r["dtype"])]
                     if r["tflm_exact"] is not None else ["internal", "-"])
        line.append("DIVERGES" if not r["ref_matches"] or r["tflm_matches"] is False else "ok")
        body.append(line)
    right = {"#", "ref equal", "ref max", "TFLM equal", "TFLM max"}
    return tabulate(body, [*head, "verdict"], tablefmt="simple", disable_numparse=True,
                    colalign=tuple("right" if h in right else "left" for h in [*head, "verdict"]))


def _divergence(r: dict, tflm: bool) -> str:
    what = []
    if not r["ref_matches"]:
        what.append(f"the numpy reference ({r['ref_exact']}/{r['total']} equal, max |diff| "
                    f"{_max(r['ref_max_diff'], r['dtype'])})")
    if r["tflm_matches"] is False:
        t = r["tflite_tensor"]
        what.append(f"TFLite Micro's tensor {t['index']} '{_shorten(t['name'])}' ({r['tflm_exact']}/{r['total']} equal, "
                    f"max |diff| {_max(r['tflm_max_diff'], r['dtype'])})")
    layers = ", ".join(r["layers"]) or "compiler-inserted"
    return f"first divergent layer: #{r['index']} {r['kernel']} ({layers}) differs from " + " and ".join(what)


def per_layer_text(s: dict) -> list[str]:
    """The lines ``run`` prints for :func:`per_layer`'s dict: a header, one line per kernel, the verdict."""
    where = f"the {s['build']} build under qemu ({s['board']})" if s["board"] else "the host build (gcc)"
    tflm = s["tflm"]
    where += ", one frame from the reset state" if s["stateful"] else ""
    lines = [f"per-layer trace of {where}: every kernel's output against the numpy reference of its fused "
             "group (ref)" + (" and TFLite Micro's value of the same tensor (TFLM; 'internal': the kernel's "
                              "output is no tensor of the model, compared with the reference only)" if tflm else ""),
             f"int kernels: equal elements and max |diff| in LSB; float kernels match within {s['rtol']:g} x "
             "max |reference|"]
    if s["tflm_note"]:
        lines.append(f"no TFLM column: {s['tflm_note']}")
    lines += _table(s["kernels"], tflm).splitlines()
    if s["first_divergent"] is not None:
        lines.append(_divergence(s["kernels"][s["first_divergent"]], tflm))
    else:
        n = sum(r["tflm_exact"] is not None for r in s["kernels"])
        lines.append("no layer diverges: every kernel matches the numpy reference"
                     + (f", and TFLite Micro on the {n} kernels whose output is a model tensor" if tflm else ""))
    return lines


def per_layer_lines(model, result, target, inputs, keep: str | None) -> tuple[dict, list[str]]:
    """``run --per-layer``: the trace of ``result`` built for ``target`` in ``keep``/trace (claimed:
    tinyfuse.userdir) or a temp dir; (the JSON dict, the text lines)."""
    with tempfile.TemporaryDirectory(prefix="tinyfuse_trace_") as tmp:
        work = claim(keep, ["trace"], "--keep DIR").resolve() / "trace" if keep else Path(tmp)
        s = per_layer(model, result, target, inputs, work)
    return s, per_layer_text(s)
