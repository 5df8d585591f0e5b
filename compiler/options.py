"""CompileOptions: the user's compile arguments, resolved once by the driver (or a harness entry point).

Every phase after the frontend (passes, the cost model, the memory planner, lowering) reads this one
frozen object instead of re-resolving a target name or a ``--kernels`` string:

- ``target``: the :class:`tinyfuse.targets.Target` (host is ``TARGETS["host"]``, never None);
- ``variants``: the kernel variants lowering may use, best first, from ``--kernels`` and the target's
  features (``resolve_variants``: the single place where dsp/mve becomes arm_dsp/arm_mve);
- ``scratch_bytes``: the working-set budget of a poly-fused kernel (default: the target's);
- ``rounding``: the int8 requantization rounding ('double', TFLM's default, or 'single');
- ``alignment``: arena offset/size alignment in bytes (``ARENA_ALIGN``);
- ``planner``, ``disabled_passes``, ``dump_dir``: the memory planner, the pass names to skip,
  where to write the IR after each pass.

``context`` is the per-compilation mutable state (caches keyed by Function identity, pass timings):
one :class:`CompileContext` per ``resolve`` call, shared by ``for_kernels`` copies of the options.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import TinyfuseError
from .targets import ARENA_ALIGN, Target, get_target

FEATURES = {"arm_mve": "mve", "arm_dsp": "dsp"}      # variant -> Target flag, most capable first
KERNEL_CHOICES = ("auto", "ref", *FEATURES)
ROUNDINGS = ("double", "single")


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


# The anchor ops that have target variants, as declared data: the cost model asks it (first_variant)
# without importing the kernel families; ``lower.registry.variant`` refuses a registration not
# declared here, and tests/unit/test_registry.py checks the registered VARIANTS equal it.
VARIANT_ANCHORS = {"qnn.conv2d": ("arm_mve", "arm_dsp"), "qnn.matmul": ("arm_mve", "arm_dsp"),
                   "horizontal": ("arm_mve", "arm_dsp"), "qnn.avg_pool2d": ("arm_mve",)}


@dataclass
class CompileContext:
    """Mutable state of one compilation, owned by its options (no module-level globals).

    ``linebuf_plans``: (chain stages, tile width) -> ``linebuf.ChainPlan`` (poly_fuse; MobileNet repeats
    its blocks); ``inplace_options``: id(Function) -> (Function, [InPlace]) (``memory.inplace.options``;
    the Function is kept so an id reused after garbage collection cannot hit); ``timings``: seconds
    per pass name."""

    linebuf_plans: dict = field(default_factory=dict)
    inplace_options: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)


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
    context: CompileContext = field(default_factory=CompileContext, compare=False, repr=False)

    @classmethod
    def resolve(cls, target: str | Target = "host", kernels: str | None = "auto", scratch_bytes: int | None = None,
                rounding: str = "double", planner: str = "best", disabled_passes=(),
                dump_dir: str | Path | None = None, weights_dtype: str = "float32") -> CompileOptions:
        """Options from user arguments: ``target`` a name or Target, ``kernels`` None means 'auto'.
        TinyfuseError for an unknown target, kernel choice, rounding or weights dtype (float16 needs
        a core with FP16 conversion: the FPU of Cortex-M4F/M7/M33/M55, or the host)."""
        tgt = get_target(target)
        if rounding not in ROUNDINGS:
            raise TinyfuseError(f"--rounding must be 'double' or 'single', got '{rounding}'")
        _check_weights_dtype(weights_dtype, tgt)
        return cls(tgt, resolve_variants(tgt, kernels or "auto"),
                   tgt.scratch_bytes if scratch_bytes is None else scratch_bytes, rounding, ARENA_ALIGN, planner,
                   frozenset(disabled_passes), Path(dump_dir) if dump_dir else None, weights_dtype)

    def for_kernels(self, kernels: str) -> CompileOptions:
        """The same options (and context) with the variants of another ``--kernels`` choice (a tuning
        record's per-group variant)."""
        return replace(self, variants=resolve_variants(self.target, kernels))

    def allows(self, variant: str) -> bool:
        """Whether lowering may use ``variant`` (arm_dsp, arm_mve)."""
        return variant in self.variants

    @property
    def chain_dsp(self) -> bool:
        """Whether poly-fused chains run their stages with the DSP (SMLAD) bodies (fused_chain/arm_dsp)."""
        return self.allows("arm_dsp")


WEIGHTS_DTYPES = ("float32", "float16")


def _check_weights_dtype(weights_dtype: str, target: Target) -> None:
    if weights_dtype not in WEIGHTS_DTYPES:
        raise TinyfuseError(f"--weights-dtype must be 'float32' or 'float16', got '{weights_dtype}'")
    if weights_dtype == "float16" and not target.fpu:
        raise TinyfuseError(f"--weights-dtype float16: target {target.name} has no FP16 conversion (no FPU); use "
                            "float32 weights, or a core with an FPU (cortex-m4, cortex-m7, cortex-m33, cortex-m55)")


def first_variant(op: str, allowed) -> str:
    """The variant whose kernel lowering tries first for an anchor ``op`` (e.g. 'qnn.conv2d'): the first
    of ``allowed`` (``CompileOptions.variants``) declared for it in VARIANT_ANCHORS, else 'ref'. (A
    variant may still decline one group, e.g. an unsupported epilogue; then lowering falls back to ref.)"""
    return next((v for v in VARIANT_ANCHORS.get(op, ()) if v in allowed), "ref")


__all__ = ["CompileContext", "CompileOptions", "FEATURES", "KERNEL_CHOICES", "VARIANT_ANCHORS", "WEIGHTS_DTYPES", "first_variant",
           "resolve_variants"]
