"""Decomposed layers recognised in the ONNX graph before conversion, so exporters' spellings reach the
fused kernels (a graph rewrite on the GraphProto, as onnxruntime's LayerNormFusion / GeluFusion /
BiasSoftmax transformers and TVM's dataflow patterns do):

- ``recognize_layer_norm``: ``ReduceMean → Sub → Pow(2) | Mul(d, d) → ReduceMean → Add(eps) → Sqrt → Div``
  (or ``Mul(d, Reciprocal(std))``), then optionally ``Mul(gamma)`` and ``Add(beta)`` with constant gamma and
  beta, over trailing axes → ``nn.layer_norm`` (ONNX LayerNormalization-17: biased variance, eps inside
  the square root).
- ``recognize_gelu``: ``x · 0.5 · (1 + Erf(x / √2))`` (any association of the product, ``/ 2`` or ``· 0.5``,
  ``/ √2`` or ``· (1/√2)``) → ``nn.gelu``; the tanh form ``0.5 · x · (1 + Tanh(√(2/π) · (x + 0.044715 · x³)))``
  (x³ as Pow or products; also ``x · (1 + 0.044715 · x²)``) → ``nn.gelu(approximate='tanh')`` (Gelu-20).
- ``recognize_silu``: ``Mul(x, Sigmoid(x))`` → ``nn.silu`` (ops/silu.py; PyTorch's SiLU / Swish).
- ``recognize_softmax``: ``Exp(x [- ReduceMax(x)]) / ReduceSum(Exp(...))`` along one axis (keepdims) →
  ``nn.softmax`` (Softmax-13; with or without the max subtraction, which does not change the exact value).

Every intermediate value of a match must be used inside it only (not a graph output, no other
consumer); constants are compared with a relative tolerance of 1e-3 (exporters write float32 values).
A match becomes one node of domain PATTERN_DOMAIN, converted by PATTERN_CONVERTERS; each recognition
can be turned off with ``--disable-pass NAME`` (FRONTEND_PASSES).
"""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ...ir import Constant, Expr, call
from .registry import Node, optional_arg

PATTERN_DOMAIN = "ai.tinyfuse.patterns"
FRONTEND_PASSES = ("recognize_gelu", "recognize_layer_norm", "recognize_silu", "recognize_softmax")
TOL = 1e-3


class View:
    """Producers, consumers and constants of one graph."""

    def __init__(self, graph: onnx.GraphProto, nodes: list):
        self.producer = {o: n for n in nodes for o in n.output if o}
        self.consumers: dict[str, list] = defaultdict(list)
        for n in nodes:
            for i in n.input:
                if i:
                    self.consumers[i].append(n)
        self.graph_outputs = {o.name for o in graph.output}
        self.consts = {t.name: t for t in graph.initializer}

    def node(self, name: str, *ops: str):
        n = self.producer.get(name)
        return n if n is not None and n.op_type in ops and n.domain in ("", "ai.onnx") else None

    def const(self, name: str) -> np.ndarray | None:
        if name in self.consts:
            return numpy_helper.to_array(self.consts[name])
        n = self.node(name, "Constant")
        if n is not None and n.attribute and n.attribute[0].name == "value":
            return numpy_helper.to_array(n.attribute[0].t)
        return None

    def scalar(self, name: str) -> float | None:
        v = self.const(name)
        return float(v.reshape(-1)[0]) if v is not None and v.size == 1 and v.dtype.kind == "f" else None

    def near(self, name: str, want: float) -> bool:
        v = self.scalar(name)
        return v is not None and abs(v - want) <= TOL * abs(want)

    def single_use(self, name: str) -> bool:
        return len(self.consumers[name]) == 1 and name not in self.graph_outputs

    def internal(self, nodes: list, end) -> bool:
        """Every output of ``nodes`` but the end's is used inside ``nodes`` only."""
        inside = {id(n) for n in nodes}
        return all(o not in self.graph_outputs and all(id(c) in inside for c in self.consumers[o])
                   for n in nodes if n is not end for o in n.output if o)


def _other(node, name: str) -> str | None:
    """The other operand of a binary node one of whose operands is ``name``."""
    a, b = node.input[0], node.input[1]
    return b if a == name else a if b == name else None


