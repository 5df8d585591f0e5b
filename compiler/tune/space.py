"""The search space of ``tinyfuse tune``: moves (one knob changed) read off a compiled build.

A :class:`Move` sets knobs of one section of a configuration (``cost.knobs``). ``moves_of(result)``
lists what a build offers, each knob from the phase that owns it:

- per kernel (group signature): ``inplace: false`` where the memory plan ran the kernel in place
  (``memory.inplace`` rules: dw_plane, pixel_buffer, residual_add, elementwise, transpose,
  fused_chain); ``variant: "ref"`` where a SIMD variant ran, or the target's SIMD variant where a
  portable kernel ran a group that one of its implementations would take (``strategy.choose_isa``);
- per chain (poly-fused group): ``fuse: false`` and ``tile_w`` half the chosen tile width (overlapped
  column tiles instead of full-width line buffers: less scratch, recomputed seams); per long chain
  poly_fuse declined for its estimated extra instructions (``options.context.declined_chains``):
  ``fuse: true`` (the lower arena at that price);
- per graph: ``poly_fuse`` off, the scratch budget x2 and x1/2, ``order: "ir"``.

- per kernel, the lowering knobs its family offers (``Kernel.tunable``, filled through
  ``LowerCtx.offer`` by the lowering that reads them): today the arm_dsp SMLAD blocks of
  conv2d, fully connected and the fused chains' conv stages -- ``weights`` int8 / int16 (pre-widened:
  twice the weight flash, no SXTB16 per weight word), ``channels`` per output block (2, 3, 4) and
  ``unroll`` (the longest fully unrolled reduction; shorter: a loop).

Moves of one family (all in-place depthwise kernels, all SIMD kernels, ...) are also proposed
together. Moves of builds measured later (e.g. the member kernels of an unfused chain) join the space as the
search goes (``tune.search``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from ..cost.features import group_signature
from ..cost.knobs import chain_members, chain_signature, normalize
from ..options import resolve_variants
from ..strategy import choose_isa


@dataclass(frozen=True)
class Move:
    """One knob change: ``section`` global | kernels | chains, ``key`` the signature (None: global),
    ``knobs`` (name, value) pairs; ``label`` says it in words (kernel names of the build it came from)."""

    section: str
    key: str | None
    knobs: tuple
    label: str
    family: str = ""          # moves of one kind (e.g. "inplace:dw_plane"): proposed together as well

    @property
    def ident(self) -> str:
        return json.dumps([self.section, self.key, list(self.knobs)])


def moves_of(result) -> list[Move]:
    """The moves a compiled build (a CompileResult) offers (module doc)."""
    tgt = result.options.target
    simd = resolve_variants(tgt, "auto")
    out: list[Move] = []
    for i, step in enumerate(result.steps):
        fn, name = step.call.op, _short(step)
        out += _lowering_moves(step, group_signature(fn, tgt.name), name)
        if fn.attrs.get("poly"):
            sig = chain_signature(chain_members(fn), tgt.name)
            out.append(Move("chains", sig, (("fuse", False),), f"{name}: unfused", "chain:unfused"))
            tw = fn.attrs["poly"].get("tile_w", 1)
            if tw > 1:
                out.append(Move("chains", sig, (("tile_w", -(-tw // 2)),), f"{name}: tile_w {-(-tw // 2)}",
                                "chain:tile_w"))
            continue
        sig = group_signature(fn, tgt.name)
        opt = result.memory.inplace.get(i)
        if opt is not None:
            out.append(Move("kernels", sig, (("inplace", False),), f"{name}: out of place (not {opt.rule})",
                            f"inplace:{opt.rule}"))
        if step.kernel.variant in ("arm_dsp", "arm_mve"):
            out.append(Move("kernels", sig, (("variant", "ref"),), f"{name}: ref", "variant:ref"))
        elif simd and opt is None and choose_isa(fn, result.options.for_kernels(simd[0]), simd[0]) is not None:
            out.append(Move("kernels", sig, (("variant", simd[0]),), f"{name}: {simd[0]}", f"variant:{simd[0]}"))
    for d in result.options.context.declined_chains:
        sig = chain_signature(d["members"], tgt.name)
        out.append(Move("chains", sig, (("fuse", True),), f"{d['name']}: fused ({d['stages']} stages, arena "
                        f"{d['peak']} B, ~{d['overhead']:+.0%} instructions)", "chain:long"))
    budget = result.options.scratch_bytes
    out += [Move("global", None, (("poly_fuse", False),), "poly_fuse off"),
            Move("global", None, (("scratch_bytes", budget * 2),), f"scratch {budget * 2}"),
            Move("global", None, (("scratch_bytes", max(budget // 2, 256)),), f"scratch {max(budget // 2, 256)}"),
            Move("global", None, (("order", "ir"),), "order ir")]
    return list({m.ident: m for m in out}.values())


def _lowering_moves(step, sig: str, name: str) -> list[Move]:
    """One move per value a kernel's family offers for each of its lowering knobs (``Kernel.tunable``,
    ``lower.group_knobs``) other than the value it was built with; the knobs it already carries stay
    set in the move (a move replaces the group's knob dict entry by entry)."""
    out = []
    for knob, values in sorted(step.kernel.tunable.items()):
        now = step.kernel.knobs.get(knob, values[0])
        for v in values:
            if v != now:
                out.append(Move("kernels", sig, ((knob, v),), f"{name}: {knob} {v}", f"{knob}:{v}"))
    return out


def _short(step) -> str:
    """A kernel's name in labels: its step, the anchor and the output shape, e.g. ``k4 qconv2d 1x16x16x32``."""
    name = step.kernel.name
    idx, _, rest = name.partition("_")
    rest = rest.removeprefix("fused_")
    for junk in ("_add_qrequantize", "_qrequantize"):
        rest = rest.replace(junk, "")
    return f"{idx} {rest} {'x'.join(map(str, step.call.ty.shape))}"


def apply_moves(moves) -> dict:
    """The configuration that applies ``moves`` in turn over the defaults (a later move of the same knob
    wins)."""
    config: dict = {"global": {}, "kernels": {}, "chains": {}}
    for m in moves:
        dst = config["global"] if m.section == "global" else config[m.section].setdefault(m.key, {})
        dst.update(dict(m.knobs))
    return normalize(config)


def families(moves) -> dict[str, list[Move]]:
    """Moves grouped by family (those of more than one move): e.g. every in-place depthwise out of place."""
    out: dict[str, list[Move]] = {}
    for m in moves:
        if m.family:
            out.setdefault(m.family, []).append(m)
    return {f: ms for f, ms in out.items() if len(ms) > 1}


def compatible(moves) -> bool:
    """No two moves set the same knob (a combination worth proposing)."""
    seen = set()
    for m in moves:
        for k, _ in m.knobs:
            if (m.section, m.key, k) in seen:
                return False
            seen.add((m.section, m.key, k))
    return True


__all__ = ["Move", "apply_moves", "compatible", "families", "moves_of"]
