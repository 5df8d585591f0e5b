"""ONNX → IRModule.

Reads the protobuf with the ``onnx`` package, upgrades models older than opset 13 with
``onnx.version_converter``, folds every node whose inputs are all initializers/constants by running it
in ``onnx.reference.ReferenceEvaluator`` (e.g. DequantizeLinear on int8 weights, shape arithmetic),
and converts the rest op by op into NCHW IR calls (``convert_layout`` moves them to NHWC later).

Errors are :class:`TinyfuseError` with one line naming node, op type, opset and the offending
shape or attribute.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .. import ops  # noqa: F401  (registers the ops)
from ..errors import TinyfuseError, node_error
from ..ir import Constant, Expr, Function, IRModule, TensorType, Tuple, Var, call
from ..ops.conv import conv_out_size

MIN_OPSET = 13


class Node:
    """What a converter sees of one ONNX node: name, op type, attributes, opset, and errors."""

    def __init__(self, proto: onnx.NodeProto, opset: int):
        self.proto, self.opset = proto, opset
        self.name = proto.name or (proto.output[0] if proto.output else proto.op_type)
        self.op_type = proto.op_type
        self.attrs = {a.name: helper.get_attribute_value(a) for a in proto.attribute}

    def attr(self, key, default=None):
        v = self.attrs.get(key, default)
        return v.decode() if isinstance(v, bytes) else v

    def error(self, problem: str, hint: str = "") -> TinyfuseError:
        return node_error(self.name, self.op_type, self.opset, problem, hint)


CONVERTERS: dict[str, Callable] = {}


def converter(*op_types: str):
    def deco(fn):
        for t in op_types:
            CONVERTERS[t] = fn
        return fn
    return deco


def const_value(node: Node, e: Expr | None, what: str) -> np.ndarray:
    if not isinstance(e, Constant):
        raise node.error(f"{what} must be a constant (initializer), got a computed tensor",
                         "fold it before export or feed it as an initializer")
    return e.value


def sanitize(name: str) -> str:
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else "m_" + s


def load_onnx(path: str | Path) -> onnx.ModelProto:
    """Read and check an ONNX file; upgrade opset < 13. Raises TinyfuseError on a bad file."""
    path = Path(path)
    if not path.is_file():
        raise TinyfuseError(f"{path}: no such file")
    try:
        model = onnx.load(str(path))
    except Exception as e:  # protobuf DecodeError and friends
        raise TinyfuseError(f"{path}: not a valid ONNX file ({type(e).__name__}: {str(e).splitlines()[0][:120]})") from None
    if not model.graph.node:
        raise TinyfuseError(f"{path}: the ONNX graph has no nodes (truncated or empty file?)")
    opset = default_opset(model)
    newest = onnx.defs.onnx_opset_version()
    if opset > newest:
        raise TinyfuseError(f"{path}: model uses ai.onnx opset {opset}, newer than {newest}, the newest the "
                            f"installed onnx {onnx.__version__} defines; upgrade the onnx package")
    if opset < MIN_OPSET:
        try:
            model = onnx.version_converter.convert_version(model, MIN_OPSET)
        except Exception as e:
            raise TinyfuseError(f"{path}: cannot upgrade opset {opset} to {MIN_OPSET} with "
                                f"onnx.version_converter: {str(e).splitlines()[0][:160]}") from None
    return model


def default_opset(model: onnx.ModelProto) -> int:
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 1


def fold_onnx_node(node: Node, values: list[np.ndarray | None]) -> list[np.ndarray]:
    """Evaluate one node on constant inputs with onnx's reference evaluator."""
    from onnx.reference import ReferenceEvaluator

    names = [f"i{k}" if v is not None else "" for k, v in enumerate(values)]
    proto = helper.make_node(node.op_type, names, [f"o{k}" for k in range(len(node.proto.output))],
                             domain=node.proto.domain)
    proto.attribute.extend(node.proto.attribute)
    try:
        ev = ReferenceEvaluator(proto)
        return ev.run(None, {n: v for n, v in zip(names, values) if n})
    except Exception as e:
        raise node.error(f"cannot fold constant inputs: {str(e).splitlines()[0][:160]}") from None


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def input_type(vi: onnx.ValueInfoProto) -> TensorType:
    tt = vi.type.tensor_type
    dims = []
    for d in tt.shape.dim:
        if not d.HasField("dim_value") or d.dim_value <= 0:
            shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
            raise TinyfuseError(f"input '{vi.name}' has dynamic shape {shape}; tinyfuse needs static shapes: "
                                "export with fixed sizes (e.g. onnxruntime.tools.make_dynamic_shape_fixed)")
        dims.append(d.dim_value)
    dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type)
    return TensorType(tuple(dims), str(dtype))