def _product(v: View, name: str, depth: int = 0):
    """``name`` as a product: (factor names, constant multiplier, Mul/Div nodes); it recurses into Mul
    and into Div by a scalar constant whose outputs are used once."""
    n = v.node(name, "Mul", "Div")
    if n is None or depth > 6 or (depth and not v.single_use(name)):
        return [name], 1.0, []
    names, scale, nodes = [], 1.0, [n]
    operands = [(n.input[0], 1)] + [(n.input[1], -1 if n.op_type == "Div" else 1)]
    for i, (operand, power) in enumerate(operands):
        c = v.scalar(operand)
        if c is not None and c != 0:
            scale *= c ** power
        elif power == -1:
            return [name], 1.0, []
        else:
            sub, s, more = _product(v, operand, depth + 1)
            names, scale, nodes = names + sub, scale * s, nodes + more
    return names, scale, nodes


def _near(value: float, want: float) -> bool:
    return abs(value - want) <= TOL * abs(want)


def _plus_one(v: View, name: str):
    """``name`` = Add(t, 1): (t, the Add node)."""
    n = v.node(name, "Add")
    if n is None:
        return None, None
    for t, one in (n.input[:2], n.input[1::-1]):
        if v.near(one, 1.0):
            return t, n
    return None, None


def _cube_term(v: View, name: str, x: str):
    """``name`` = 0.044715 · x³ (x³ as Pow(x, 3) or products): its nodes, else None."""
    names, scale, nodes = _product(v, name)
    if not _near(scale, 0.044715):
        return None
    if names == [x, x, x]:
        return nodes
    if len(names) == 1:
        p = v.node(names[0], "Pow")
        if p is not None and p.input[0] == x and v.near(p.input[1], 3.0):
            return nodes + [p]
    return None


def _tanh_inner(v: View, t: str, x: str):
    """``t`` = √(2/π) · (x + 0.044715 · x³) or √(2/π) · x · (1 + 0.044715 · x²): its nodes, else None."""
    names, scale, nodes = _product(v, t)
    if not _near(scale, math.sqrt(2 / math.pi)):
        return None
    if len(names) == 1:
        add = v.node(names[0], "Add")
        if add is not None and v.single_use(names[0]):
            cube = _cube_term(v, _other(add, x), x) if x in add.input[:2] else None
            if cube is not None:
                return nodes + [add] + cube
    if len(names) == 2 and x in names:
        w, add = _plus_one(v, names[1 - names.index(x)])
        if add is not None:
            sq, s2, more = _product(v, w)
            if sq == [x, x] and _near(s2, 0.044715):
                return nodes + [add] + more
    return None


def match_gelu(v: View, end):
    """``end`` (Mul/Div) closes x · 0.5 · (1 + act(x)): (nodes, approximate, x)."""
    names, scale, nodes = _product(v, end.output[0])
    if len(names) != 2 or not _near(scale, 0.5):
        return None
    for x, u in (names, names[::-1]):
        a_out, add = _plus_one(v, u)
        act = v.node(a_out, "Erf", "Tanh") if a_out else None
        if act is None:
            continue
        if act.op_type == "Erf":
            inner_names, s, inner = _product(v, act.input[0])
            if inner_names == [x] and _near(s, 1 / math.sqrt(2)):
                return nodes + [add, act] + inner, "none", x
        else:
            inner = _tanh_inner(v, act.input[0], x)
            if inner is not None:
                return nodes + [add, act] + inner, "tanh", x
    return None


def match_silu(v: View, end):
    if end.op_type != "Mul":
        return None
    for s, x in (end.input[:2], end.input[1::-1]):
        sig = v.node(s, "Sigmoid")
        if sig is not None and sig.input[0] == x:
            return [end, sig] if v.single_use(s) else [end], x
    return None


def _axes(v: View, n) -> tuple[int, ...] | None:
    """A reduction's axes (attribute, or the constant second input of opset 13/18 forms), keepdims=1."""
    attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
    if not attrs.get("keepdims", 1):
        return None
    if len(n.input) > 1 and n.input[1]:
        c = v.const(n.input[1])
        return tuple(int(a) for a in c.reshape(-1)) if c is not None else None
    return tuple(attrs["axes"]) if "axes" in attrs else None


def _divided(v: View, end):
    """``end`` = Div(a, b) or Mul(a, Reciprocal(b)): (a, b, the Reciprocal node or None)."""
    if end.op_type == "Div":
        return end.input[0], end.input[1], None
    if end.op_type == "Mul":
        for a, r in (end.input[:2], end.input[1::-1]):
            rec = v.node(r, "Reciprocal")
            if rec is not None:
                return a, rec.input[0], rec
    return None, None, None


