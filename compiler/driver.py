"""compile_model: frontend → pass pipeline → lowering → memory plan → C sources.

The Python API behind ``tinyfuse compile``; ``tinyfuse.compile`` is a thin alias.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ._version import __version__
from .codegen.emit import CONST_TYPES, emit_sources
from .codegen.share import share_bodies
from .codegen.names import model_name
from .cost.knobs import Knobs
from .cost.records import apply_global, build_options, load_records
from .errors import TinyfuseError
from .frontend.detect import model_format
from .frontend.onnx.reader import from_onnx, load_onnx
from .frontend.onnx.patterns import FRONTEND_PASSES
from .frontend.onnx.specialize import Specialization, specialize
from .ir import Call, Constant, Function, IRModule, Var, get_op, post_order
from .lower import ConstPool, Kernel, lower_for_arena
from .lower.slicing import lower_sliced
from .cost.steps import estimate_instructions, over_budget, pieces, too_coarse
from .lower.half_weights import half_weights
from .memory import Buffer, Plan
from .memory.arena import plan_arena
from .memory.input_rows import first_consumer, plan_rows
from .memory.io_buffers import caller_owned, with_caller_io
from .poly.slices import SliceRequest
from .memory.state import StateInfo, external_values, layout_states, locator, ring_copies
from .options import CompileOptions
from .passes import run_pipeline
from .passes.pipeline import PASS_NAMES
from .passes.io_quant import io_quantization
from .targets import NoBoardWarning, Placement, fit_problem, get_target


PASS_CHOICES = sorted([*PASS_NAMES, *FRONTEND_PASSES])   # --disable-pass: pipeline passes and ONNX recognitions
STEP_CURSOR_BYTES = 16     # --max-step-instructions: the step index lives in the arena, after the plan


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
    pieces: list[tuple[int, int]] = field(default_factory=list)   # step fission: [tf_lo, tf_hi) per step


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
    labels: tuple[str, ...] = ()    # class names of output 0's last axis (<NAME>_LABELS), or none
    rows: object = None             # --input-rows: memory.input_rows.RowPlan
    specialization: Specialization = field(default_factory=Specialization)  # --input-shape, --bind

    @property
    def bound_inputs(self) -> dict:
        """Graph inputs bound to constants at compile time (``--bind``): name → value; an oracle running
        the original model file feeds them."""
        return self.specialization.bound

    @property
    def state_bytes(self) -> int:
        """Bytes of the persistent state region (``<NAME>_STATE_SIZE``), 0 for a stateless model."""
        return max((s.offset + (s.capacity or s.nbytes) for s in self.states), default=0)

    @property
    def io_caller(self) -> bool:
        """Whether the model inputs and outputs are caller-owned buffers (``--io-buffers caller``)."""
        return self.options is not None and self.options.io_buffers == "caller"

    @property
    def io_bytes(self) -> int:
        """Bytes of the caller-owned input and output buffers (``--io-buffers caller``), else 0."""
        return sum(t.nbytes for t in [*self.inputs, *self.outputs]) if self.io_caller else 0

    @property
    def arena_bytes(self) -> int:
        """The planned arena, plus the step cursor's 16 bytes after it when ``<name>_step`` exists."""
        if self.options is not None and (self.options.max_step_instructions or self.options.input_rows):
            return self.step_cursor_offset + STEP_CURSOR_BYTES
        return self.plan.arena_bytes

    @property
    def step_cursor_offset(self) -> int:
        """Arena offset of ``<name>_step``'s cursor (uint32 index of the next step): the planned arena
        rounded up to 16 bytes."""
        return -(-self.plan.arena_bytes // STEP_CURSOR_BYTES) * STEP_CURSOR_BYTES

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
        Only files this model's earlier compile wrote there (metadata.json's ``files_by_model``) and this
        one does not are removed, never one another model in ``outdir`` still lists; nothing else in
        ``outdir`` is touched. The written metadata.json is ``self.files``' plus ``files_by_model``.
        Raises TinyfuseError on a bad path or a foreign file in the way (see tinyfuse.codegen.output)."""
        from .codegen.output import write_outputs
        return write_outputs(self.files, outdir)


def compile_model(model, target: str = "host", name: str | None = None, disabled_passes=(),
                  dump_ir: str | Path | None = None, planner: str = "best", weights_section: str | None = None,
                  arena_section: str | None = None, code_section: str | None = None,
                  align: int | None = None, rounding: str = "double", kernels: str | None = None,
                  scratch_bytes: int | None = None, tuning_records=None, stateful=(),
                  weights_dtype: str = "float32", realtime: dict | None = None,
                  io_buffers: str = "arena", ram_limit: int | None = None,
                  sparse: str | None = None, flash_limit: int | None = None, labels=(), input_shapes=(), bind=(), input_rows=0) -> CompileResult:
    """Compile an ONNX model (path or ModelProto) or a TFLite model (.tflite path or bytes) to C.

    Raises TinyfuseError for anything wrong with the model or options (unsupported op, dynamic
    shape, bad file, unknown pass or target). A model whose arena or weights fit no qemu board of
    ``target`` compiles with a ``tinyfuse.targets.NoBoardWarning`` naming the sizes (building it for
    qemu raises: ``check_fits``). ``weights_section``, ``arena_section``, ``code_section``
    and ``align`` override the defaults of :class:`tinyfuse.targets.Placement`. ``rounding`` is the
    int8 requantization rounding: 'double' (TFLM and CMSIS-NN default) or 'single'. ``kernels``
    chooses the kernel variants: 'auto' (the fastest the target has: arm_dsp, arm_mve), 'ref' (portable
    C everywhere) or one variant name; default: $TINYFUSE_KERNELS, else 'auto'. ``scratch_bytes``
    bounds the working set of a poly-fused kernel (default: the target's scratch budget).
    ``tuning_records`` (a JSON-lines path from ``tinyfuse tune`` or a ``tinyfuse.tune.TuningRecords``)
    builds one measured configuration (``tinyfuse.cost.knobs``: global, per-kernel and per-chain knobs):
    the recorded choice, or with ``ram_limit`` (bytes of arena + measured stack) the fastest measured
    build that fits, and with ``flash_limit`` (bytes of model code + weights) one whose flash fits too
    (TinyfuseError naming the smallest measured otherwise; ``cost.records``). Records
    with nothing for this model and target build the default (the error with ``ram_limit``) after a
    UserWarning naming the file, the model, the target and what the file holds.
    ``stateful``: (graph input, graph output) name pairs that become persistent state, or their text
    ``"IN=OUT,..."`` (``--stateful``, ``tinyfuse.frontend.onnx.stateful_io``: a model exported with explicit
    RNN state I/O).
    ``weights_dtype`` 'float16' stores float constants as binary16 in flash, converted at each read
    (lower/half_weights.py; TinyfuseError on a target without FP16 conversion); default 'float32'.
    ``realtime``: {'skip_zero_activations': bool, 'wcet': bool, 'max_step_instructions': N} (README "Real-time mode").
    ``io_buffers`` 'caller' keeps the model inputs and outputs out of the arena: ``<name>_run`` takes
    pointers to the caller's buffers (memory/io_buffers.py; TinyfuseError for a stateful model); default 'arena'.
    ``sparse`` 'auto' (default, or $TINYFUSE_SPARSE) runs int8 conv/FC kernels without their zero weights
    where the cost model says it pays (passes/sparse_weights.py); 'off' keeps every kernel dense, 'on'
    makes every candidate sparse (measurements). ``labels``: class names of output 0's last axis, one per
    class (else TinyfuseError), emitted as ``<NAME>_LABELS`` / ``<NAME>_NUM_LABELS`` (codegen/labels.py).
    ``input_shapes`` (``--input-shape NAME=1x3x8x8`` / ``NAME=DIM=VALUE``) and ``bind`` (``--bind NAME=VALUE``: a
    number, true/false or an .npy) specialise an ONNX model (frontend/onnx/specialize.py). ``input_rows`` N > 0:
    rows pushed N at a time into a ring read by the first kernel (memory/input_rows.py).
    """
    tgt = get_target(target)
    placement = _placement(weights_section=weights_section, arena_section=arena_section, code_section=code_section, align=align)
    kernels, sparse = kernels or os.environ.get("TINYFUSE_KERNELS") or "auto", sparse or os.environ.get("TINYFUSE_SPARSE")
    built_under = build_options(kernels, rounding, planner, disabled_passes, scratch_bytes, weights_dtype, io_buffers,
                                sparse, realtime)
    model_hash, ir, spec = _load_stateful(model, name, stateful, (input_shapes, bind, disabled_passes))
    disabled_passes = [p for p in disabled_passes if p not in FRONTEND_PASSES]   # those ran in the ONNX frontend
    config = _tuned_config(tuning_records, model_hash, tgt.name, ir.name, (ram_limit, flash_limit), built_under)
    if config is not None:
        disabled_passes, scratch_bytes = apply_global(config, disabled_passes, scratch_bytes)
    options = CompileOptions.resolve(tgt, kernels, scratch_bytes, rounding, planner, disabled_passes, dump_ir,
                                     weights_dtype, io_buffers=io_buffers, sparse=sparse or "auto")
    options = rows_options(realtime_options(options, ir, **realtime) if realtime else options, ir, input_rows)
    _check_io_buffers(options, ir)
    options, choose = _with_knobs(options, config, tgt.name)
    mod = run_pipeline(ir, options)
    result = _lower_and_plan(mod, model_hash, options, placement, choose, tuple(labels), spec)
    return _checked(result, tgt, options.knobs)


def _checked(result: CompileResult, tgt, knobs) -> CompileResult:
    """``result`` after the checks: a NoBoardWarning when its arena and weights fit no qemu board of the
    target (``fit_problem``; the sources are still written: a real board may have external memory, and
    ``run``/``bench`` refuse it, ``check_fits``); a UserWarning when a tuning configuration's per-kernel
    knobs match no kernel of the build (other --rounding / --kernels / --disable-pass than the tuning
    run: its groups differ)."""
    problem = fit_problem(result, tgt)
    if problem:
        warnings.warn(f"{problem}: it fits no qemu board tinyfuse knows (run and bench refuse it); the sources "
                      "are written for a board with more (e.g. external) memory", NoBoardWarning, stacklevel=3)
    if knobs is not None and knobs.config["kernels"]:
        built = {knobs.signature(s.call.op) for s in result.steps}
        if not built & set(knobs.config["kernels"]):
            warnings.warn("--tuning-records: the tuned configuration's per-kernel knobs match no kernel of this "
                          "build (compiled with other options than the tuning run: --rounding, --kernels, "
                          "--disable-pass, ...?): its kernels keep their defaults", stacklevel=3)
    return result


def _tuned_config(tuning_records, model_hash: str, target: str, name: str, limits, built_under: dict) -> dict | None:
    """The tuning configuration to build (``cost.records``) under ``limits`` = (RAM, flash) bytes or None,
    for a build under the options ``built_under`` (``cost.records.build_options``); None without records;
    TinyfuseError for a flash limit without records (only measured builds know their flash)."""
    ram_limit, flash_limit = limits
    if tuning_records is None:
        if flash_limit is not None:
            raise TinyfuseError("--flash-limit picks from measured builds: give --tuning-records (tinyfuse tune "
                                "measures each build's flash)")
        return None
    return load_records(tuning_records).config_for(model_hash, target, ram_limit, model=name, flash_limit=flash_limit,
                                                   options=built_under)


def _with_knobs(options: CompileOptions, config, target: str):
    """(options carrying the tuning configuration's knobs, the per-kernel chooser for the plan), or
    (options, None) without a configuration (every default)."""
    if config is None:
        return options, None
    knobs = Knobs(config, target)
    return dataclasses.replace(options, knobs=knobs), lambda fn, option: knobs.kernel(fn)


def _placement(**overrides) -> Placement:
    """The linker placement with the sections/alignment given (None: the target's default)."""
    return Placement(**{k: v for k, v in overrides.items() if v is not None})


def rows_options(options: CompileOptions, ir: IRModule, input_rows: int) -> CompileOptions:
    """``options`` for ``--input-rows N`` (N >= 1): caller-owned I/O (the input frame is never whole in the
    arena); unchanged for 0. TinyfuseError for N < 0, a stateful model or step fission."""
    if input_rows == 0:
        return options
    if input_rows < 1:
        raise TinyfuseError(f"--input-rows must be at least 1, got {input_rows}")
    if ir.states or options.max_step_instructions:
        raise TinyfuseError("--input-rows: a stateful model or --max-step-instructions has its own run API; "
                            "compile without --input-rows")
    return dataclasses.replace(options, io_buffers="caller", input_rows=input_rows)


def _check_io_buffers(options: CompileOptions, ir: IRModule) -> None:
    """TinyfuseError for ``--io-buffers caller`` with a stateful model (its ``_run(arena, state)`` keeps
    the arena form) or with step fission (``<name>_step(arena)`` works on the I/O inside the arena)."""
    if options.io_buffers != "caller":
        return
    if ir.states:
        raise TinyfuseError("--io-buffers caller: a stateful model keeps its inputs and outputs in the arena "
                            "(<name>_run(arena, state)); compile it with --io-buffers arena")
    if options.max_step_instructions:
        raise TinyfuseError("--max-step-instructions: <name>_step(arena) works on the I/O inside the arena; "
                            "compile it with --io-buffers arena")


def realtime_options(options: CompileOptions, ir: IRModule, skip_zero_activations: bool = False, wcet: bool = False,
                     max_step_instructions: int = 0) -> CompileOptions:
    """``options`` with the real-time choices; TinyfuseError for --wcet with activation skipping (a
    data-dependent branch), a step budget < 1, or step fission of a stateful model. Step fission
    disables poly_fuse (fission: line-buffered chains keep state across rows and run as one step)."""
    if wcet and skip_zero_activations:
        raise TinyfuseError("--wcet and --skip-zero-activations exclude each other: skipping is a data-dependent branch")
    if max_step_instructions and max_step_instructions < 1:
        raise TinyfuseError(f"--max-step-instructions must be at least 1, got {max_step_instructions}")
    if max_step_instructions and ir.states:
        raise TinyfuseError("--max-step-instructions: a stateful (streaming) model has no <name>_step; "
                            "compile it without step fission")
    disabled = options.disabled_passes | ({"poly_fuse"} if max_step_instructions else set())
    return dataclasses.replace(options, skip_zero_activations=skip_zero_activations, wcet=wcet,
                               max_step_instructions=max_step_instructions or 0, disabled_passes=disabled)


def stateful_pairs(text: str) -> tuple[tuple[str, str], ...]:
    """``--stateful IN=OUT,...`` → ((IN, OUT), ...) (tinyfuse.frontend.onnx.stateful_io.parse_pairs)."""
    from .frontend.onnx.stateful_io import parse_pairs
    return parse_pairs(text)


def _load_stateful(model, name: str | None, stateful, specialize=((), (), ())):
    """``_load`` (``specialize``: input shapes, bindings, the disabled passes among FRONTEND_PASSES run by
    the ONNX frontend), then the ``stateful`` pairs (IN=OUT) of an ONNX model made persistent state."""
    input_shapes, bind, disabled = specialize
    model_hash, ir, spec = _load(model, name, input_shapes, bind, set(disabled) & set(FRONTEND_PASSES))
    if stateful:
        from .frontend.onnx.stateful_io import mark_stateful, parse_pairs
        ir = mark_stateful(ir, parse_pairs(stateful) if isinstance(stateful, str) else stateful)
    return model_hash, ir, spec


def _load(model, name: str | None, input_shapes=(), bind=(), disabled=()):
    """(model hash, IR module, Specialization) of an ONNX model (path or ModelProto) or a TFLite model
    (path or bytes); a path's format is told by its content ('TFL3'), not its suffix. The hash is the
    specialised model's (``input_shapes``, ``bind``), so tuning records follow the shapes compiled."""
    if isinstance(model, (bytes, bytearray)) or model_format(model) == "tflite":
        if input_shapes or bind:
            raise TinyfuseError("--input-shape and --bind apply to ONNX models; a TFLite model's shapes are "
                                "static and its inputs stay inputs")
        from .frontend.tflite.reader import from_tflite, load_tflite   # .tflite path or flatbuffer bytes
        data = load_tflite(model)
        name = model_name(name, Path(model).stem if isinstance(model, (str, Path)) else "model")
        where = str(model) if isinstance(model, (str, Path)) else None
        return hashlib.sha256(data).hexdigest()[:16], _with_io_quant(from_tflite(data, name, where)), Specialization()
    if isinstance(model, (str, Path)):
        name = model_name(name, Path(model).stem)
        model = load_onnx(model)
    else:
        name = model_name(name, model.graph.name or "model")
    if isinstance(bind, str):
        bind = [bind]
    model, spec = specialize(model, input_shapes, bind)
    digest = hashlib.sha256(model.SerializeToString()).hexdigest()[:16]
    return digest, _with_io_quant(from_onnx(model, name, disabled)), spec


def specialized_model(path, input_shapes=(), bind=()):
    """The ONNX model at ``path`` with ``input_shapes`` and ``bind`` applied (frontend/onnx/specialize.py):
    what ``compile_model`` compiles and hashes with the same options."""
    return specialize(load_onnx(path), input_shapes, bind)[0]


def _with_io_quant(mod: IRModule) -> IRModule:
    """The module with its inputs' and outputs' scale and zero point recorded (IRModule.io_quant), read
    from the frontend's QDQ form before legalize_qdq folds the scales into the kernels."""
    return dataclasses.replace(mod, io_quant=io_quantization(mod.main))


def _plan_steps(steps: list[Step], options: CompileOptions) -> None:
    """Step fission (--max-step-instructions): each step's pieces from the cost model
    (cost/steps.py); a warning for a kernel whose smallest step is over the budget."""
    budget = options.max_step_instructions
    for step in steps if budget else ():
        estimate = estimate_instructions(step.call.op, step.kernel, options.target)
        step.pieces = pieces(step.kernel, estimate, budget)
        over = over_budget(step.kernel, estimate, budget)
        if over:
            warnings.warn(f"--max-step-instructions {budget}: kernel {step.kernel.name} ({step.kernel.variant}) "
                          f"cannot be split finer than about {over:.0f} instructions a step (cost model)")


def _lowering(name: str, pool: ConstPool, options: CompileOptions, choose, first):
    """The memory plan's ``lower(fn, kname, dry, option)``: a group's kernel under its tuning knobs
    (``choose``), sliced for step fission, or by row windows when it is ``first`` (--input-rows)."""
    def lower(fn, kname, dry, option):
        k = choose(fn, option) if choose is not None else None
        into = ConstPool(name) if dry else pool
        opts = options.for_group(k) if k else options
        if first is not None and fn is first.op:     # --input-rows: the first kernel runs by row windows
            return lower_for_arena(fn, kname, into, opts, option, SliceRequest())
        if options.max_step_instructions:
            budget, target = options.max_step_instructions, options.target
            return lower_sliced(fn, into, lambda request: lower_for_arena(fn, kname, into, opts, option, request),
                                lambda k: too_coarse(k, estimate_instructions(fn, k, target), budget))
        return lower_for_arena(fn, kname, into, opts, option)
    return lower


def _lower_and_plan(mod: IRModule, model_hash: str, options: CompileOptions, placement: Placement = Placement(),
                    choose=None, labels: tuple[str, ...] = (), spec: Specialization | None = None) -> CompileResult:
    """Lower the fused module under ``options`` and plan its arena. ``choose(fn, option)``: a
    group's tuning knobs (``cost.knobs``: ``variant``, lowering knobs) or None."""
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
        if isinstance(o, Constant) and o.ty.nbytes == 0:
            continue                 # an empty output (zero elements): no bytes, no kernel
        if isinstance(o, Constant) or id(o) not in computed:
            raise TinyfuseError("a model output is a constant: nothing to compute")
        if isinstance(o, Var):
            raise TinyfuseError(f"model output is the input '{o.name}' itself: nothing to compute")

    # kernel order, in-place choices, lowering, buffers and offsets: compiler/memory/arena.py
    first = first_consumer(func) if options.input_rows else None
    lower = _lowering(mod.name, pool, options, choose, first)
    arena = plan_arena(func, lower, options, dry_run=choose is not None or bool(options.variants) or first is not None,
                       external=external_values(mod) | caller_owned(mod, options),
                       ring=(lambda call, k: plan_rows(call, k).ring_bytes) if first is not None else None)
    buffers, plan, naive = arena.buffers, arena.plan, arena.naive_bytes
    states = layout_states(mod, arena.offset, lambda arr, key: pool.ref(arr, key=key))
    where = with_caller_io(locator(mod, arena.offset, states), mod, arena.offset, options)
    copies = ring_copies(mod, where, states)
    steps = [Step(kernel, [where(a)[1] for a in call.args], where(call)[1], arena.scratch_offset(i), call,
                  [where(a)[0] for a in call.args], where(call)[0], copies.get(id(call)))
             for i, (kernel, call) in enumerate(zip(arena.kernels, arena.calls))]
    _plan_steps(steps, options)
    if options.weights_dtype == "float16":
        half_weights(pool, list({id(s.kernel): s.kernel for s in steps}.values()))
    share_bodies([s.kernel for s in steps if not s.copy], pool.prefix,
                 {n: CONST_TYPES[str(a.dtype)] for n, a in pool.arrays})
    n_params, n_outs = len(func.params) - len(mod.states), len(outputs) - len(mod.states)
    def offset(v) -> int:            # caller-owned I/O: each at its own pointer; an empty value: nowhere
        return arena.offset(v) if options.io_buffers == "arena" and v.ty.nbytes else 0
    inputs = [TensorInfo(p.name, p.ty.shape, p.ty.dtype, p.ty.nbytes, offset(p)) for p in func.params[:n_params]]
    outs = [TensorInfo(n, o.ty.shape, o.ty.dtype, o.ty.nbytes, offset(o))
            for n, o in zip(mod.output_names, outputs[:n_outs])]
    result = CompileResult(mod.name, {}, mod, steps, buffers, plan, inputs, outs, naive, pool.nbytes, model_hash,
                           options.context.timings, options.target.name, placement, options)
    result.memory, result.states, result.labels = arena, states, labels
    result.rows = plan_rows(arena.calls[0], arena.kernels[0]) if first is not None else None
    result.specialization = spec or Specialization()
    result.files = emit_sources(result, pool, __version__)
    return result