def from_onnx(model: onnx.ModelProto | str | Path, name: str | None = None) -> IRModule:
    """Convert an ONNX model (or a path) to an IRModule in NCHW with original I/O dtypes."""
    if not isinstance(model, onnx.ModelProto):
        name = name or sanitize(Path(model).stem)
        model = load_onnx(model)
    name = sanitize(name or model.graph.name or "model")
    opset = default_opset(model)
    env: dict[str, Expr] = {}
    for init in model.graph.initializer:
        env[init.name] = Constant(numpy_helper.to_array(init), init.name)
    params = []
    for vi in graph_inputs(model):
        v = Var(vi.name, input_type(vi))
        params.append(v)
        env[vi.name] = v
    for proto in model.graph.node:
        node = Node(proto, opset)
        missing = [i for i in proto.input if i and i not in env]
        if missing:
            raise node.error(f"input '{missing[0]}' is neither a graph input, an initializer nor an earlier "
                             "node's output", "the graph is incomplete or not topologically sorted")
        args = [env[i] if i else None for i in proto.input]
        if proto.domain not in ("", "ai.onnx"):
            raise node.error(f"operator domain '{proto.domain}' is not supported")
        if args and all(a is None or isinstance(a, Constant) for a in args) and proto.op_type != "Constant":
            outs = [Constant(v, o) for v, o in zip(fold_onnx_node(node, [a.value if a is not None else None
                                                                          for a in args]), proto.output)]
        elif proto.op_type in CONVERTERS:
            outs = CONVERTERS[proto.op_type](node, args)
            outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        else:
            raise node.error("operator not supported by tinyfuse",
                             f"supported: {', '.join(sorted(CONVERTERS))}")
        for oname, e in zip(proto.output, outs):
            if oname:
                env[oname] = e
    outputs = []
    for o in model.graph.output:
        if o.name not in env:
            raise TinyfuseError(f"graph output '{o.name}' is not produced by any node")
        outputs.append(env[o.name])
    body = outputs[0] if len(outputs) == 1 else Tuple(tuple(outputs))
    return IRModule(Function(tuple(params), body), name, tuple(o.name for o in model.graph.output))


# ----------------------------------------------------------------------------------------- helpers

def spatial_attrs(node: Node, x: TensorType, kernel: tuple[int, int], dilation=(1, 1)):
    """strides and (top, left, bottom, right) padding from pads / auto_pad (ONNX Conv-11 rules)."""
    if x.ndim != 4:
        raise node.error(f"only 2-D spatial inputs (rank 4) are supported, got shape {list(x.shape)}")
    strides = tuple(node.attr("strides", [1, 1]))
    if len(strides) != 2 or min(strides) < 1:
        raise node.error(f"strides {list(strides)} must be two positive integers")
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        pads = node.attr("pads", [0, 0, 0, 0])
        if len(pads) != 4 or min(pads) < 0:
            raise node.error(f"pads {list(pads)} must be 4 non-negative integers")
        return strides, (pads[0], pads[1], pads[2], pads[3])
    if auto_pad == "VALID":
        return strides, (0, 0, 0, 0)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.error(f"auto_pad '{auto_pad}' is not valid")
    pads = []
    for size, k, s, d in zip(x.shape[2:], kernel, strides, dilation):
        total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
        small = total // 2
        pads.append((small, total - small) if auto_pad == "SAME_UPPER" else (total - small, small))
    return strides, (pads[0][0], pads[1][0], pads[0][1], pads[1][1])


def channel_param(v: np.ndarray, rank: int) -> Constant:
    """[C] per-channel parameter → [1, C, 1, 1] constant broadcastable against NCHW."""
    return Constant(v.reshape((1, -1) + (1,) * (rank - 2)))


# ----------------------------------------------------------------------------------------- converters