def match_layer_norm(v: View, end):
    """``end`` divides (x - mean) by sqrt(var + eps): (nodes, x, axes, eps) of the normalisation."""
    d, std, rec = _divided(v, end)
    sub, sq_root = v.node(d or "", "Sub"), v.node(std or "", "Sqrt")
    if sub is None or sq_root is None:
        return None
    x, mean = sub.input[0], v.node(sub.input[1], "ReduceMean")
    add = v.node(sq_root.input[0], "Add")
    if mean is None or mean.input[0] != x or add is None:
        return None
    axes = _axes(v, mean)
    if axes is None:
        return None
    for var_name, eps_name in (add.input[:2], add.input[1::-1]):
        found = _variance(v, (var_name, eps_name), axes, d, sub)
        if found is not None:
            var, eps, square, twin = found
            nodes = [end, sub, sq_root, mean, add, var, square] + ([twin] if twin else []) + ([rec] if rec else [])
            return nodes, x, axes, eps
    return None


def _variance(v: View, names, axes, d, sub):
    """(ReduceMean, eps, square, the centring Sub when it is a twin of ``sub`` or None) of the variance
    ReduceMean(square(x - mean)) + eps read from ``names`` (variance, eps), or None."""
    var, eps = v.node(names[0], "ReduceMean"), v.scalar(names[1])
    if var is None or eps is None or _axes(v, var) != axes:
        return None
    square = v.node(var.input[0], "Pow", "Mul")
    if square is None:
        return None
    base = square.input[0]
    ok = v.near(square.input[1], 2.0) if square.op_type == "Pow" else square.input[1] == base
    twin = v.node(base, "Sub")
    if ok and base == d:
        return var, eps, square, None
    if ok and twin is not None and list(twin.input) == list(sub.input):
        return var, eps, square, twin
    return None


def _affine(v: View, end):
    """The Mul(gamma) / Add(beta) with constant operands after ``end``: (nodes, gamma, beta)."""
    nodes, gamma, beta, out = [], "", "", end.output[0]
    for op in ("Mul", "Add"):
        users = v.consumers[out]
        if len(users) != 1 or out in v.graph_outputs or users[0].op_type != op or users[0].domain not in ("", "ai.onnx"):
            continue
        other = _other(users[0], out)
        if other is None or v.const(other) is None:
            continue
        nodes.append(users[0])
        gamma, beta = (other, beta) if op == "Mul" else (gamma, other)
        out = users[0].output[0]
    return nodes, gamma, beta


def match_softmax(v: View, end):
    """``end`` = Exp(z) / ReduceSum(Exp(z)), z = x or x - ReduceMax(x): (nodes, x, axis)."""
    e, s, rec = _divided(v, end)
    exp, red = v.node(e or "", "Exp"), v.node(s or "", "ReduceSum")
    if exp is None or red is None or red.input[0] != e:
        return None
    axes = _axes(v, red)
    if axes is None or len(axes) != 1:
        return None
    nodes, x = [end, exp, red] + ([rec] if rec else []), exp.input[0]
    sub = v.node(x, "Sub")
    mx = v.node(sub.input[1], "ReduceMax") if sub is not None else None
    if mx is not None and mx.input[0] == sub.input[0] and _axes(v, mx) == axes:
        nodes, x = nodes + [sub, mx], sub.input[0]
    return nodes, x, axes[0]


def _rewrite(v: View, end, kind: str):
    """(matched nodes, the replacing node) of ``kind`` closing at ``end``, or None."""
    if kind == "recognize_silu":
        m = match_silu(v, end)
        return m and (m[0], helper.make_node("Silu", [m[1]], [end.output[0]], domain=PATTERN_DOMAIN))
    if kind == "recognize_gelu" and end.op_type in ("Mul", "Div"):
        m = match_gelu(v, end)
        return m and (m[0], helper.make_node("Gelu", [m[2]], [end.output[0]], domain=PATTERN_DOMAIN, approximate=m[1]))
    if kind == "recognize_softmax" and end.op_type in ("Div", "Mul"):
        m = match_softmax(v, end)
        return m and (m[0], helper.make_node("Softmax", [m[1]], [end.output[0]], domain=PATTERN_DOMAIN, axis=m[2]))
    if kind == "recognize_layer_norm" and end.op_type in ("Div", "Mul"):
        m = match_layer_norm(v, end)
        if m is None:
            return None
        nodes, x, axes, eps = m
        more, gamma, beta = _affine(v, end)
        last = more[-1] if more else end
        return nodes + more, helper.make_node("LayerNorm", [x, gamma, beta], [last.output[0]], domain=PATTERN_DOMAIN,
                                              axes=list(axes), epsilon=eps)
    return None


