"""Hand-built QDQ int8 models for the graph fuzzer (tinyfuse issue 13): quantization parameters the
generator draws itself instead of onnxruntime's calibrating quantizer, to reach what calibration
never makes:

- weight scales log-uniform over 2^-20..2^4, per output channel (Conv, axis 0) or per tensor (Gemm,
  MatMul); the int8 weights saturate where the scale is tiny;
- activation scales from the calibrated range max|x|/127 times a factor log-uniform over 2^-4..2^2,
  so a requantize multiplier s_x·s_w/s_y is often > 1 (a small output scale) and values saturate;
- activation zero points drawn from {-128, 127, 0, uniform}: both ends of int8;
- int32 biases in the scale s_x·s_w[c], zero point 0 (ONNX QDQ convention).

Every float value of the float model (the graph input and each node output) gets a
QuantizeLinear → DequantizeLinear pair in front of its readers; onnxruntime runs the result as the
float oracle, tinyfuse compiles it to int8 kernels.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

WEIGHT_LOG2 = (-20.0, 4.0)     # per-channel weight scale range, log2
ACT_LOG2 = (-4.0, 2.0)         # activation scale factor over max|x|/127, log2
CONST_OPERAND_OPS = ("Add", "Mul", "Sub", "PRelu")
WEIGHT_INPUTS = {"Conv": (1, 0), "Gemm": (1, None), "MatMul": (1, None)}   # weight input index, per-channel axis


def _ranges(model: onnx.ModelProto, feeds: dict) -> dict[str, float]:
    """max|x| of every node output on ``feeds`` (onnxruntime, every value made a graph output)."""
    import onnxruntime as ort
    m = onnx.ModelProto()
    m.CopyFrom(model)
    known = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o not in known:
                m.graph.output.append(helper.make_value_info(o, onnx.TypeProto()))
                known.add(o)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    vals = sess.run(names, feeds)
    out = {k: float(np.max(np.abs(v))) if np.size(v) and np.issubdtype(v.dtype, np.floating) else None
           for k, v in zip(names, vals)}
    out.update({k: float(np.max(np.abs(v))) for k, v in feeds.items()})
    return out


def _zero_point(rng) -> int:
    r = rng.random()
    return -128 if r < 0.2 else 127 if r < 0.4 else 0 if r < 0.6 else int(rng.integers(-128, 128))


def hand_qdq(model: onnx.ModelProto, feeds: dict, seed: int) -> onnx.ModelProto:
    """``model`` (float, from build_model) with hand-drawn QDQ int8 quantization (module doc);
    deterministic in ``seed``."""
    rng = np.random.default_rng([seed, 4242])
    ranges = _ranges(model, feeds)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    new_nodes, new_inits, act_scale = [], [], {}

    def qdq(name: str) -> str:
        s = max(ranges.get(name) or 1.0, 1e-6) / 127 * 2.0 ** rng.uniform(*ACT_LOG2)
        act_scale[name] = s
        z = _zero_point(rng)
        sn, zn = f"{name}_s", f"{name}_z"
        new_inits.extend([numpy_helper.from_array(np.array(s, np.float32), sn),
                          numpy_helper.from_array(np.array(z, np.int8), zn)])
        new_nodes.append(helper.make_node("QuantizeLinear", [name, sn, zn], [f"{name}_q"]))
        new_nodes.append(helper.make_node("DequantizeLinear", [f"{name}_q", sn, zn], [f"{name}_dq"]))
        return f"{name}_dq"

    def weight(name: str, axis, x_scale: float) -> tuple[str, np.ndarray]:
        w = numpy_helper.to_array(inits[name]).astype(np.float64)
        n = w.shape[axis] if axis is not None else 1
        s = (2.0 ** rng.uniform(*WEIGHT_LOG2, n)).astype(np.float32)
        shape = [1] * w.ndim
        if axis is not None:
            shape[axis] = n
        q = np.clip(np.rint(w / s.reshape(shape)), -127, 127).astype(np.int8)
        attrs = {"axis": axis} if axis is not None else {}
        sv = s if axis is not None else s.reshape(())
        new_inits.extend([numpy_helper.from_array(q, f"{name}_wq"), numpy_helper.from_array(sv, f"{name}_ws"),
                          numpy_helper.from_array(np.zeros(sv.shape, np.int8), f"{name}_wz")])
        new_nodes.append(helper.make_node("DequantizeLinear", [f"{name}_wq", f"{name}_ws", f"{name}_wz"],
                                          [f"{name}_wdq"], **attrs))
        return f"{name}_wdq", s * np.float32(x_scale)

    def bias(name: str, scale: np.ndarray) -> str:
        b = numpy_helper.to_array(inits[name]).astype(np.float64)
        scale = np.broadcast_to(scale.astype(np.float32), b.shape).copy()
        q = np.clip(np.rint(b / scale), -2**31, 2**31 - 1).astype(np.int32)
        new_inits.extend([numpy_helper.from_array(q, f"{name}_bq"), numpy_helper.from_array(scale, f"{name}_bs"),
                          numpy_helper.from_array(np.zeros(b.shape, np.int32), f"{name}_bz")])
        new_nodes.append(helper.make_node("DequantizeLinear", [f"{name}_bq", f"{name}_bs", f"{name}_bz"],
                                          [f"{name}_bdq"], axis=0))
        return f"{name}_bdq"

    def const(name: str) -> str:    # a constant operand of Add/Mul/Sub: per tensor, calibrated on itself
        v = numpy_helper.to_array(inits[name]).astype(np.float64)
        s = max(float(np.max(np.abs(v))), 1e-6) / 127 * 2.0 ** rng.uniform(-1.0, 0.5)
        z = int(rng.integers(-20, 21))
        q = np.clip(np.rint(v / s) + z, -128, 127).astype(np.int8)
        new_inits.extend([numpy_helper.from_array(q, f"{name}_cq"), numpy_helper.from_array(np.array(s, np.float32),
                          f"{name}_cs"), numpy_helper.from_array(np.array(z, np.int8), f"{name}_cz")])
        new_nodes.append(helper.make_node("DequantizeLinear", [f"{name}_cq", f"{name}_cs", f"{name}_cz"],
                                          [f"{name}_cdq"]))
        return f"{name}_cdq"

    renamed = {g.input[0].name: qdq(g.input[0].name)}
    replaced = set()
    for node in list(g.node):
        ins = [renamed.get(i, i) for i in node.input]
        if node.op_type in WEIGHT_INPUTS and len(ins) > 1 and node.input[1] in inits:
            wi, axis = WEIGHT_INPUTS[node.op_type]
            if node.op_type == "Gemm" and any(a.name == "transB" and a.i for a in node.attribute):
                axis = None
            x_scale = act_scale.get(node.input[0], 1.0)
            ins[wi], bscale = weight(node.input[wi], axis, x_scale)
            replaced.add(node.input[wi])
            if len(ins) > 2 and node.input[2] in inits:
                ins[2] = bias(node.input[2], bscale)
                replaced.add(node.input[2])
        elif node.op_type in CONST_OPERAND_OPS:
            for j, i in enumerate(node.input):
                if i in inits and inits[i].data_type == onnx.TensorProto.FLOAT:
                    ins[j] = const(i)
                    replaced.add(i)
        new = helper.make_node(node.op_type, ins, list(node.output), name=node.name)
        new.attribute.extend(node.attribute)
        new_nodes.append(new)
        for o in node.output:
            renamed[o] = qdq(o)
    outs = [helper.make_tensor_value_info(renamed[o.name], onnx.TensorProto.FLOAT,
                                          [d.dim_value for d in o.type.tensor_type.shape.dim]) for o in g.output]
    keep = [t for t in g.initializer if t.name not in replaced]
    graph = helper.make_graph(new_nodes, g.name, list(g.input), outs, initializer=keep + new_inits)
    out = helper.make_model(graph, opset_imports=list(model.opset_import))
    out.ir_version = model.ir_version
    return out
