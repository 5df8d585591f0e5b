"""The oracle model of a ``--weights-dtype float16`` build: a temporary copy of the model whose float
weights are rounded through binary16 (numpy ``float32 → float16 → float32``, round to nearest even),
so onnxruntime / TFLite Micro / LiteRT compute with the weights the generated C reads
(lower/half_weights.py: ``tf_h2f`` of the binary16 bit patterns is exact).

Which constants are rounded (the ones lower/half_weights.py converts: float32 arrays every kernel
reads by subscript, finite in binary16):

- ONNX: float32 initializers and ``Constant`` node tensors of at least two elements (a scalar
  becomes a C literal, not an array) that no quantization op reads (QuantizeLinear/DequantizeLinear
  scales, QLinear* operands: folded into integer multipliers, not float16 arrays) and that are no
  control input (Resize ``roi``/``scales``); values beyond ±65504 are left as they are;
- TFLite: the buffers of constant float32 tensors of at least two elements, rounded in place in a
  copy of the flatbuffer (same bytes, same layout). float16 buffers (DEQUANTIZE) are already binary16.

Before rounding, the ONNX copy folds what tinyfuse folds into one array (fold_batchnorm, fold_constant):
a BatchNormalization into its Conv and a DequantizeLinear of constant weights of a model with float
activations, so the product is rounded, as in the C, not each factor. Other constant folds
(a weight computed by several float ops) are not mirrored: there the oracle rounds the factors.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..frontend.detect import model_format

HALF_MAX = 65504.0
_QUANT_OPS = ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinear", "ConvInteger",
              "MatMulInteger", "QGemm")
_CONTROL_INPUTS = {"Resize": 1, "Upsample": 1}     # op -> first input index that is no data


def round_half(arr: np.ndarray) -> np.ndarray:
    """``arr`` (float32) through binary16 and back where every value is finite in binary16, else as is."""
    if arr.dtype != np.float32 or arr.size < 2 or not np.all(np.abs(arr) <= HALF_MAX):
        return arr
    return arr.astype(np.float16).astype(np.float32)


def _skipped_onnx(graph) -> set[str]:
    """Names of the graph's tensors that stay float32 in the oracle (module doc)."""
    skip = set()
    for n in graph.node:
        if n.op_type.startswith(_QUANT_OPS):
            skip.update(n.input)
        elif n.op_type in _CONTROL_INPUTS:
            skip.update(n.input[_CONTROL_INPUTS[n.op_type]:])
    return skip


def _dequantized(node, init) -> np.ndarray | None:
    """The float32 value of a DequantizeLinear of constants, as onnxruntime computes it
    ((x - zero_point) * scale in float32, per tensor or along ``axis``); None for a blocked one."""
    attrs = {a.name: a.i for a in node.attribute}
    if attrs.get("block_size") or not all(i in init for i in node.input if i):
        return None
    x = init[node.input[0]].astype(np.float32)
    scale = init[node.input[1]].astype(np.float32)
    zp = init[node.input[2]].astype(np.float32) if len(node.input) > 2 and node.input[2] else np.float32(0)
    if scale.ndim == 1 and x.ndim > 1:
        shape = [1] * x.ndim
        shape[attrs.get("axis", 1) % x.ndim] = -1
        scale, zp = scale.reshape(shape), np.reshape(zp, shape if np.ndim(zp) else ())
    return ((x - zp) * scale).astype(np.float32)


def _fold_weights(g) -> None:
    """Fold in ``g`` what tinyfuse folds before it rounds: a DequantizeLinear of constant weights (in a
    model without QuantizeLinear: weight-only quantized, float activations) and a BatchNormalization
    after a Conv with constant weights (w·γ/√(v+ε), (b − μ)·γ/√(v+ε) + β, float32)."""
    from onnx import numpy_helper
    init = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    uses: dict[str, int] = {}
    for n in g.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    quantized = any(n.op_type == "QuantizeLinear" for n in g.node)
    producer = {o: n for n in g.node for o in n.output}
    new = {}
    for n in list(g.node):
        if n.op_type == "DequantizeLinear" and not quantized and (v := _dequantized(n, init)) is not None:
            new[n.output[0]] = init[n.output[0]] = v
            g.node.remove(n)
        elif n.op_type == "BatchNormalization" and n.input[0] in producer and uses.get(n.input[0]) == 1:
            conv = producer[n.input[0]]
            if conv.op_type != "Conv" or not all(i in init for i in conv.input[1:] if i) or \
                    not all(i in init for i in n.input[1:5]):
                continue
            gamma, beta, mean, var = (init[i].astype(np.float32) for i in n.input[1:5])
            eps = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5)
            k = gamma / np.sqrt(var + np.float32(eps))
            w = init[conv.input[1]].astype(np.float32)
            b = init[conv.input[2]].astype(np.float32) if len(conv.input) > 2 and conv.input[2] else 0
            wn, bn = f"{conv.name}_bn_w", f"{conv.name}_bn_b"
            new[wn], new[bn] = (w * k.reshape(-1, *[1] * (w.ndim - 1))).astype(np.float32), \
                ((b - mean) * k + beta).astype(np.float32)
            init[wn], init[bn] = new[wn], new[bn]
            del conv.input[1:]
            conv.input.extend([wn, bn])
            conv.output[0] = n.output[0]
            g.node.remove(n)
    g.initializer.extend(numpy_helper.from_array(v, k) for k, v in new.items())


