"""ONNX operator converters: one function per ONNX op (or tight family), registered with
``@converter``. Each takes the :class:`Node` and its operands (``None`` for an absent optional input)
and returns the IR value(s) of the node's outputs. Operator versions cited are the ones the
semantics follow; models below opset 13 arrive upgraded (see ``onnx.py``).
"""
from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from ...ir import Call, Constant, Expr, call
from .registry import (Node, const_value, converter, register_converters, node_axis, optional_arg, scalar_value, weight_value,
                            with_weight_value)


# ----------------------------------------------------------------------------------------- helpers

def reshape(node: Node, x: Expr, shape) -> Expr:
    shape = tuple(int(d) for d in shape)
    return x if shape == x.ty.shape else call("reshape", x, newshape=shape, span=node.name)


def const_ints(node: Node, e: Expr | None, what: str) -> list[int]:
    return [int(v) for v in const_value(node, e, what).reshape(-1)]


def normalize_axes(node: Node, axes, rank: int, what: str = "axes") -> list[int]:
    """Non-negative, sorted, distinct axes; an out-of-range or repeated axis is an error."""
    out = sorted(a + rank if a < 0 else a for a in axes)
    if any(not 0 <= a < rank for a in out) or len(set(out)) != len(out):
        raise node.error(f"{what} {list(axes)} out of range or repeated for rank {rank}")
    return out


def window_attrs(node: Node, nsp: int):
    """strides, dilations and pads (ONNX order: begins then ends) of a 1-D or 2-D window op, as 2-D
    values: a 1-D op runs as a 2-D one over an H of 1."""
    def get(key, default):
        v = [int(d) for d in node.attr(key, default)]
        if len(v) != len(default):
            raise node.error(f"{key} {v} must have {len(default)} values for a {nsp}-D {node.op_type}")
        return v

    strides, dil, pads = get("strides", [1] * nsp), get("dilations", [1] * nsp), get("pads", [0] * 2 * nsp)
    if min(strides) < 1 or min(dil) < 1:
        raise node.error(f"strides {strides} and dilations {dil} must be positive")
    if nsp == 1:
        return [1] + strides, [1] + dil, [0, pads[0], 0, pads[1]]
    return strides, dil, pads


def window_pads(node: Node, size, kernel, strides, dil, pads) -> list[int]:
    """Per-axis begin pads then end pads from ``pads`` or ``auto_pad`` (ONNX rules: SAME_UPPER puts
    the odd pixel at the end, SAME_LOWER at the beginning)."""
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        if min(pads) < 0:
            raise node.error(f"pads {pads} must be non-negative")
        return list(pads)
    if auto_pad == "VALID":
        return [0] * 2 * len(size)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.error(f"auto_pad '{auto_pad}' is not valid (NOTSET, SAME_UPPER, SAME_LOWER or VALID)")
    begin, end = [], []
    for n, k, s, d in zip(size, kernel, strides, dil):
        total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
        small, big = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else big)
        end.append(big if auto_pad == "SAME_UPPER" else small)
    return begin + end


