"""ONNX → IRModule.

Reads the protobuf with the ``onnx`` package, upgrades models older than opset 13 with
``onnx.version_converter`` (e.g. Softmax-11's coerce-to-2D becomes Flatten → Softmax-13 → Reshape,
Clip-6's attributes become inputs), checks each node against its ONNX schema (input counts, required
attributes), folds every node whose inputs are all initializers/constants by running it in
``onnx.reference.ReferenceEvaluator`` (e.g. DequantizeLinear on int8 weights, shape arithmetic),
and converts the rest op by op into NCHW IR calls (``convert_layout`` moves them to NHWC later).

Errors are :class:`TinyfuseError` with one line naming node, op type, opset and the offending
shape or attribute.
"""
from __future__ import annotations

import math
import re
from collections import ChainMap
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ... import ops  # noqa: F401  (registers the ops)
from ...errors import TinyfuseError
from ...userdir import input_file
from ...ir import Call, Constant, Expr, Function, IRModule, TensorType, Tuple, Var, call, get_op
from ...ir.types import C_TYPES, STORAGE_TYPES
from .quant import MS_DOMAIN_OPS, check_ms_inputs
from .control_flow import CONTROL_FLOW, condition_feeders, unsupported_condition
from .patterns import PATTERN_CONVERTERS, PATTERN_DOMAIN, recognize
from .registry import CONVERTERS, Node, shown
from .specialize import specialize
from .legacy_axis import coerce_hardmax
from .float64 import check_float64
from .half import input_value, output_value, widen, widen_array

MIN_OPSET = 13


# element types a converter may read from a constant (what folding and the C code handle)
CONSTANT_DTYPES = {*C_TYPES, "float16", "float64", "int16", "uint16", "uint32", "uint64"}
MAX_TENSOR_BYTES = 2**31 - 1   # generated C indexes with int; no MCU has more RAM anyway


def check_size(ty: TensorType, what: str) -> None:
    nbytes = math.prod(ty.shape) * np.dtype(ty.dtype).itemsize
    if nbytes > MAX_TENSOR_BYTES:
        raise TinyfuseError(f"{what} has shape {list(ty.shape)} ({nbytes} bytes); tinyfuse handles tensors "
                            f"up to {MAX_TENSOR_BYTES} bytes")


def check_names(model: onnx.ModelProto, where: str) -> None:
    """Every name the compiler reads is text: python protobuf returns non-UTF-8 strings as bytes."""
    g = model.graph
    names = [v.name for v in (*g.input, *g.output, *g.initializer)]
    for n in g.node:
        names += [n.op_type, n.name, n.domain, *n.input, *n.output, *(a.name for a in n.attribute)]
    if any(not isinstance(s, str) for s in names):
        raise TinyfuseError(f"{where}: the graph holds a name that is not valid UTF-8 (damaged file?)")


def sanitize(name: str) -> str:
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else "m_" + s


def load_onnx(path: str | Path) -> onnx.ModelProto:
    """Read and check an ONNX file, as the model declares it (from_onnx upgrades opset < 13, so errors
    can name the declared opset and the model hash is the user's model). Raises TinyfuseError on a bad
    file or an opset newer than the installed onnx package defines."""
    path = input_file(path)        # a regular file of bounded size: never a directory or /dev/zero
    try:
        model = onnx.load(str(path))
    except Exception as e:  # protobuf DecodeError and friends
        raise TinyfuseError(f"{path}: not a valid ONNX file ({type(e).__name__}: {first_line(e)})") from None
    if not model.graph.node:
        raise TinyfuseError(f"{path}: the ONNX graph has no nodes (truncated or empty file?)")
    check_model(model, str(path))
    return model


def check_model(model: onnx.ModelProto, where: str = "model") -> int:
    """Check the graph's names and that its ai.onnx opset is one the installed onnx defines; returns
    that opset."""
    check_names(model, where)
    opset = default_opset(model)
    newest = onnx.defs.onnx_opset_version()
    if opset > newest:
        raise TinyfuseError(f"{where}: model uses ai.onnx opset {opset}, newer than {newest}, the newest the "
                            f"installed onnx {onnx.__version__} defines; upgrade the onnx package")
    return opset