@converter("Conv")
def convert_conv(node: Node, args):
    x, w = args[0], args[1]
    wv = const_value(node, w, "weight W")
    if wv.ndim != 4:
        raise node.error(f"only 2-D convolution is supported, weight shape {list(wv.shape)}")
    dil = tuple(node.attr("dilations", [1, 1]))
    strides, pads = spatial_attrs(node, x.ty, wv.shape[2:], dil)
    group = node.attr("group", 1)
    if x.ty.shape[1] != wv.shape[1] * group:
        raise node.error(f"input channels {x.ty.shape[1]} != weight in-channels {wv.shape[1]} x group {group}")
    y = call("nn.conv2d", x, Constant(wv.astype(np.float32) if wv.dtype != np.float32 else wv, w.name),
             strides=strides, padding=pads, dilation=dil, groups=group, span=node.name)
    if len(args) > 2 and args[2] is not None:
        y = call("add", y, channel_param(const_value(node, args[2], "bias B"), 4), span=node.name)
    return y


@converter("BatchNormalization")
def convert_bn(node: Node, args):
    if node.attr("training_mode", 0):
        raise node.error("training_mode=1 is not supported", "export the model in inference mode")
    x = args[0]
    ps = [channel_param(const_value(node, a, n), x.ty.ndim).value.astype(np.float32)
          for a, n in zip(args[1:5], ("scale", "B", "mean", "var"))]
    return call("nn.batch_norm", x, *map(Constant, ps), epsilon=float(node.attr("epsilon", 1e-5)),
                span=node.name)


def unary(op, **fixed):
    def convert(node: Node, args):
        attrs = {k: float(node.attr(k, v)) for k, v in fixed.items()}
        return call(op, args[0], span=node.name, **attrs)
    return convert


CONVERTERS.update({
    "Relu": unary("nn.relu"), "Sigmoid": unary("sigmoid"), "Tanh": unary("tanh"),
    "LeakyRelu": unary("nn.leaky_relu", alpha=0.01), "HardSwish": unary("hard_swish"),
    "HardSigmoid": unary("hard_sigmoid", alpha=0.2, beta=0.5),
})


@converter("Clip")
def convert_clip(node: Node, args):
    bounds = []
    for i, what in ((1, "min"), (2, "max")):
        a = args[i] if len(args) > i else None
        bounds.append(None if a is None else float(const_value(node, a, what).reshape(())))
    return call("clip", args[0], a_min=bounds[0], a_max=bounds[1], span=node.name)


@converter("Add", "Sub", "Mul", "Div")
def convert_binary(node: Node, args):
    op = {"Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide"}[node.op_type]
    a, b = args
    if a.ty.dtype != b.ty.dtype:
        raise node.error(f"operand dtypes differ: {a.ty.dtype} and {b.ty.dtype}")
    try:
        return call(op, a, b, span=node.name)
    except TinyfuseError:
        raise node.error(f"shapes {list(a.ty.shape)} and {list(b.ty.shape)} do not broadcast") from None


@converter("MatMul")
def convert_matmul(node: Node, args):
    a, b = args
    if b.ty.ndim != 2 or a.ty.shape[-1] != b.ty.shape[0]:
        raise node.error(f"MatMul of shapes {list(a.ty.shape)} x {list(b.ty.shape)} is not supported",
                         "tinyfuse supports [..., K] x [K, N]")
    return call("nn.matmul", a, b, span=node.name)


@converter("Gemm")
def convert_gemm(node: Node, args):
    """Y = alpha * A' B' + beta * C (ONNX Gemm-13) → matmul(A', alpha*B') + beta*C."""
    a, b = args[0], args[1]
    c = args[2] if len(args) > 2 else None
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if a.ty.ndim != 2 or b.ty.ndim != 2:
        raise node.error(f"Gemm needs 2-D A and B, got {list(a.ty.shape)} and {list(b.ty.shape)}")
    if node.attr("transA", 0):
        a = call("transpose", a, axes=(1, 0), span=node.name)
    if isinstance(b, Constant):
        bv = b.value.T if node.attr("transB", 0) else b.value
        b = Constant((bv * alpha).astype(bv.dtype) if alpha != 1.0 else bv, b.name)
    else:
        if node.attr("transB", 0):
            b = call("transpose", b, axes=(1, 0), span=node.name)
        if alpha != 1.0:
            b = call("multiply", b, Constant(np.array(alpha, b.ty.dtype)), span=node.name)
    y = call("nn.matmul", a, b, span=node.name)
    if c is not None and beta != 0.0:
        c = Constant((c.value * beta).astype(c.value.dtype)) if isinstance(c, Constant) else \
            c if beta == 1.0 else call("multiply", c, Constant(np.array(beta, c.ty.dtype)), span=node.name)
        y = call("add", y, c, span=node.name)
    return y