def padding(node: Node, size, kernel, strides, dil, pads) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) of a 2-D window: :func:`window_pads` (ONNX Conv-11 rules)."""
    top, left, bottom, right = window_pads(node, size, kernel, strides, dil, pads)
    return top, left, bottom, right


def channel_param(v: np.ndarray, rank: int) -> Constant:
    """[C] per-channel parameter → [1, C, 1, 1] constant broadcastable against NCHW."""
    return Constant(v.reshape((1, -1) + (1,) * (rank - 2)))


def with_h(node: Node, x: Expr) -> Expr:
    """[N, C, L] → [N, C, 1, L] (a 1-D op runs as 2-D)."""
    return reshape(node, x, x.ty.shape[:2] + (1,) + x.ty.shape[2:])


# ----------------------------------------------------------------------------------------- conv and pooling

def conv_operands(node: Node, args, what: str):
    """(x, w, b, the weight array, spatial rank 1 or 2) of a Conv/ConvTranspose node; errors for
    another rank, a weight of another rank than x, or a kernel_shape the weight contradicts."""
    x, w, b = args[0], args[1], optional_arg(args, 2)
    wv = weight_value(node, w, "weight W")
    nsp = wv.ndim - 2
    if nsp not in (1, 2) or x.ty.ndim != wv.ndim:
        raise node.error(f"only 1-D, 2-D and 3-D {what} is supported: input {list(x.ty.shape)}, "
                         f"weight W {list(wv.shape)}")
    ks = node.attr("kernel_shape")
    if ks is not None and list(ks) != list(wv.shape[2:]):
        raise node.error(f"kernel_shape {list(ks)} disagrees with weight W {list(wv.shape)}")
    return x, w, b, wv, nsp


def convert_conv(node: Node, args):
    """Conv-11: 1-D or 2-D, groups (depthwise with any channel multiplier), dilations, pads/auto_pad
    (called by the registered Conv converter, ``convert_conv_nd``, for every rank but 3-D)."""
    x, w, b, wv, nsp = conv_operands(node, args, "convolution")
    strides, dil, pads = window_attrs(node, nsp)
    if nsp == 1:
        x, wv = with_h(node, x), wv[:, :, None, :]
    pads = padding(node, x.ty.shape[2:], wv.shape[2:], strides, dil, pads)
    group = node.attr("group", 1)
    if group < 1 or x.ty.shape[1] != wv.shape[1] * group or wv.shape[0] % group:
        raise node.error(f"input channels {x.ty.shape[1]}, weight W {list(wv.shape)} and group {group} disagree")
    wc = with_weight_value(w, wv)
    y = call("nn.conv2d", x, wc, strides=tuple(strides), padding=pads, dilation=tuple(dil), groups=group,
             span=node.name)
    if isinstance(b, Call) and b.op == "qnn.dequantize":         # QDQ int32 bias: keep it visible
        y = call("add", y, call("reshape", b, newshape=(1, b.ty.size, 1, 1)), span=node.name)
    elif b is not None:
        y = call("add", y, channel_param(const_value(node, b, "bias B"), 4), span=node.name)
    return reshape(node, y, y.ty.shape[:2] + y.ty.shape[3:]) if nsp == 1 else y


@converter("GlobalAveragePool")
def convert_gap(node: Node, args):
    """GlobalAveragePool-1: avg_pool2d over the whole image (rank 4), else mean over the spatial axes."""
    x = args[0]
    if x.ty.ndim < 3:
        raise node.error(f"needs an input of rank >= 3, got {list(x.ty.shape)}")
    if x.ty.ndim == 4:
        return call("nn.avg_pool2d", x, pool_size=x.ty.shape[2:], span=node.name)
    return call("mean", x, axes=tuple(range(2, x.ty.ndim)), keepdims=True, span=node.name)


@converter("BatchNormalization")
def convert_bn(node: Node, args):
    """BatchNormalization-15, inference form (``fold_batchnorm`` folds it into the producer)."""
    if node.attr("training_mode", 0):
        raise node.error("training_mode=1 is not supported", "export the model in inference mode")
    if len([o for o in node.proto.output if o]) > 1:
        raise node.error("the running mean/var outputs (training mode) are not supported")
    x = args[0]
    ps = [channel_param(const_value(node, a, n), x.ty.ndim).value.astype(np.float32)
          for a, n in zip(args[1:5], ("scale", "B", "input_mean", "input_var"))]
    return call("nn.batch_norm", x, *map(Constant, ps), epsilon=float(node.attr("epsilon", 1e-5)),
                span=node.name)


# ----------------------------------------------------------------------------------------- element-wise

def unary(op, **fixed):
    def convert(node: Node, args):
        attrs = {k: float(node.attr(k, v)) for k, v in fixed.items()}
        return call(op, args[0], span=node.name, **attrs)
    return convert


register_converters({
    "Relu": unary("nn.relu"), "Sigmoid": unary("sigmoid"), "Tanh": unary("tanh"),
    "LeakyRelu": unary("nn.leaky_relu", alpha=0.01), "HardSwish": unary("hard_swish"),
    "HardSigmoid": unary("hard_sigmoid", alpha=0.2, beta=0.5),
})


@converter("Clip")
def convert_clip(node: Node, args):
    """Clip-13: min and max are optional scalar inputs (absent or the empty name); none is the identity.
    A bound computed at run time (a log-mel's ``ReduceMax(x) - top_db``) makes the clip
    ``minimum(maximum(x, min), max)``, each bound broadcast (numpy.clip's order: min above max gives max)."""
    x, bounds = args[0], []
    for i, what in ((1, "min"), (2, "max")):
        a = optional_arg(args, i)
        if a is None or isinstance(a, Constant) or (isinstance(a, Call) and a.op == "qnn.dequantize"):
            bounds.append(None if a is None else float(scalar_value(node, a, what)))
        elif a.ty.size != 1 or a.ty.dtype != x.ty.dtype:
            raise node.error(f"{what} must be a one-element {x.ty.dtype} tensor, got {a.ty.dtype} "
                             f"shape {list(a.ty.shape)}")
        else:
            bounds.append(reshape(node, a, ()))
    if not any(isinstance(b, Expr) for b in bounds):
        return x if bounds == [None, None] else call("clip", x, a_min=bounds[0], a_max=bounds[1], span=node.name)
    lo, hi = bounds
    if isinstance(lo, Expr):
        x = call("maximum", x, lo, span=node.name)
    elif lo is not None:
        x = call("clip", x, a_min=lo, a_max=None, span=node.name)
    if isinstance(hi, Expr):
        return call("minimum", x, hi, span=node.name)
    return x if hi is None else call("clip", x, a_min=None, a_max=hi, span=node.name)


@converter("Add", "Sub", "Mul", "Div")
def convert_binary(node: Node, args):
    """Add-14 / Sub-14 / Mul-14 / Div-14 with multidirectional (numpy) broadcasting."""
    op = {"Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide"}[node.op_type]
    a, b = args
    if a.ty.dtype != b.ty.dtype:
        raise node.error(f"operand dtypes differ: {a.ty.dtype} and {b.ty.dtype}")
    try:
        return call(op, a, b, span=node.name)
    except Exception:
        raise node.error(f"shapes {list(a.ty.shape)} and {list(b.ty.shape)} do not broadcast") from None


# ----------------------------------------------------------------------------------------- matmul

@converter("MatMul")
def convert_matmul(node: Node, args):
    """MatMul-13 (numpy matmul): a 1-D b becomes [K, 1] and its axis is dropped again."""
    a, b = args
    if b.ty.ndim == 1:
        y = call("nn.matmul", a, reshape(node, b, (b.ty.shape[0], 1)), span=node.name)
        return reshape(node, y, y.ty.shape[:-1])
    return call("nn.matmul", a, b, span=node.name)


@converter("Gemm")
def convert_gemm(node: Node, args):
    """Y = alpha * A' B' + beta * C (Gemm-13) → matmul(A', alpha*B') + beta*C; C broadcasts to [M, N]."""
    a, b, c = args[0], args[1], optional_arg(args, 2)
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if a.ty.ndim != 2 or b.ty.ndim != 2:
        raise node.error(f"Gemm needs 2-D A and B, got {list(a.ty.shape)} and {list(b.ty.shape)}")
    if node.attr("transA", 0):
        a = call("transpose", a, axes=(1, 0), span=node.name)
    if isinstance(b, Constant):
        bv = b.value.T if node.attr("transB", 0) else b.value
        b = Constant((bv * alpha).astype(bv.dtype) if alpha != 1.0 else bv, b.name)
    elif isinstance(b, Call) and b.op == "qnn.dequantize" and isinstance(b.args[0], Constant) and alpha == 1.0:
        if node.attr("transB", 0):   # transpose the int8 constant; a per-axis scale moves with its axis
            b = call("qnn.dequantize", Constant(np.ascontiguousarray(b.args[0].value.T), b.args[0].name),
                     span=b.span, **{**b.attrs, "axis": 1 - b.attrs["axis"]})
    else:
        if node.attr("transB", 0):
            b = call("transpose", b, axes=(1, 0), span=node.name)
        if alpha != 1.0:
            b = call("multiply", b, Constant(np.array(alpha, b.ty.dtype)), span=node.name)
    y = call("nn.matmul", a, b, span=node.name)
    if c is not None and beta != 0.0:
        if isinstance(c, Constant):
            c = Constant((c.value * beta).astype(c.value.dtype))
        elif beta != 1.0:
            c = call("multiply", c, Constant(np.array(beta, c.ty.dtype)), span=node.name)
        try:
            y = call("add", y, c, span=node.name)
        except Exception:
            raise node.error(f"bias C {list(c.ty.shape)} does not broadcast to [M, N] = {list(y.ty.shape)}") from None
    return y


# ----------------------------------------------------------------------------------------- shape and data movement

@converter("Reshape")
def convert_reshape(node: Node, args):
    """Reshape-14: 0 copies the input dim (unless allowzero=1), -1 is inferred."""
    x = args[0]
    spec = const_ints(node, args[1], "shape")
    allowzero = node.attr("allowzero", 0)
    out = [x.ty.shape[i] if d == 0 and not allowzero and i < x.ty.ndim else d for i, d in enumerate(spec)]
    if out.count(-1) > 1:
        raise node.error(f"shape {spec} has more than one -1")
    if -1 in out:
        rest = int(np.prod([d for d in out if d != -1]))
        if rest == 0 or x.ty.size % rest:
            raise node.error(f"cannot reshape {list(x.ty.shape)} to {spec}")
        out[out.index(-1)] = x.ty.size // rest
    if int(np.prod(out)) != x.ty.size or min(out, default=1) <= 0:
        raise node.error(f"cannot reshape {list(x.ty.shape)} ({x.ty.size} elements) to {spec}"
                         + (" with allowzero=1" if allowzero else ""))
    return reshape(node, x, out)


@converter("Flatten")
def convert_flatten(node: Node, args):
    """Flatten-13: [d0 .. d(axis-1)] x [d(axis) ..] → 2-D."""
    x = args[0]
    axis = node.attr("axis", 1)
    if not -x.ty.ndim <= axis <= x.ty.ndim:
        raise node.error(f"axis {axis} out of range for shape {list(x.ty.shape)}")
    axis += x.ty.ndim if axis < 0 else 0
    return reshape(node, x, (int(np.prod(x.ty.shape[:axis])), int(np.prod(x.ty.shape[axis:]))))


@converter("Squeeze")
def convert_squeeze(node: Node, args):
    """Squeeze-13 (axes input; Squeeze-1 attribute): drop size-1 axes, all of them without axes."""
    x, axes_arg = args[0], optional_arg(args, 1)
    axes = const_ints(node, axes_arg, "axes") if axes_arg is not None else node.attr("axes")
    if axes is None:
        axes = [i for i, d in enumerate(x.ty.shape) if d == 1]
    axes = normalize_axes(node, axes, x.ty.ndim)
    if any(x.ty.shape[a] != 1 for a in axes):
        raise node.error(f"axes {axes} of shape {list(x.ty.shape)} are not all of size 1")
    return reshape(node, x, [d for i, d in enumerate(x.ty.shape) if i not in axes])


@converter("Unsqueeze")
def convert_unsqueeze(node: Node, args):
    """Unsqueeze-13 (axes input; Unsqueeze-1 attribute): insert size-1 axes at output positions."""
    x, axes_arg = args[0], optional_arg(args, 1)
    axes = const_ints(node, axes_arg, "axes") if axes_arg is not None else node.attr("axes")
    if not axes:
        raise node.error("axes are missing")
    rank = x.ty.ndim + len(axes)
    axes = normalize_axes(node, axes, rank)
    dims = iter(x.ty.shape)
    return reshape(node, x, [1 if i in axes else next(dims) for i in range(rank)])


@converter("Transpose")
def convert_transpose(node: Node, args):
    """Transpose-13; a perm that moves only size-1 axes is a reshape (a view)."""
    x = args[0]
    perm = tuple(node.attr("perm", list(range(x.ty.ndim))[::-1]))
    if sorted(perm) != list(range(x.ty.ndim)):
        raise node.error(f"perm {list(perm)} is not a permutation of the axes of {list(x.ty.shape)}")
    moved = [a for a in perm if x.ty.shape[a] != 1]
    if moved == sorted(moved):
        return reshape(node, x, [x.ty.shape[a] for a in perm])
    return call("transpose", x, axes=perm, span=node.name)


@converter("Concat")
def convert_concat(node: Node, args):
    """Concat-13 along ``axis`` (negative counts from the end)."""
    xs = [a for a in args if a is not None]
    rank = xs[0].ty.ndim
    axis = node.attr("axis")
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} out of range for rank {rank}")
    if len(xs) == 1:
        return xs[0]
    return call("concatenate", *xs, axis=axis % rank, span=node.name)


@converter("Pad")
def convert_pad(node: Node, args):
    """Pad-13..25: pads (and axes, opset 18, negative count from the end) and constant_value are inputs;
    mode constant (nn.pad; a negative pad crops) or edge, reflect, wrap (nn.border_pad; negative pads
    crop first and the rest pads the cropped tensor, as onnxruntime's Pad). Any element type; an
    integer or bool constant_value stays exact (not through float)."""
    x = args[0]
    mode = node.attr("mode", "constant")
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise node.error(f"mode '{mode}' is not valid (constant, edge, reflect or wrap)")
    pads = const_ints(node, optional_arg(args, 1), "pads")
    value = optional_arg(args, 2)
    value = [] if value is None else const_value(node, value, "constant_value").reshape(-1)
    axes_arg = optional_arg(args, 3)
    axes = const_ints(node, axes_arg, "axes") if axes_arg is not None else list(range(x.ty.ndim))
    axes = [a + x.ty.ndim if a < 0 else a for a in axes]
    if len(pads) != 2 * len(axes) or any(not 0 <= a < x.ty.ndim for a in axes):
        raise node.error(f"pads {pads} and axes {axes} do not fit input shape {list(x.ty.shape)}")
    width = [[0, 0] for _ in range(x.ty.ndim)]
    for i, a in enumerate(axes):
        width[a] = [pads[i], pads[i + len(axes)]]
    if not any(b or e for b, e in width):
        return x
    if mode != "constant":
        return _border_pad(node, x, width, mode)
    fill = value[0] if len(value) else 0
    fill = float(fill) if x.ty.dtype.startswith("float") else int(fill)
    return call("nn.pad", x, pad_width=tuple(map(tuple, width)), pad_value=fill, span=node.name)


def _border_pad(node: Node, x: Expr, width: list[list[int]], mode: str) -> Expr:
    """Edge / reflect / wrap padding: the negative amounts crop x (a slice), the positive ones pad it."""
    shape = x.ty.shape
    begin = [max(-b, 0) for b, _ in width]
    end = [n - max(-a, 0) for n, (_, a) in zip(shape, width)]
    if any(e <= b for b, e in zip(begin, end)):
        raise node.error(f"pads {width} crop input {list(shape)} to nothing")
    if begin != [0] * len(shape) or end != list(shape):
        x = call("strided_slice", x, begin=tuple(begin), end=tuple(end), strides=(1,) * len(shape), span=node.name)
    grow = tuple((max(b, 0), max(a, 0)) for b, a in width)
    if not any(b or a for b, a in grow):
        return x
    return call("nn.border_pad", x, pad_width=grow, mode=mode, span=node.name)


@converter("Shape")
def convert_shape(node: Node, args):
    """Shape-15: shapes are static, so the result is a constant (feeds shape arithmetic and Reshape)."""
    shape = args[0].ty.shape
    start, end = node.attr("start", 0), node.attr("end", len(shape))
    return Constant(np.array(shape[start:end], np.int64), node.proto.output[0])


@converter("Identity", "Dropout")
def convert_identity(node: Node, args):
    """Identity-16, Dropout-13 at inference (training_mode absent or false): the input itself."""
    if node.op_type == "Dropout":
        if len(node.proto.output) > 1 and node.proto.output[1]:
            raise node.error("the mask output of Dropout is not supported")
        training = optional_arg(args, 2)
        if training is not None and bool(const_value(node, training, "training_mode").reshape(-1)[0]):
            raise node.error("training_mode=true is not supported", "export the model in inference mode")
    return args[0]


# ----------------------------------------------------------------------------------------- reductions, softmax

@converter("ReduceMean")
def convert_reduce_mean(node: Node, args):
    """ReduceMean-13 (axes attribute) and ReduceMean-18 (axes input, noop_with_empty_axes)."""
    x = args[0]
    axes_arg = optional_arg(args, 1)
    axes = const_ints(node, axes_arg, "axes") if axes_arg is not None else node.attr("axes", [])
    keepdims = bool(node.attr("keepdims", 1))
    if not axes:
        if node.attr("noop_with_empty_axes", 0):
            return x
        axes = range(x.ty.ndim)
    return call("mean", x, axes=tuple(normalize_axes(node, axes, x.ty.ndim)), keepdims=keepdims, span=node.name)


@converter("Softmax")
def convert_softmax(node: Node, args):
    """Softmax-13: normalise along ``axis`` only (older models arrive converted to this form)."""
    x = args[0]
    return call("nn.softmax", x, axis=node_axis(node, x, -1), span=node.name)


@converter("Constant")
def convert_constant(node: Node, args):
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in node.attrs:
            v = node.attrs[key]
            try:
                arr = numpy_helper.to_array(v) if key == "value" else np.array(
                    v, np.float32 if "float" in key else np.int64)
            except Exception as e:  # dims that do not match the data, an unknown data_type, ...
                msg = str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__
                raise node.error(f"attribute '{key}' cannot be read: {msg}", "the file is damaged") from None
            return Constant(arr, node.proto.output[0])
    raise node.error(f"attribute {sorted(node.attrs)} of Constant is not supported")


# ----------------------------------------------------------------------------------------- transformer ops

@converter("LayerNormalization")
def convert_layer_norm(node: Node, args):
    """LayerNormalization-17: normalize over x.shape[axis:]; Scale and the optional B broadcast to that
    shape (stash_type 1, float statistics). The Mean / InvStdDev outputs (training) are not supported."""
    x, scale, bias = args[0], args[1], optional_arg(args, 2)
    if any(node.proto.output[1:]):
        raise node.error("the Mean and InvStdDev outputs are not supported", "export the model for inference")
    axis = node_axis(node, x, -1)
    if bias is None:
        bias = Constant(np.zeros(x.ty.shape[axis:], np.float32))
    return call("nn.layer_norm", x, scale, bias, axis=axis, epsilon=float(node.attr("epsilon", 1e-5)),
                span=node.name)


@converter("Gelu")
def convert_gelu(node: Node, args):
    """Gelu-20: approximate 'none' (erf) or 'tanh'."""
    approximate = node.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise node.error(f"approximate '{approximate}' is not valid ('none' or 'tanh')")
    return call("nn.gelu", args[0], approximate=approximate, span=node.name)


converter("Erf")(unary("erf"))

