"""The strategy registry: per kernel family an ordered list of named implementations, and ``choose``.

A family is the anchor op of a fused group (``qnn.conv2d``, ``qnn.matmul``, ``horizontal``, ...;
``elemwise`` for a group without an anchor). Its implementations are declared in order of preference
with :func:`implementation`: the name (``Kernel.kind`` of what it lowers to), what it needs (a kernel
variant of ``CompileOptions.variants``: ``arm_mve``, ``arm_dsp``, ``arm_fpu``; or None), the modes it
serves and its ``accepts(group) -> reason | None``: a cheap test on the IR that emits no C and says
why it declines. The lowering of each name is registered by lower/ (``lower.registry.implements``).

Modes (what the memory plan asks of a kernel): ``normal``; ``pixel_buffer`` (in place, each output
pixel stored over the input after all its reads, pixels in ``Group.order``); ``dw_plane`` (in-place
depthwise, channel by channel through a padded plane); ``chain_stage`` (a stage of a poly-fused chain:
the group is the stage's member group).

A family without declared implementations gets one portable implementation, ``<family>.ref``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..ir import Call, Constant, Function, Var
from ..ir.group import MalformedGroup, split_group

MODES = ("normal", "pixel_buffer", "dw_plane", "chain_stage")


@dataclass(frozen=True)
class Group:
    """What ``accepts`` reads: the fused group ``fn`` (its ``anchor`` and element-wise ``epi_ops``), the
    compile ``options`` (a CompileOptions) and the mode (``order``: the pixel order of pixel_buffer)."""

    fn: Function
    anchor: Call | None
    epi_ops: tuple
    options: object
    mode: str = "normal"
    order: str | None = None

    @property
    def out(self):
        """The group's output type."""
        return self.fn.body.ty


@dataclass(frozen=True)
class Impl:
    """One named implementation of a family (module doc). ``isa``: the kernel variant class its C
    belongs to (``ref``, ``sparse``, ``arm_dsp``, ``arm_mve``, ``arm_fpu``: the ``--kernels``
    vocabulary, printed in the kernel's comment); ``sliceable``: step fission may split its kernel
    (``--max-step-instructions``); ``applies``: the groups it is about at all (e.g. groups-1 convs, not
    depthwise ones), None: every group of the family; ``choose`` passes over the others silently."""

    name: str
    family: str
    needs: str | None
    modes: frozenset
    accepts: Callable[[Group], str | None]
    isa: str = "ref"
    sliceable: bool = True
    applies: Callable[[Group], bool] | None = None


@dataclass(frozen=True)
class Choice:
    """The chosen implementation and the (name, reason) of each one that declined before it."""

    impl: Impl
    declined: tuple = field(default_factory=tuple)

    @property
    def kind(self) -> str:
        return self.impl.name


STRATEGIES: dict[str, list[Impl]] = {}
_NAMES: dict[str, Impl] = {}


def implementation(family: str, name: str, *, needs: str | None = None, modes=("normal",), isa: str | None = None,
                   sliceable: bool = True, applies: Callable[[Group], bool] | None = None):
    """Declare the next implementation of ``family`` (its ``accepts`` is the decorated function); a
    name declared twice is refused (AssertionError at import)."""
    def deco(accepts):
        assert name not in _NAMES, f"implementation {name!r} declared twice"
        bad = set(modes) - set(MODES)
        assert not bad, f"{name}: unknown modes {bad}"
        impl = Impl(name, family, needs, frozenset(modes), accepts, isa or needs or "ref", sliceable, applies)
        STRATEGIES.setdefault(family, []).append(impl)
        _NAMES[name] = impl
        return accepts
    return deco


def family_of(fn: Function) -> str:
    """The family key of a group: ``fused_chain`` for a poly-fused chain, its anchor op, ``elemwise``
    without one (a malformed group: ``opaque``)."""
    if fn.attrs.get("poly"):
        return "fused_chain"
    try:
        anchor, _ = split_group(fn)
    except MalformedGroup:
        return "opaque"
    return anchor.op if anchor is not None else "elemwise"


