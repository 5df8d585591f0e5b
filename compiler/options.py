"""CompileOptions: the user's compile arguments, resolved once by the driver (or a harness entry point).

Every phase after the frontend (passes, the cost model, the memory planner, lowering) reads this one
frozen object instead of re-resolving a target name or a ``--kernels`` string:

- ``target``: the :class:`tinyfuse.targets.Target` (host is ``TARGETS["host"]``, never None);
- ``variants``: the kernel variants the strategies may choose (``tinyfuse.strategy``), best first, from
  ``--kernels`` and the target's features (``resolve_variants``: the single place where dsp/mve
  becomes arm_dsp/arm_mve);
- ``scratch_bytes``: the working-set budget of a poly-fused kernel (default: the target's);
- ``rounding``: the int8 requantization rounding ('double', TFLM's default, or 'single');
- ``alignment``: arena offset/size alignment in bytes (``ARENA_ALIGN``);
- ``planner``, ``disabled_passes``, ``dump_dir``: the memory planner, the pass names to skip,
  where to write the IR after each pass;
- ``io_buffers``: where the model's inputs and outputs live: 'arena' (inside the arena, the default)
  or 'caller' (buffers the caller owns, passed to ``<name>_run``: no arena bytes, never written in place).
- ``knobs``: the tuning configuration's lookups (``tinyfuse.cost.knobs.Knobs``) or None (no tuning
  records: every default); ``group_knobs``: the lowering knobs of the one group being lowered
  (``for_group``), e.g. ``{"block": [2, 2]}``; a kernel family reads those it has.

``context`` is the per-compilation mutable state (caches keyed by Function identity, pass timings):
one :class:`CompileContext` per ``resolve`` call, shared by ``for_kernels`` copies of the options.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import TinyfuseError
from .targets import ARENA_ALIGN, Target, get_target

FEATURES = {"arm_mve": "mve", "arm_dsp": "dsp", "arm_fpu": "vfp"}      # variant -> Target flag, most capable first
KERNEL_CHOICES = ("auto", "ref", *FEATURES)
ROUNDINGS = ("double", "single")
SPARSE_CHOICES = ("auto", "off", "on")   # on: every kernel the sparse variant can run (measurements)


def resolve_variants(target: Target, kernels: str = "auto") -> tuple[str, ...]:
    """The kernel variants lowering may use on ``target``, best first. ``kernels``: 'auto' (all the
    target has: arm_mve needs ``Target.mve``, arm_dsp ``Target.dsp``), 'ref' (none: portable C) or one
    variant name. TinyfuseError for an unknown choice or a variant the target lacks."""
    if kernels not in KERNEL_CHOICES:
        raise TinyfuseError(f"--kernels {kernels}: choose one of {', '.join(KERNEL_CHOICES)}")
    have = tuple(v for v, flag in FEATURES.items() if flag in target.features)
    if kernels in ("auto", "ref"):
        return have if kernels == "auto" else ()
    if kernels not in have:
        raise TinyfuseError(f"--kernels {kernels}: target {target.name} has no {FEATURES[kernels]} feature")
    return (kernels,)


@dataclass
class CompileContext:
    """Mutable state of one compilation, owned by its options (no module-level globals).

    ``linebuf_plans``: (chain stages, tile width) -> ``linebuf.ChainPlan`` (poly_fuse; MobileNet repeats
    its blocks); ``inplace_options``: id(Function) -> (Function, [InPlace]) (``memory.inplace.options``;
    the Function is kept so an id reused after garbage collection cannot hit); ``timings``: seconds
    per pass name; ``sparse_kernels``: the int8 weight tensors whose kernels run the ``sparse``
    variant (passes/sparse_weights.py decides, lower/conv/sparse.py reads); ``choices``: the kernel
    strategies' answers (``strategy.choose``: accepts may run an isl proof); ``declined_chains``: the
    long chains poly_fuse declined only for their estimated extra instructions (name, member Functions,
    stages, arena peak with it, estimated overhead), which ``tune`` and ``--ram-limit`` may ask for
    (chain knob ``fuse`` True)."""

    linebuf_plans: dict = field(default_factory=dict)
    inplace_options: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    sparse_kernels: dict = field(default_factory=dict)   # id(weights) -> (weights Constant, cost reason)
    choices: dict = field(default_factory=dict)          # strategy.choose's answers (the Function kept)
    declined_chains: list = field(default_factory=list)   # poly_fuse: long chains declined for instructions


@dataclass(frozen=True)
class CompileOptions:
    """The resolved compile options (module doc). Build with :meth:`resolve`."""

    target: Target
    variants: tuple[str, ...]
    scratch_bytes: int
    rounding: str = "double"
    alignment: int = ARENA_ALIGN
    planner: str = "best"
    disabled_passes: frozenset = frozenset()
    dump_dir: Path | None = None
    weights_dtype: str = "float32"
    skip_zero_activations: bool = False   # --skip-zero-activations: pointwise/FC kernels skip zero-point groups
    wcet: bool = False                    # --wcet: no data-dependent branches chosen by tinyfuse
    max_step_instructions: int = 0        # --max-step-instructions N: <name>_step pieces of <= N instructions
    io_buffers: str = "arena"
    input_rows: int = 0                   # --input-rows N: <name>_push_rows takes up to N input rows a call
    knobs: object = field(default=None, compare=False, repr=False)
    group_knobs: dict = field(default_factory=dict, compare=False, repr=False)
    sparse: str = "auto"
    context: CompileContext = field(default_factory=CompileContext, compare=False, repr=False)

    @classmethod
    def resolve(cls, target: str | Target = "host", kernels: str | None = "auto", scratch_bytes: int | None = None,
                rounding: str = "double", planner: str = "best", disabled_passes=(),
                dump_dir: str | Path | None = None, weights_dtype: str = "float32",
                io_buffers: str = "arena", sparse: str = "auto") -> CompileOptions:
        """Options from user arguments: ``target`` a name or Target, ``kernels`` None means 'auto'.
        TinyfuseError for an unknown target, kernel choice, rounding, weights dtype (float16 needs
        a core with FP16 conversion: the FPU of Cortex-M4F/M7/M33/M55, or the host) or I/O placement
        (``io_buffers``: 'arena' or 'caller')."""
        tgt = get_target(target)
        if rounding not in ROUNDINGS:
            raise TinyfuseError(f"--rounding must be 'double' or 'single', got '{rounding}'")
        _check_weights_dtype(weights_dtype, tgt)
        if sparse not in SPARSE_CHOICES:
            raise TinyfuseError(f"--sparse must be 'auto', 'off' or 'on', got '{sparse}'")
        if io_buffers not in IO_BUFFERS:
            raise TinyfuseError(f"--io-buffers must be 'arena' or 'caller', got '{io_buffers}'")
        variants = resolve_variants(tgt, kernels or "auto")
        if weights_dtype == "float16":   # the FPU kernels read repacked float32 weights by pointer: keep the flash promise
            variants = tuple(v for v in variants if v != "arm_fpu")
        return cls(tgt, variants,
                   tgt.scratch_bytes if scratch_bytes is None else scratch_bytes, rounding, ARENA_ALIGN, planner,
                   frozenset(disabled_passes), Path(dump_dir) if dump_dir else None, weights_dtype,
                   io_buffers=io_buffers, sparse=sparse)

    def for_kernels(self, kernels: str) -> CompileOptions:
        """The same options (and context) with the variants of another ``--kernels`` choice (a tuning
        record's per-group variant)."""
        return replace(self, variants=resolve_variants(self.target, kernels))

    def for_group(self, knobs: dict) -> CompileOptions:
        """The same options (and context) for lowering one group under its tuning knobs: ``variant``
        (a ``--kernels`` value) and the lowering knobs (``group_knobs``)."""
        variants = resolve_variants(self.target, knobs["variant"]) if knobs.get("variant") else self.variants
        return replace(self, variants=variants, group_knobs={k: v for k, v in knobs.items() if k in LOWERING_KNOBS})

    def allows(self, variant: str) -> bool:
        """Whether lowering may use ``variant`` (arm_dsp, arm_mve)."""
        return variant in self.variants



@dataclass(frozen=True)
class Knob:
    """One tuning knob, declared once: ``scope`` ``global`` (one value per build), ``kernel`` (per group,
    by its signature) or ``chain`` (per poly-fuse candidate); ``values``: the values it takes (None: any
    non-negative integer); ``default``: the build without records; ``owner``: the code that reads it."""

    name: str
    scope: str
    values: tuple | None
    default: object
    owner: str


KNOBS = {k.name: k for k in (
    Knob("poly_fuse", "global", (True, False), True, "driver: poly_fuse in the pass list"),
    Knob("scratch_bytes", "global", None, None, "driver: the line-buffer budget (None: the target's)"),
    Knob("order", "global", ("memory", "ir"), "memory", "memory.arena.plan_arena"),
    Knob("variant", "kernel", ("ref", *FEATURES), None, "driver: the group's --kernels (strategy.choose)"),
    Knob("inplace", "kernel", (True, False), True, "memory.arena.kernel_graph"),
    Knob("weights", "kernel", ("int8", "int16"), "int8", "lower/conv/dsp, lower/conv/chain, lower/matmul_arm"),
    Knob("channels", "kernel", (2, 3, 4), None, "lower/conv/dsp (default 3), lower/conv/chain (default 2)"),
    Knob("unroll", "kernel", (0, 4, 8, 16, 32), 0, "lower/conv/dsp (0: the family's own limit)"),
    Knob("body", "kernel", None, 0, "lower/conv/dsp (0: the family's own loop body)"),
    Knob("fuse", "chain", (True, False), None, "passes/poly_fuse (True: also a long chain over the overhead bound)"),
    Knob("tile_w", "chain", None, None, "passes/poly_fuse (None: full width, line buffers)"),
)}
# the lowering knobs a kernel family may read from its context (``LowerCtx.knob``; lower/group_knobs.py)
LOWERING_KNOBS = tuple(k.name for k in KNOBS.values() if k.owner.startswith("lower/"))
WEIGHTS_DTYPES = ("float32", "float16")
IO_BUFFERS = ("arena", "caller")     # --io-buffers: model inputs/outputs in the arena, or caller-owned buffers


def _check_weights_dtype(weights_dtype: str, target: Target) -> None:
    if weights_dtype not in WEIGHTS_DTYPES:
        raise TinyfuseError(f"--weights-dtype must be 'float32' or 'float16', got '{weights_dtype}'")
    if weights_dtype == "float16" and not target.fpu:
        raise TinyfuseError(f"--weights-dtype float16: target {target.name} has no FP16 conversion (no FPU); use "
                            "float32 weights, or a core with an FPU (cortex-m4, cortex-m7, cortex-m33, cortex-m55)")


__all__ = ["CompileContext", "CompileOptions", "FEATURES", "IO_BUFFERS", "KERNEL_CHOICES", "KNOBS", "Knob", "LOWERING_KNOBS",
           "SPARSE_CHOICES",
           "WEIGHTS_DTYPES", "resolve_variants"]