def upgrade_opset(model: onnx.ModelProto, where: str = "model") -> onnx.ModelProto:
    """check_model, then bring a model older than opset 13 to opset 13 with onnx.version_converter."""
    opset = check_model(model, where)
    if opset < MIN_OPSET:
        try:
            model = onnx.version_converter.convert_version(coerce_hardmax(model), MIN_OPSET)
        except Exception as e:
            raise TinyfuseError(f"{where}: cannot upgrade opset {opset} to {MIN_OPSET} with "
                                f"onnx.version_converter: {first_line(e)}") from None
    return model


def first_line(e: BaseException, limit: int = 160) -> str:
    lines = str(e).strip().splitlines()
    return lines[0][:limit] if lines else type(e).__name__


def default_opset(model: onnx.ModelProto) -> int:
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 1


def check_schema(node: Node) -> None:
    """The node against its ONNX schema with ``onnx.checker.check_node``: input counts, empty required
    inputs, required/unknown attributes and attribute types. Ops without a schema pass (the
    converter lookup reports them)."""
    try:
        onnx.defs.get_schema(node.op_type, node.opset, node.proto.domain)
    except onnx.defs.SchemaError:
        if node.proto.domain in ("", "ai.onnx") and onnx.defs.has(node.op_type):   # exists only in a later opset
            since = onnx.defs.get_schema(node.op_type).since_version
            raise node.error(f"operator {shown(node.op_type)} is not defined in ai.onnx opset {node.opset} "
                             f"(it appears in opset {since})", "export the model with that opset") from None
        return
    ctx = onnx.checker.C.CheckerContext()
    ctx.ir_version = onnx.IR_VERSION
    ctx.opset_imports = {node.proto.domain: node.opset}
    try:
        onnx.checker.check_node(node.proto, ctx)
    except onnx.checker.ValidationError as e:
        raise node.error(f"invalid node: {first_line(e)}") from None
    except UnicodeDecodeError:  # the checker's message quotes text that is not UTF-8
        raise node.error("invalid node: a name or attribute is not valid UTF-8 (damaged file?)") from None


def fold_onnx_node(node: Node, values: list[np.ndarray | None]) -> list[np.ndarray]:
    """Evaluate one node on constant inputs with onnx's reference evaluator (at the model's opset)."""
    from onnx.reference import ReferenceEvaluator

    names = [f"i{k}" if v is not None else "" for k, v in enumerate(values)]
    proto = helper.make_node(node.op_type, names, [f"o{k}" for k in range(len(node.proto.output))],
                             domain=node.proto.domain)
    proto.attribute.extend(node.proto.attribute)
    try:
        ev = ReferenceEvaluator(proto, opsets={node.proto.domain: node.opset})
        return ev.run(None, {n: v for n, v in zip(names, values) if n})
    except Exception as e:
        raise node.error(f"cannot fold constant inputs: {first_line(e)}") from None


def initializer_value(init: onnx.TensorProto) -> np.ndarray:
    try:
        return widen_array(numpy_helper.to_array(init))   # float16 / bfloat16: float32 values
    except Exception as e:
        raise TinyfuseError(f"initializer '{shown(init.name)}' (dims {list(init.dims)}) cannot be read: "
                            f"{first_line(e)}; the file is damaged") from None


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def input_type(vi: onnx.ValueInfoProto) -> TensorType:
    tt, name = vi.type.tensor_type, shown(vi.name)
    if not vi.type.HasField("tensor_type") or not tt.HasField("shape"):
        raise TinyfuseError(f"input '{name}' has no tensor shape; tinyfuse needs static shapes")
    dims = []
    for d in tt.shape.dim:
        if not d.HasField("dim_value") or d.dim_value < 0:
            shape = [d.dim_value if d.HasField("dim_value") else shown(d.dim_param or "?") for d in tt.shape.dim]
            raise TinyfuseError(f"input '{name}' has dynamic shape {shape}; tinyfuse needs static shapes: "
                                "export with fixed sizes (e.g. onnxruntime.tools.make_dynamic_shape_fixed)")
        dims.append(d.dim_value)
    try:
        dtype = str(helper.tensor_dtype_to_np_dtype(tt.elem_type))
    except KeyError:
        dtype = f"code {tt.elem_type}"
    if tt.elem_type == onnx.TensorProto.STRING:
        raise TinyfuseError(f"input '{name}' is a string tensor; tinyfuse compiles numeric tensors "
                            f"({', '.join(C_TYPES)}): tokenize or encode text before the model")
    if dtype not in C_TYPES and dtype not in STORAGE_TYPES:
        raise TinyfuseError(f"input '{name}' has element type {dtype}; supported: "
                            f"{', '.join([*C_TYPES, *STORAGE_TYPES])}")
    ty = TensorType(tuple(dims), dtype)
    check_size(ty, f"input '{name}'")
    return ty


