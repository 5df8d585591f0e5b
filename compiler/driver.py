"""compile_model: frontend → pass pipeline → lowering → memory plan → C sources.

The Python API behind ``tinyfuse compile``; ``tinyfuse.compile`` is a thin alias.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ._version import __version__
from .codegen.emit import emit_sources
from .codegen.names import model_name
from .cost.records import load_records
from .errors import TinyfuseError
from .frontend.detect import model_format
from .frontend.onnx import from_onnx, load_onnx
from .ir import Call, Constant, Function, IRModule, Var, get_op, post_order
from .lower import ConstPool, Kernel
from .lower.arena_variants import lower_for_arena
from .lower.half_weights import half_weights
from .memory import Buffer, Plan
from .memory.arena import plan_arena
from .memory.state import StateInfo, external_values, layout_states, locator, ring_copies
from .options import CompileOptions
from .passes import run_pipeline
from .passes.io_quant import io_quantization
from .targets import Placement, check_fits, get_target


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
    """One call in ``<name>_run``: kernel, arena offsets of its params, output and scratch."""

    kernel: Kernel
    in_offsets: list[int]
    out_offset: int
    scratch_offset: int = 0         # meaningful when kernel.scratch_bytes > 0
    call: Call | None = None        # the fused-group call of main it runs (kernel order may differ from IR order)
    in_bases: list[str] = field(default_factory=list)   # C pointer each offset counts from: "a" arena, "st" state,
    out_base: str = "a"                                 # "rw<i>" a ring window (memory/state.py)
    copy: str | None = None         # C statement run instead of the kernel (a ring buffer's append)


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
    options: CompileOptions | None = None   # the resolved options it was compiled with
    memory: object = None           # tinyfuse.memory.arena.ArenaPlan: order, in-place choices, bounds
    states: list[StateInfo] = field(default_factory=list)   # persistent state (stateful models only)

    @property
    def state_bytes(self) -> int:
        """Bytes of the persistent state region (``<NAME>_STATE_SIZE``), 0 for a stateless model."""
        return max((s.offset + (s.capacity or s.nbytes) for s in self.states), default=0)

    @property
    def arena_bytes(self) -> int:
        return self.plan.arena_bytes

    @property
    def kernels(self) -> list[Kernel]:
        return [s.kernel for s in self.steps]

    @property
    def macs(self) -> int:
        return sum(k.macs for k in self.kernels)

    def __repr__(self) -> str:
        """One line: name, target, kernel count, arena bytes and the file names (not their text,
        the IR or the plan: the dataclass repr of those runs to megabytes)."""
        return (f"CompileResult(name={self.name!r}, target={self.target!r}, kernels={len(self.steps)}, "
                f"arena_bytes={self.arena_bytes}, files={sorted(self.files)})")

    def write(self, outdir: str | Path) -> Path:
        """Write every file into ``outdir`` (created if missing; ``.`` is fine), each atomically.
        Only files an earlier compile wrote there (metadata.json's ``files``) and this one does not
        are removed; nothing else in ``outdir`` is touched. Raises TinyfuseError on a bad path
        (see tinyfuse.codegen.output)."""
        from .codegen.output import write_outputs
        return write_outputs(self.files, outdir)


def compile_model(model, target: str = "host", name: str | None = None, disabled_passes=(),
                  dump_ir: str | Path | None = None, planner: str = "best", weights_section: str | None = None,
                  arena_section: str | None = None, code_section: str | None = None,
                  align: int | None = None, rounding: str = "double", kernels: str | None = None,
                  scratch_bytes: int | None = None, tuning_records=None, stateful=(),
                  weights_dtype: str = "float32", sparse: str | None = None) -> CompileResult:
    """Compile an ONNX model (path or ModelProto) or a TFLite model (.tflite path or bytes) to C.

    Raises TinyfuseError for anything wrong with the model or options (unsupported op, dynamic
    shape, bad file, unknown pass or target). ``weights_section``, ``arena_section``, ``code_section``
    and ``align`` override the defaults of :class:`tinyfuse.targets.Placement`. ``rounding`` is the
    int8 requantization rounding: 'double' (TFLM and CMSIS-NN default) or 'single'. ``kernels``
    chooses the kernel variants: 'auto' (the fastest the target has: arm_dsp, arm_mve), 'ref' (portable
    C everywhere) or one variant name; default: $TINYFUSE_KERNELS, else 'auto'. ``scratch_bytes``
    bounds the working set of a poly-fused kernel (default: the target's scratch budget).
    ``tuning_records`` (a JSON-lines path from ``tinyfuse tune`` or a ``tinyfuse.tune.TuningRecords``)
    applies the measured best choices: the model's global knobs (poly_fuse on/off, scratch budget)
    and, per kernel signature, the variant with the fewest measured instructions (compiler/tune.py).
    ``stateful``: (graph input, graph output) name pairs that become persistent state, or their text
    ``"IN=OUT,..."`` (``--stateful``, ``tinyfuse.frontend.stateful_io``: a model exported with explicit
    RNN state I/O).
    ``weights_dtype`` 'float16' stores float constants as binary16 in flash, converted at each read
    (lower/half_weights.py; TinyfuseError on a target without FP16 conversion); default 'float32'.
    ``sparse`` 'auto' (default, or $TINYFUSE_SPARSE) runs int8 conv/FC kernels without their zero weights
    where the cost model says it pays (passes/sparse_weights.py); 'off' keeps every kernel dense, 'on'
    makes every candidate sparse (measurements).
    """
    tgt = get_target(target)
    overrides = dict(weights_section=weights_section, arena_section=arena_section, code_section=code_section,
                     align=align)
    placement = Placement(**{k: v for k, v in overrides.items() if v is not None})
    model_hash, ir = _load(model, name)
    if stateful:
        from .frontend.stateful_io import mark_stateful, parse_pairs
        ir = mark_stateful(ir, parse_pairs(stateful) if isinstance(stateful, str) else stateful)
    choose = None
    if tuning_records is not None:
        records = load_records(tuning_records)
        disabled_passes, scratch_bytes = records.apply_global(model_hash, tgt.name, disabled_passes, scratch_bytes)
        choose = records.chooser(tgt.name)
    options = CompileOptions.resolve(tgt, kernels or os.environ.get("TINYFUSE_KERNELS") or "auto", scratch_bytes,
                                     rounding, planner, disabled_passes, dump_ir, weights_dtype,
                                     sparse or os.environ.get("TINYFUSE_SPARSE") or "auto")
    mod = run_pipeline(ir, options)
    result = _lower_and_plan(mod, model_hash, options, placement, choose)
    check_fits(result, tgt)          # the arena in RAM, the weights in flash of some board
    return result


def stateful_pairs(text: str) -> tuple[tuple[str, str], ...]:
    """``--stateful IN=OUT,...`` → ((IN, OUT), ...) (tinyfuse.frontend.stateful_io.parse_pairs)."""
    from .frontend.stateful_io import parse_pairs
    return parse_pairs(text)


def _load(model, name: str | None):
    """(model hash, IR module) of an ONNX model (path or ModelProto) or a TFLite model (path or bytes);
    a path's format is told by its content ('TFL3'), not its suffix."""
    if isinstance(model, (bytes, bytearray)) or model_format(model) == "tflite":
        from .frontend.tflite import from_tflite, load_tflite   # .tflite path or flatbuffer bytes
        data = load_tflite(model)
        name = model_name(name, Path(model).stem if isinstance(model, (str, Path)) else "model")
        return hashlib.sha256(data).hexdigest()[:16], _with_io_quant(from_tflite(data, name))
    if isinstance(model, (str, Path)):
        name = model_name(name, Path(model).stem)
        model = load_onnx(model)
    else:
        name = model_name(name, model.graph.name or "model")
    return hashlib.sha256(model.SerializeToString()).hexdigest()[:16], _with_io_quant(from_onnx(model, name))


def _with_io_quant(mod: IRModule) -> IRModule:
    """The module with its inputs' and outputs' scale and zero point recorded (IRModule.io_quant), read
    from the frontend's QDQ form before legalize_qdq folds the scales into the kernels."""
    return dataclasses.replace(mod, io_quant=io_quantization(mod.main))


def _lower_and_plan(mod: IRModule, model_hash: str, options: CompileOptions, placement: Placement = Placement(),
                    choose=None) -> CompileResult:
    """Lower the fused module under ``options`` and plan its arena. ``choose(fn, option)``: a
    kernel-variant choice (a ``--kernels`` value) for one group (tuning records), or None."""
    func = mod.main
    pool = ConstPool(mod.name)
    computed = {id(p) for p in func.params}
    for node in post_order(func.body):
        if isinstance(node, Call) and (isinstance(node.op, Function) or get_op(node.op).is_view):
            computed.add(id(node))
        elif isinstance(node, Call):
            raise TinyfuseError(f"node '{node.span}' ({node.op}): left outside any kernel")
    outputs = list(func.outputs)
    for o in outputs:
        if isinstance(o, Constant) or id(o) not in computed:
            raise TinyfuseError("a model output is a constant: nothing to compute")
        if isinstance(o, Var):
            raise TinyfuseError(f"model output is the input '{o.name}' itself: nothing to compute")

    # kernel order, in-place choices, lowering, buffers and offsets: compiler/memory/arena.py
    def lower(fn, kname, dry, option):
        k = choose(fn, option) if choose is not None else None
        return lower_for_arena(fn, kname, ConstPool(mod.name) if dry else pool,
                               options.for_kernels(k) if k else options, option)
    arena = plan_arena(func, lower, options, dry_run=choose is not None or bool(options.variants),
                       external=external_values(mod))
    buffers, plan, naive = arena.buffers, arena.plan, arena.naive_bytes
    states = layout_states(mod, arena.offset, lambda arr, key: pool.ref(arr, key=key))
    where = locator(mod, arena.offset, states)
    copies = ring_copies(mod, where, states)
    steps = [Step(kernel, [where(a)[1] for a in call.args], where(call)[1], arena.scratch_offset(i), call,
                  [where(a)[0] for a in call.args], where(call)[0], copies.get(id(call)))
             for i, (kernel, call) in enumerate(zip(arena.kernels, arena.calls))]
    if options.weights_dtype == "float16":
        half_weights(pool, list({id(s.kernel): s.kernel for s in steps}.values()))
    n_params, n_outs = len(func.params) - len(mod.states), len(outputs) - len(mod.states)
    offset = arena.offset
    inputs = [TensorInfo(p.name, p.ty.shape, p.ty.dtype, p.ty.nbytes, offset(p)) for p in func.params[:n_params]]
    outs = [TensorInfo(n, o.ty.shape, o.ty.dtype, o.ty.nbytes, offset(o))
            for n, o in zip(mod.output_names, outputs[:n_outs])]
    result = CompileResult(mod.name, {}, mod, steps, buffers, plan, inputs, outs, naive, pool.nbytes, model_hash,
                           options.context.timings, options.target.name, placement, options)
    result.memory, result.states = arena, states
    result.files = emit_sources(result, pool, __version__)
    return result
