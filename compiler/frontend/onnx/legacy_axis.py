"""Hardmax before opset 13 coerces its input to 2-D: [prod(dims < axis), prod(dims >= axis)] (axis
default 1) and takes the row's first largest element; Hardmax-13 works along one axis (default -1).
onnx.version_converter renames Hardmax-11 to Hardmax-13 without that rewrite (it rewrites Softmax and
LogSoftmax), so :func:`coerce_hardmax` does it first: Flatten(axis) → Hardmax(axis=1) → Reshape back to
Shape(x), ops every opset from 11 defines. Only the top-level graph's nodes are rewritten."""
from __future__ import annotations

import onnx
from onnx import helper


def coerce_hardmax(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` (opset < 13) with every top-level Hardmax as Flatten → Hardmax(axis=1) → Reshape."""
    if not any(n.op_type == "Hardmax" and n.domain in ("", "ai.onnx") for n in model.graph.node):
        return model
    model = onnx.ModelProto.FromString(model.SerializeToString())
    nodes = []
    for k, n in enumerate(model.graph.node):
        if n.op_type != "Hardmax" or n.domain not in ("", "ai.onnx"):
            nodes.append(n)
            continue
        axis = next((helper.get_attribute_value(a) for a in n.attribute if a.name == "axis"), 1)
        x, y, tag = n.input[0], n.output[0], f"{n.name or 'hardmax'}_{k}_coerced"
        nodes += [helper.make_node("Flatten", [x], [f"{tag}_2d"], axis=axis, name=f"{tag}_flatten"),
                  helper.make_node("Hardmax", [f"{tag}_2d"], [f"{tag}_max"], axis=1, name=n.name),
                  helper.make_node("Shape", [x], [f"{tag}_shape"], name=f"{tag}_shape"),
                  helper.make_node("Reshape", [f"{tag}_max", f"{tag}_shape"], [y], name=f"{tag}_reshape")]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model