def empty_constant(e: Expr) -> Constant:
    """A zero-element value (an empty model input, an empty slice or split): a Constant of its shape and
    dtype. It holds no data, so it costs no arena bytes and no kernel; ops reading it fold."""
    return Constant(np.zeros(e.ty.shape, e.ty.dtype), getattr(e, "name", ""))


def convert_node(node: Node, args: list[Expr | None]) -> list[Expr]:
    """Fold an all-constant node, else run its converter; op-level type errors get the node's name."""
    if (args and all(a is None or isinstance(a, Constant) for a in args)
            and node.op_type not in ("Constant", "DequantizeLinear")):  # int8 weights stay visible to legalize_qdq
        values = fold_onnx_node(node, [a.value if a is not None else None for a in args])
        return [Constant(v, o) for v, o in zip(values, node.proto.output)]
    for a, iname in zip(args, node.proto.input):
        if isinstance(a, Constant) and a.ty.dtype not in CONSTANT_DTYPES:
            raise node.error(f"constant input '{shown(iname)}' has element type {a.ty.dtype}",
                             "tinyfuse computes float32 and int8/uint8 (int32 bias, int64 shapes)")
    if node.op_type not in CONVERTERS:
        raise node.error("operator not supported by tinyfuse", f"supported: {', '.join(sorted(CONVERTERS))}")
    try:
        outs = CONVERTERS[node.op_type](node, args)
        outs = [e if e.ty.size else empty_constant(e) for e in (outs if isinstance(outs, (list, tuple)) else [outs])]
        for e in outs:
            check_size(e.ty, "the output")
    except TinyfuseError as e:
        if str(e).startswith("node '"):
            raise
        raise node.error(str(e)) from None
    return outs


def storage_root(e: Expr) -> Expr:
    """The value whose memory ``e`` lives in (through views: OpDef.is_view, a reshape)."""
    while isinstance(e, Call) and get_op(e.op).is_view:
        e = e.args[0]
    return e


def own_buffers(outputs: list[Expr]) -> list[Expr]:
    """Give every graph output its own memory: an output that is a model input, a view of one, a
    constant (a static shape: one copy kernel writes it), or shares its memory with an earlier output
    gets an explicit ``copy``."""
    seen: set[int] = set()
    result = []
    for e in outputs:
        root = storage_root(e)
        if isinstance(root, Var) or id(root) in seen or isinstance(root, Constant) and root.ty.size:
            e = call("copy", e, span="output copy")
        seen.add(id(storage_root(e)))
        result.append(e)
    return result


def convert_nodes(nodes, env, opset: int, declared: int) -> None:
    """Convert ``nodes`` in order, binding each output name in ``env`` (a dict, or a ChainMap whose
    parents are the enclosing graphs' values for a subgraph). If / Loop / Scan are inlined or unrolled
    at compile time (control_flow.py: a constant condition, a static trip count), every other node goes
    through its converter (or folds)."""
    feeders = condition_feeders(nodes)
    for proto in nodes:
        node = Node(proto, opset, declared)
        if proto.domain == PATTERN_DOMAIN:       # a decomposed layer recognised by patterns.py
            args = [env[i] if i else None for i in proto.input]
            env[proto.output[0]] = PATTERN_CONVERTERS[proto.op_type](node, args)
            check_float64(node, args, [env[proto.output[0]]])
            continue
        _check_node(node, proto, env)
        if proto.op_type in CONTROL_FLOW and proto.domain in ("", "ai.onnx"):
            outs = CONTROL_FLOW[proto.op_type](node, env, lambda g, local: convert_subgraph(g, env, local, node))
        else:
            outs = _convert_one(node, proto, env, feeders)
            check_float64(node, [env[i] if i else None for i in proto.input], outs)
        for oname, e in zip(proto.output, outs):
            if oname:
                env[oname] = widen(e)      # a folded float16 / bfloat16 value: float32 from here on


