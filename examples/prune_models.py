"""Prune the MLPerf Tiny int8 models by magnitude (no retraining: accuracy is not the point), for
tinyfuse's sparse kernels (``--sparse auto``, the default, picks them where they pay).

For every int8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED weight tensor of a .tflite model (and
every int8 weight initializer behind a DequantizeLinear feeding Conv/Gemm/MatMul of a QDQ .onnx
model), per tensor:

- ``50``/``75``/``90``: unstructured, the floor(p% x size) weights of smallest |q| are set to 0
  (ties broken by position, so the count is exact);
- ``2:4``: structured, in each group of 4 consecutive weights along the reduction axis (the input
  channels of a conv, OHWI's last axis, then the taps; the taps of a depthwise channel; the inputs of
  a fully-connected row) the 2 of largest |q| are kept (a last group of g < 4 keeps ceil(g/2)).

The .tflite is edited in place in a copy of its bytes (each weight buffer rewritten with the same
length), so the graph, the quantization and every other byte stay as they were; TFLite Micro on
the pruned file is the exact oracle (``tinyfuse run --tflite-ref``).

Usage: python examples/prune_models.py OUTDIR [--models DIR] [--levels 50 75 90 2:4]
  → OUTDIR/<model>_s50.tflite, _s75, _s90, _s2of4 (and .onnx twins where the QDQ .onnx exists)
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

MODELS = ("kws_ref_model", "pretrainedResnet_quant")
LEVELS = ("50", "75", "90", "2:4")
TFLITE_OPS = {"CONV_2D": "conv", "DEPTHWISE_CONV_2D": "dw", "FULLY_CONNECTED": "fc"}


def prune_unstructured(w: np.ndarray, fraction: float) -> np.ndarray:
    """``w`` with the floor(fraction x size) entries of smallest |w| set to 0 (stable order)."""
    flat = w.reshape(-1).copy()
    order = np.argsort(np.abs(flat.astype(np.int16)), kind="stable")
    flat[order[:int(fraction * flat.size)]] = 0
    return flat.reshape(w.shape)


def prune_2of4(rows: np.ndarray) -> np.ndarray:
    """Keep the 2 largest |w| of every group of 4 along the last axis of ``rows`` [R, n] (a last
    group of g < 4 keeps ceil(g / 2))."""
    out = rows.copy()
    for start in range(0, rows.shape[1], 4):
        grp = out[:, start:start + 4]
        keep = -(-grp.shape[1] // 2)
        order = np.argsort(-np.abs(grp.astype(np.int16)), axis=1, kind="stable")
        mask = np.zeros_like(grp, dtype=bool)
        np.put_along_axis(mask, order[:, :keep], True, axis=1)
        grp[~mask] = 0
    return out


def prune(w: np.ndarray, kind: str, level: str) -> np.ndarray:
    """Pruned copy of int8 weights ``w`` in TFLite's layout for their ``kind`` (conv: OHWI [O, KH, KW, I];
    dw: [1, KH, KW, C]; fc: [N, K]). Ties in |w| go by position in that layout, so a model and its
    ONNX twin (pruned through ``to_tflite_layout``) lose the same weights."""
    if level != "2:4":
        return prune_unstructured(w, int(level) / 100)
    if kind == "dw":                                    # the taps of each channel
        return prune_2of4(w.reshape(-1, w.shape[-1]).T).T.reshape(w.shape)
    return prune_2of4(w.reshape(w.shape[0], -1)).reshape(w.shape)   # input channels innermost (OHWI), fc rows


def to_tflite_layout(w: np.ndarray, op_type: str, group: int, trans_b: int):
    """(kind, weights in TFLite's layout, the inverse transform) of an ONNX Conv (OIHW; depthwise
    [C, 1, KH, KW]), Gemm ([N, K] with transB=1, else [K, N]) or MatMul ([K, N]) weight."""
    if op_type == "Conv" and group > 1 and w.shape[1] == 1:
        return "dw", w.transpose(1, 2, 3, 0), lambda t: t.transpose(3, 0, 1, 2)
    if op_type == "Conv":
        return "conv", w.transpose(0, 2, 3, 1), lambda t: t.transpose(0, 3, 1, 2)
    if op_type == "Gemm" and trans_b:
        return "fc", w, lambda t: t
    return "fc", w.T, lambda t: t.T


def _builtin_code(code) -> int:
    """The operator code: the stored ``builtin_code`` field (schema.fbs vtable slot 3; the ``tflite``
    package's accessor may answer the deprecated one) or ``deprecated_builtin_code``, the larger."""
    import flatbuffers
    o = code._tab.Offset(10)
    stored = code._tab.Get(flatbuffers.number_types.Int32Flags, o + code._tab.Pos) if o else 0
    return max(stored, code.DeprecatedBuiltinCode())


def _weight_buffers(data: bytes):
    """(kind, tensor shape, byte start, byte length) of every int8 weight buffer of a .tflite."""
    import tflite
    from tflite.BuiltinOperator import BuiltinOperator
    names = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}
    model = tflite.Model.GetRootAsModel(data, 0)
    seen = set()
    for si in range(model.SubgraphsLength()):
        sg = model.Subgraphs(si)
        for oi in range(sg.OperatorsLength()):
            op = sg.Operators(oi)
            opname = names.get(_builtin_code(model.OperatorCodes(op.OpcodeIndex())))
            if opname not in TFLITE_OPS:
                continue
            t = sg.Tensors(op.Inputs(1))
            if t.Type() != 9 or t.Buffer() in seen:      # 9: INT8
                continue
            seen.add(t.Buffer())
            buf = model.Buffers(t.Buffer())
            o = buf._tab.Offset(4)
            if not o:
                continue
            yield TFLITE_OPS[opname], tuple(t.ShapeAsNumpy()), buf._tab.Vector(o), buf._tab.VectorLen(o)


