"""compile_model: frontend → pass pipeline → lowering → memory plan → C sources.

The Python API behind ``tinyfuse compile``; ``compiler.compile`` is a thin alias.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import onnx

from . import __version__
from .codegen.emit import emit_sources
from .errors import TinyfuseError
from .frontend.onnx import from_onnx, load_onnx, sanitize
from .ir import Call, Constant, Function, IRModule, Var, post_order
from .lower import ConstPool, Kernel, lower_group
from .memory import Buffer, Plan, plan_memory
from .passes import run_pipeline
from .target import Placement, get_target


@dataclass
class TensorInfo:
    """A model input/output as the C API sees it: name, shape, dtype, byte offset in the arena."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    offset: int = 0


@dataclass
class Step:
    """One call in ``<name>_run``: kernel, arena offsets of its params and output."""

    kernel: Kernel
    in_offsets: list[int]
    out_offset: int


@dataclass
class CompileResult:
    """What ``compile_model`` returns: the generated files (name → text) and the plan behind them."""

    name: str
    files: dict[str, str]
    module: IRModule                # after the pipeline (fused)
    steps: list[Step]
    buffers: list[Buffer]
    plan: Plan
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    naive_bytes: int                # sum of every activation tensor (no reuse): the baseline
    weights_bytes: int
    model_hash: str
    timings: dict = field(default_factory=dict)
    target: str = "host"
    placement: Placement = field(default_factory=Placement)   # linker sections + alignment

    @property
    def arena_bytes(self) -> int:
        return self.plan.arena_bytes

    @property
    def kernels(self) -> list[Kernel]:
        return [s.kernel for s in self.steps]

    @property
    def macs(self) -> int:
        return sum(k.macs for k in self.kernels)

    def write(self, outdir: str | Path) -> Path:
        """Write all files into ``outdir`` atomically (a temp dir renamed into place): a failure never
        leaves a partial output directory."""
        outdir = Path(outdir)
        outdir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.", dir=outdir.parent))
        try:
            for fname, text in self.files.items():
                (tmp / fname).write_text(text)
            if outdir.exists():
                shutil.rmtree(outdir)
            os.replace(tmp, outdir)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return outdir


def compile_model(model, target: str = "host", name: str | None = None, disabled_passes=(),
                  dump_ir: str | Path | None = None, planner: str = "best", weights_section: str | None = None,
                  arena_section: str | None = None, code_section: str | None = None,
                  align: int | None = None, rounding: str = "double") -> CompileResult:
    """Compile an ONNX model (path or ModelProto) to C.

    Raises TinyfuseError for anything wrong with the model or options (unsupported op, dynamic
    shape, bad file, unknown pass or target). ``weights_section``, ``arena_section``, ``code_section``
    and ``align`` override the defaults of :class:`compiler.target.Placement`. ``rounding`` is the
    int8 requantization rounding: 'double' (TFLM and CMSIS-NN default) or 'single'.
    """
    tgt = get_target(target)
    overrides = dict(weights_section=weights_section, arena_section=arena_section, code_section=code_section,
                     align=align)
    placement = Placement(**{k: v for k, v in overrides.items() if v is not None})
    if isinstance(model, (str, Path)):
        name = sanitize(name or Path(model).stem)
        proto = load_onnx(model)
    else:
        proto = model
    model_hash = hashlib.sha256(proto.SerializeToString()).hexdigest()[:16]
    timings: dict = {}
    mod = run_pipeline(from_onnx(proto, name), disabled=disabled_passes, dump_dir=dump_ir, timings=timings,
                       rounding=rounding)
    return _lower_and_plan(mod, model_hash, planner, timings, tgt.name, placement)


def _lower_and_plan(mod: IRModule, model_hash: str, planner: str, timings: dict, target: str = "host",
                    placement: Placement = Placement()) -> CompileResult:
    func = mod.main
    pool = ConstPool(mod.name)
    steps_k: list[tuple[Kernel, list]] = []
    root: dict[int, object] = {}        # id(value) -> id of the value owning its memory
    producer: dict[int, int] = {}       # id(value) -> kernel index
    for p in func.params:
        root[id(p)] = id(p)
    for node in post_order(func.body):
        if isinstance(node, Call) and isinstance(node.op, Function):
            kernel = lower_group(node.op, f"k{len(steps_k)}_{node.op.attrs['name']}", pool)
            steps_k.append((kernel, list(node.args)))
            producer[id(node)] = len(steps_k) - 1
            root[id(node)] = id(node)
        elif isinstance(node, Call) and node.op == "reshape":
            root[id(node)] = root[id(node.args[0])]
        elif isinstance(node, Call):
            raise TinyfuseError(f"node '{node.span}' ({node.op}): left outside any kernel")
    outputs = list(func.outputs)
    for o in outputs:
        if isinstance(o, Constant) or id(o) not in root:
            raise TinyfuseError("a model output is a constant: nothing to compute")
        if isinstance(o, Var):
            raise TinyfuseError(f"model output is the input '{o.name}' itself: nothing to compute")

    n_k = len(steps_k)
    first: dict[object, int] = {id(p): -1 for p in func.params}
    last: dict[object, int] = {id(p): -1 for p in func.params}
    size: dict[object, int] = {id(p): p.ty.nbytes for p in func.params}
    for node_id, k in producer.items():
        first[node_id] = last[node_id] = k
    for k, (kernel, args) in enumerate(steps_k):
        for a in args:
            r = root[id(a)]
            last[r] = max(last[r], k)
    for o in outputs:
        last[root[id(o)]] = n_k
    for node in post_order(func.body):
        if id(node) in producer:
            size[id(node)] = node.ty.nbytes
    naive = sum(size.values())

    # in place: an element-wise kernel writes over a same-shape input whose memory dies at it
    alias: dict[object, object] = {}
    for node in post_order(func.body):
        if id(node) not in producer:
            continue
        k = producer[id(node)]
        kernel, args = steps_k[k]
        for i in kernel.inplace:
            r = root[id(args[i])]
            r = alias.get(r, r)
            if last[r] == k and size[r] >= size[id(node)] and not isinstance(args[i], Var) \
                    and all(root[id(a)] != root[id(args[i])] for j, a in enumerate(args) if j != i):
                alias[id(node)] = r
                last[r] = last[id(node)]
                break
    buffers = [Buffer(f"t{j}", size[r], first[r], last[r])
               for j, r in enumerate(r for r in size if r not in alias)]
    buf_of = {r: f"t{j}" for j, r in enumerate(r for r in size if r not in alias)}
    plan = plan_memory(buffers, alignment=16, planner=planner)

    def offset(value) -> int:
        r = root[id(value)]
        return plan.offsets[buf_of[alias.get(r, r)]]

    steps = [Step(kernel, [offset(a) for a in args], offset(node))
             for (kernel, args), node in zip(steps_k, [n for n in post_order(func.body) if id(n) in producer])]
    inputs = [TensorInfo(p.name, p.ty.shape, p.ty.dtype, p.ty.nbytes, offset(p)) for p in func.params]
    outs = [TensorInfo(n, o.ty.shape, o.ty.dtype, o.ty.nbytes, offset(o)) for n, o in zip(mod.output_names, outputs)]
    result = CompileResult(mod.name, {}, mod, steps, buffers, plan, inputs, outs, naive, pool.nbytes, model_hash,
                           timings, target, placement)
    result.files = emit_sources(result, pool, __version__)
    return result