def _check_node(node: Node, proto, env) -> None:
    """TinyfuseError for a node of an unsupported domain or one reading a name nothing defines."""
    if proto.domain not in ("", "ai.onnx") and not (proto.domain == "com.microsoft" and proto.op_type in MS_DOMAIN_OPS):
        raise node.error(f"operator domain '{shown(proto.domain)}' is not supported")
    missing = [i for i in proto.input if i and i not in env]
    if missing:
        raise node.error(f"input '{shown(missing[0])}' is neither a graph input, an initializer nor an earlier "
                         "node's output", "the graph is incomplete or not topologically sorted")


def _convert_one(node: Node, proto, env, feeders) -> list:
    """The outputs of one node through its converter; a node without one that computes an If / Loop
    condition names the inputs to --bind (``unsupported_condition``)."""
    check_schema(node)
    if proto.domain == "com.microsoft":
        check_ms_inputs(node)
    args = [env[i] if i else None for i in proto.input]
    if proto.op_type not in CONVERTERS and not all(a is None or isinstance(a, Constant) for a in args):
        error = unsupported_condition(node, args, feeders)
        if error is not None:
            raise error
    return convert_node(node, args)


def convert_subgraph(graph: onnx.GraphProto, outer, local: dict, owner: Node) -> list[Expr]:
    """The outputs of subgraph ``graph`` (an If branch, a Loop or Scan body) converted once: its inputs
    bound to ``local`` (name → Expr), its initializers as constants, any other name it reads taken from
    the enclosing scope ``outer`` (ONNX outer-scope references)."""
    scope = ChainMap(dict(local), outer)
    for init in graph.initializer:
        scope[init.name] = Constant(initializer_value(init), init.name)
    convert_nodes(graph.node, scope, owner.opset, owner.declared_opset)
    missing = [o.name for o in graph.output if o.name not in scope]
    if missing:
        raise owner.error(f"subgraph '{shown(graph.name)}' output '{shown(missing[0])}' is not produced by any node")
    return [scope[o.name] for o in graph.output]


def from_onnx(model: onnx.ModelProto | str | Path, name: str | None = None, disabled=()) -> IRModule:
    """Convert an ONNX model (or a path) to an IRModule in NCHW with original I/O dtypes. Decomposed
    layers are recognised first (patterns.py), but those of ``disabled`` (patterns.FRONTEND_PASSES names)."""
    if not isinstance(model, onnx.ModelProto):
        name = name or sanitize(Path(model).stem)
        model = load_onnx(model)
    declared = default_opset(model)                  # errors name the opset the model declares
    model = upgrade_opset(specialize(model)[0])      # a symbolic batch dim alone: 1; any other: the error
    model, _ = recognize(model, disabled)            # LayerNorm, GELU, SiLU, Softmax spelled out in ops
    name = sanitize(name or model.graph.name or "model")
    opset = default_opset(model)
    if not model.graph.output:
        raise TinyfuseError("the ONNX graph has no outputs (truncated or damaged file?)")
    env: dict[str, Expr] = {}
    for init in model.graph.initializer:
        env[init.name] = Constant(initializer_value(init), init.name)
    params = []
    for vi in graph_inputs(model):
        v = Var(vi.name, input_type(vi))
        params.append(v)
        env[vi.name] = input_value(v) if v.ty.dtype in STORAGE_TYPES else empty_constant(v) if v.ty.size == 0 else v
    convert_nodes(model.graph.node, env, opset, declared)
    outputs = []
    for o in model.graph.output:
        if o.name not in env:
            raise TinyfuseError(f"graph output '{shown(o.name)}' is not produced by any node")
        outputs.append(output_value(env[o.name], o.type.tensor_type.elem_type, o.name))
    outputs = own_buffers(outputs)
    body = outputs[0] if len(outputs) == 1 else Tuple(tuple(outputs))
    return IRModule(Function(tuple(params), body), name, tuple(o.name for o in model.graph.output))