def prune_tflite(data: bytes, level: str) -> tuple[bytes, int, int]:
    """(pruned .tflite bytes, zero weights, weights) of one model at ``level``."""
    out = bytearray(data)
    zeros = total = 0
    for kind, shape, start, length in _weight_buffers(data):
        w = np.frombuffer(data, np.int8, length, start).reshape(shape)
        p = prune(w, kind, level)
        out[start:start + length] = p.tobytes()
        zeros += int(p.size - np.count_nonzero(p))
        total += p.size
    return bytes(out), zeros, total


def prune_onnx(path: Path, level: str):
    """The pruned QDQ ONNX model (an onnx.ModelProto) and its (zeros, weights) counts."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(str(path))
    inits = {i.name: i for i in m.graph.initializer}
    consumers = {i: n for n in m.graph.node for i in n.input}
    zeros = total = 0
    for n in m.graph.node:
        init = inits.get(n.input[0]) if n.op_type == "DequantizeLinear" else None
        user = consumers.get(n.output[0])
        if init is None or user is None or user.op_type not in ("Conv", "Gemm", "MatMul"):
            continue
        w = numpy_helper.to_array(init)
        if w.dtype != np.int8 or w.ndim < 2:
            continue
        attrs = {a.name: a.i for a in user.attribute}
        kind, canon, back = to_tflite_layout(w, user.op_type, attrs.get("group", 1), attrs.get("transB", 0))
        p = back(prune(np.ascontiguousarray(canon), kind, level))
        init.CopyFrom(numpy_helper.from_array(np.ascontiguousarray(p), init.name))
        zeros += int(p.size - np.count_nonzero(p))
        total += p.size
    return m, zeros, total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    root = Path(__file__).resolve().parents[1]
    default = next((p / "shared" / "models" for p in (root.parent, root.parent.parent) if (p / "shared").is_dir()),
                   root.parent / "shared" / "models")
    ap.add_argument("--models", default=str(default),
                    help="the models folder holding tflite/ and onnx/ (default ../shared/models of the project)")
    ap.add_argument("--levels", nargs="+", default=list(LEVELS), choices=LEVELS)
    args = ap.parse_args(argv)
    src, out = Path(args.models), Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    for name in MODELS:
        data = (src / "tflite" / f"{name}.tflite").read_bytes()
        for level in args.levels:
            tag = "s2of4" if level == "2:4" else f"s{level}"
            pruned, zeros, total = prune_tflite(data, level)
            (out / f"{name}_{tag}.tflite").write_bytes(pruned)
            print(f"{name}_{tag}.tflite: {zeros}/{total} weights zero ({zeros / total:.1%})")
            onnx_path = src / "onnx" / f"{name}.onnx"
            if onnx_path.exists():
                import onnx
                m, zeros, total = prune_onnx(onnx_path, level)
                if total:
                    onnx.save(m, str(out / f"{name}_{tag}.onnx"))
                    print(f"{name}_{tag}.onnx: {zeros}/{total} weights zero ({zeros / total:.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