def recognize(model: onnx.ModelProto, disabled=()) -> tuple[onnx.ModelProto, dict[str, int]]:
    """The model with every enabled pattern (FRONTEND_PASSES minus ``disabled``) replaced by its fused
    node, in the main graph and in every subgraph (If branches, Loop and Scan bodies), and the count per
    pattern; the model itself when nothing matched."""
    kinds = [k for k in FRONTEND_PASSES if k not in set(disabled)]
    counts = dict.fromkeys(kinds, 0)
    if not kinds:
        return model, counts
    out = onnx.ModelProto()
    out.CopyFrom(model)
    _recognize_graph(out.graph, kinds, counts)
    return (out if any(counts.values()) else model), counts


def _recognize_graph(graph: onnx.GraphProto, kinds: list[str], counts: dict[str, int]) -> None:
    nodes, before = list(graph.node), sum(counts.values())
    for kind in ("recognize_layer_norm", "recognize_softmax", "recognize_gelu", "recognize_silu"):
        if kind not in kinds:
            continue
        v = View(graph, nodes)
        removed: set[int] = set()
        replaced = {}
        for end in nodes:
            if id(end) in removed:
                continue
            m = _rewrite(v, end, kind)
            if not m or any(id(n) in removed for n in m[0]) or not v.internal(m[0], _last(m[0], m[1])):
                continue
            removed |= {id(n) for n in m[0]}
            replaced[id(_last(m[0], m[1]))] = m[1]
            counts[kind] += 1
        nodes = [replaced.get(id(n), n) for n in nodes if id(n) not in removed or id(n) in replaced]
    if sum(counts.values()) != before:
        kept = [n.SerializeToString() for n in nodes]
        del graph.node[:]
        for data in kept:
            graph.node.add().ParseFromString(data)
    for n in graph.node:
        for a in n.attribute:
            for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs):
                _recognize_graph(g, kinds, counts)


def _last(nodes, new):
    """The matched node producing the fused node's output (where the fused node goes)."""
    return next(n for n in nodes if new.output[0] in n.output)


# ----------------------------------------------------------------------------------------- converters

def _convert_layer_norm(node: Node, args: list[Expr]) -> Expr:
    """nn.layer_norm over the trailing ``axes``; constant gamma/beta that fit the normalised shape become
    its scale and bias, any other stays a multiply / add after it."""
    x, gamma, beta = args[0], optional_arg(args, 1), optional_arg(args, 2)
    rank = x.ty.ndim
    axes = sorted(a % rank for a in node.attr("axes"))
    if axes != list(range(rank - len(axes), rank)):
        raise node.error(f"normalises axes {node.attr('axes')} of rank {rank}: not the trailing axes")
    axis, norm = axes[0], x.ty.shape[axes[0]:]
    ones, zeros = (Constant(np.full(norm, v, np.float32)) for v in (1.0, 0.0))
    scale, bias = _fit(gamma, norm) or ones, _fit(beta, norm) or zeros
    y = call("nn.layer_norm", x, scale, bias, axis=axis, epsilon=float(node.attr("epsilon")), span=node.name)
    if gamma is not None and scale is ones:
        y = call("multiply", y, gamma, span=node.name)
    if beta is not None and bias is zeros:
        y = call("add", y, beta, span=node.name)
    return y


def _fit(e: Expr | None, norm: tuple[int, ...]) -> Constant | None:
    """A constant broadcast to ``norm`` (leading size-1 dims dropped), else None."""
    if not isinstance(e, Constant) or e.ty.dtype != "float32":
        return None
    v = e.value
    while v.ndim > len(norm) and v.shape[0] == 1:
        v = v.reshape(v.shape[1:])
    try:
        return Constant(np.ascontiguousarray(np.broadcast_to(v, norm)), e.name) if v.ndim <= len(norm) else None
    except ValueError:
        return None


def _convert_softmax(node: Node, args: list[Expr]) -> Expr:
    x = args[0]
    return call("nn.softmax", x, axis=node.attr("axis") % x.ty.ndim, span=node.name)


PATTERN_CONVERTERS = {
    "LayerNorm": _convert_layer_norm,
    "Gelu": lambda node, args: call("nn.gelu", args[0], approximate=node.attr("approximate"), span=node.name),
    "Silu": lambda node, args: call("nn.silu", args[0], span=node.name),
    "Softmax": _convert_softmax,
}

__all__ = ["FRONTEND_PASSES", "PATTERN_CONVERTERS", "PATTERN_DOMAIN", "recognize"]