def _portable(family: str) -> Impl:
    name = f"{family}.ref"
    if name not in _NAMES:
        _NAMES[name] = Impl(name, family, None, frozenset({"normal"}), lambda g: None)
    return _NAMES[name]


def impls(family: str) -> list[Impl]:
    """The implementations of ``family`` in order (a family with none declared: its portable one)."""
    return STRATEGIES.get(family) or [_portable(family)]


def by_name(name: str) -> Impl:
    """The implementation named ``name`` (KeyError for an unknown one)."""
    return _NAMES[name]


def needs_met(impl: Impl, options) -> bool:
    """Whether ``options`` allow what ``impl`` needs (a kernel variant of ``options.variants``)."""
    return impl.needs is None or impl.needs == "sparse" or impl.needs in options.variants


def _group(fn: Function, options, mode: str, order: str | None) -> Group:
    try:
        anchor, epi_ops = split_group(fn)
    except MalformedGroup:
        anchor, epi_ops = None, []
    return Group(fn, anchor, tuple(epi_ops), options, mode, order)


def choose(fn: Function, options, mode: str = "normal", order: str | None = None) -> Choice | None:
    """The first implementation of ``fn``'s family serving ``mode`` that ``options`` allow and that
    accepts the group, with the reasons of those that declined; None when none serves the mode (the
    memory plan then keeps the normal kernel). ``order``: the pixel order of the pixel_buffer mode.
    Cached per compilation (``options.context.choices``): accepts may run an isl proof."""
    cache = options.context.choices
    key = (id(fn), mode, order, options.variants, options.skip_zero_activations,
           len(options.context.sparse_kernels))        # the sparse decisions only grow
    hit = cache.get(key)
    if hit is not None and hit[0] is fn:
        return hit[1]
    g = _group(fn, options, mode, order)
    declined, choice = [], None
    for impl in impls(family_of(fn)):
        if mode not in impl.modes or (impl.applies is not None and not impl.applies(g)):
            continue
        if not needs_met(impl, options):
            declined.append((impl.name, f"needs {impl.needs} (target or --kernels)"))
            continue
        reason = impl.accepts(g)
        if reason is None:
            choice = Choice(impl, tuple(declined))
            break
        declined.append((impl.name, reason))
    cache[key] = (fn, choice)
    return choice


def accepted(fn: Function, options, mode: str = "normal", order: str | None = None):
    """Every implementation of ``fn``'s family serving ``mode`` that ``options`` allow and that accepts
    the group, in order (``choose`` is the first; the rest are where a lowering that disagrees with its
    strategy falls back)."""
    g = _group(fn, options, mode, order)
    for impl in impls(family_of(fn)):
        if mode in impl.modes and (impl.applies is None or impl.applies(g)) and needs_met(impl, options) \
                and impl.accepts(g) is None:
            yield impl


def choose_op(anchor: Call, options) -> Choice | None:
    """``choose`` for an anchor call on its own (a pass that runs before fusion asks what its kernel
    would be): the call with its tensor inputs as parameters, no epilogue."""
    params, args = [], []
    for i, a in enumerate(anchor.args):
        if isinstance(a, Constant):
            args.append(a)
        else:
            params.append(Var(f"x{i}", a.ty))
            args.append(params[-1])
    call = Call(anchor.op, tuple(args), anchor.attrs, anchor.ty, anchor.span)
    return choose(Function(tuple(params), call, {"Primitive": True}), options)


def choose_isa(fn: Function, options, isa: str, mode: str = "normal") -> Impl | None:
    """The first implementation of ``fn``'s family in kernel variant class ``isa`` (e.g. ``arm_dsp``)
    serving ``mode`` that accepts the group, or None (a horizontal group's branches)."""
    g = _group(fn, options, mode, None)
    return next((i for i in impls(family_of(fn)) if i.isa == isa and mode in i.modes and needs_met(i, options)
                 and (i.applies is None or i.applies(g)) and i.accepts(g) is None), None)


__all__ = ["Choice", "Group", "Impl", "MODES", "STRATEGIES", "accepted", "by_name", "choose", "choose_isa", "choose_op", "family_of",
           "implementation", "impls", "needs_met"]