def _round_onnx(model_path, out: Path) -> Path:
    import onnx
    from onnx import numpy_helper
    model = onnx.load(str(model_path))
    g = model.graph
    _fold_weights(g)
    skip = _skipped_onnx(g)
    for i, init in enumerate(g.initializer):
        if init.data_type == onnx.TensorProto.FLOAT and init.name not in skip:
            g.initializer[i].CopyFrom(numpy_helper.from_array(round_half(numpy_helper.to_array(init)), init.name))
    for n in g.node:
        if n.op_type == "Constant" and not set(n.output) & skip:
            for a in n.attribute:
                if a.name == "value" and a.t.data_type == onnx.TensorProto.FLOAT:
                    a.t.CopyFrom(numpy_helper.from_array(round_half(numpy_helper.to_array(a.t)), a.t.name))
    path = out / "half_rounded.onnx"
    onnx.save(model, str(path))
    return path


def _round_tflite(model_path, out: Path) -> Path:
    from ..frontend.tflite.schema import schema
    S = schema()
    data = bytearray(Path(model_path).read_bytes())
    model = S.Model.GetRootAs(data, 0)
    const = set()
    for si in range(model.SubgraphsLength()):
        sg = model.Subgraphs(si)
        for ti in range(sg.TensorsLength()):
            t = sg.Tensors(ti)
            if t.Type() == S.TensorType.FLOAT32 and t.Buffer() > 0 and not t.IsVariable():
                const.add(t.Buffer())
    for b in sorted(const):
        buf = model.Buffers(b)
        if buf is None or buf.DataIsNone() or buf.DataLength() < 8:
            continue
        raw = buf.DataAsNumpy()                # a writable view into ``data`` (a bytearray)
        if raw.size % 4:
            continue
        values = np.frombuffer(raw.tobytes(), "<f4")
        raw[:] = np.frombuffer(round_half(values.copy()).astype("<f4").tobytes(), np.uint8)
    path = out / "half_rounded.tflite"
    path.write_bytes(bytes(data))
    return path


def half_rounded_module(mod, calls: dict | None = None):
    """``mod`` (an ir.IRModule, after the pipeline) with every float32 Constant of at least two elements
    rounded through binary16, fused groups included: tinyfuse's numpy reference of a float16 build,
    for the models no oracle runs (a hybrid .tflite TFLM refuses). ``calls`` (a dict) gets
    {id(fused-group call of ``mod``): its call in the new module}."""
    from dataclasses import replace

    from ..ir import Call, Constant, Function
    from ..ir.rewrite import rewrite

    def fn(f: Function) -> Function:
        def visit(new, orig):
            if isinstance(new, Constant) and new.value.dtype == np.float32:
                rounded = round_half(np.asarray(new.value))
                return None if rounded is new.value else Constant(rounded, new.name)
            if isinstance(new, Call) and isinstance(new.op, Function):
                out = replace(new, op=fn(new.op))
                if calls is not None:
                    calls[id(orig)] = out
                return out
            return None
        return rewrite(f, visit)
    return mod.with_main(fn(mod.main))


def half_rounded_model(model_path, out: str | Path) -> Path:
    """Write the float16-rounded copy of ``model_path`` (ONNX or TFLite, told by content) into the
    directory ``out``; its path."""
    out = Path(out)
    if model_format(model_path) == "tflite":
        return _round_tflite(model_path, out)
    return _round_onnx(model_path, out)


__all__ = ["half_rounded_model", "half_rounded_module", "round_half"]