@converter("AveragePool", "MaxPool")
def convert_pool(node: Node, args):
    x = args[0]
    if len(node.proto.output) > 1 and node.proto.output[1]:
        raise node.error("the Indices output of MaxPool is not supported")
    kernel = tuple(node.attr("kernel_shape"))
    if len(kernel) != 2:
        raise node.error(f"only 2-D pooling is supported, kernel_shape {list(kernel)}")
    if any(d != 1 for d in node.attr("dilations", [1, 1])):
        raise node.error(f"dilations {node.attr('dilations')} are not supported for pooling")
    strides, pads = spatial_attrs(node, x.ty, kernel)
    op = "nn.max_pool2d" if node.op_type == "MaxPool" else "nn.avg_pool2d"
    return call(op, x, pool_size=kernel, strides=strides, padding=pads, ceil_mode=bool(node.attr("ceil_mode", 0)),
                count_include_pad=bool(node.attr("count_include_pad", 0)), span=node.name)


@converter("GlobalAveragePool")
def convert_gap(node: Node, args):
    x = args[0]
    if x.ty.ndim != 4:
        raise node.error(f"only rank-4 inputs are supported, got {list(x.ty.shape)}")
    return call("nn.avg_pool2d", x, pool_size=x.ty.shape[2:], span=node.name)


def reshape(node: Node, x: Expr, shape) -> Expr:
    shape = tuple(int(d) for d in shape)
    return x if shape == x.ty.shape else call("reshape", x, newshape=shape, span=node.name)


@converter("Reshape")
def convert_reshape(node: Node, args):
    x = args[0]
    spec = [int(d) for d in const_value(node, args[1], "shape")]
    allowzero = node.attr("allowzero", 0)
    out = [x.ty.shape[i] if d == 0 and not allowzero else d for i, d in enumerate(spec)]
    if out.count(-1) > 1:
        raise node.error(f"shape {spec} has more than one -1")
    if -1 in out:
        rest = int(np.prod([d for d in out if d != -1]))
        if rest == 0 or x.ty.size % rest:
            raise node.error(f"cannot reshape {list(x.ty.shape)} to {spec}")
        out[out.index(-1)] = x.ty.size // rest
    if int(np.prod(out)) != x.ty.size:
        raise node.error(f"cannot reshape {list(x.ty.shape)} ({x.ty.size} elements) to {spec}")
    return reshape(node, x, out)


@converter("Flatten")
def convert_flatten(node: Node, args):
    x = args[0]
    axis = node.attr("axis", 1) % (x.ty.ndim + 1) if x.ty.ndim else 0
    return reshape(node, x, (int(np.prod(x.ty.shape[:axis])), int(np.prod(x.ty.shape[axis:]))))


@converter("Softmax")
def convert_softmax(node: Node, args):
    x = args[0]
    axis = node.attr("axis", -1) % x.ty.ndim
    return call("nn.softmax", x, axis=axis, span=node.name)


@converter("Transpose")
def convert_transpose(node: Node, args):
    x = args[0]
    perm = tuple(node.attr("perm", list(range(x.ty.ndim))[::-1]))
    return x if perm == tuple(range(x.ty.ndim)) else call("transpose", x, axes=perm, span=node.name)


@converter("Identity", "Dropout")
def convert_identity(node: Node, args):
    if node.op_type == "Dropout" and len(node.proto.output) > 1 and node.proto.output[1]:
        raise node.error("the mask output of Dropout is not supported")
    return args[0]


@converter("Constant")
def convert_constant(node: Node, args):
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in node.attrs:
            v = node.attrs[key]
            arr = numpy_helper.to_array(v) if key == "value" else np.array(
                v, np.float32 if "float" in key else np.int64)
            return Constant(arr, node.proto.output[0])
    raise node.error(f"attribute {sorted(node.attrs)} of Constant is not supported")
