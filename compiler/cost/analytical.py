"""A first analytical cost model for kernels and fused chains (one module; a learned model can
replace it behind ``kernel_estimate`` / ``chain_estimate`` / ``decide``).

Inputs
  - per kernel: MACs, bytes moved (activations read + written, weights read), scratch bytes, its
    family (``ConvGeom.family`` of ``tinyfuse.ops.conv_geom``: ``conv`` 3x3-like, ``dw`` depthwise,
    ``pw`` any 1x1) and implementation (``Kernel.kind``: strategy.choose's answer, e.g.
    ``conv2d.arm_dsp``, ``depthwise.dw_rows_arm_dsp``, ``chain.conv_arm_mve``);
  - per fused chain: a ``linebuf.ChainPlan`` (MACs with recompute, line-buffer bytes, tile width);
  - the target's peak MACs/cycle and SRAM bytes/cycle (``tinyfuse.targets.Target``), and from the
    ``tinyfuse.options.CompileOptions`` the kernel variants the strategies may choose (``--kernels``) and the
    scratch budget (``--scratch-bytes``).
Outputs
  - ``KernelEstimate``: instructions (MACs x instructions-per-MAC of that family and implementation, plus
    per-element epilogue and per-output-row loop overhead), roofline cycles
    max(MACs / peak, bytes / bandwidth) and operational intensity MACs / byte;
  - ``ChainEstimate``: the same for the fused kernel and for its members run unfused, the recompute
    factor, scratch, an estimate of live registers per stage (spills above 13 on ARMv7-M);
  - ``Decision``: fuse or not, and why.

Instructions per MAC are qemu instruction counts (not cycles) per implementation; the measurements
behind them, and how far today's kernels are from each figure, are data: benchmarks/cost_figures.py
writes benchmarks/data/cost_figures.md (per family and implementation, cortex-m4 and cortex-m55).
The policy is memory first: fusion must lower the arena peak by at least ``MIN_GAIN`` (1%), fit
the scratch budget and cost at most ``max_recompute`` extra MACs (10%); among fitting tile widths
the widest (least recompute) wins.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..strategy import by_name, choose
from ..ops.conv_geom import conv_group, global_pool_group

# instructions per MAC by (geometric family, implementation: strategy.choose's name, Kernel.kind), the
# epilogue's EPILOGUE_INSNS per output apart (benchmarks/data/cost_figures.md); an implementation not
# listed costs as the portable conv of its family (conv2d.ref)
IPM = {
    ("conv", "conv2d.ref"): 7.4, ("dw", "conv2d.ref"): 15.3, ("pw", "conv2d.ref"): 6.6,
    ("conv", "conv2d.arm_dsp"): 2.4, ("pw", "conv2d.arm_dsp"): 1.9, ("dw", "depthwise.arm_dsp"): 4.2,
    ("pw", "matmul.arm_dsp"): 1.9,
    ("dw", "depthwise.dw_plane"): 6.3, ("dw", "depthwise.dw_plane_arm_mve"): 6.3,   # Helium: as the portable plane
    ("dw", "depthwise.dw_rows_arm_dsp"): 2.2,
    ("pw", "conv2d.pixel_buffer"): 5.6, ("conv", "conv2d.pixel_buffer"): 7.9, ("dw", "conv2d.pixel_buffer"): 14.0,
    ("conv", "chain.ref"): 7.6, ("dw", "chain.ref"): 15.5, ("pw", "chain.ref"): 6.8,
    ("conv", "chain.conv_arm_dsp"): 1.9, ("pw", "chain.conv_arm_dsp"): 2.0, ("dw", "chain.dw_arm_dsp"): 6.5,
    # Helium (cortex-m55); the 2 x 2 kernel costed as the quad kernel
    ("conv", "conv2d.arm_mve_quads"): 0.20, ("pw", "conv2d.arm_mve_quads"): 0.15,
    ("conv", "conv2d.arm_mve"): 0.20, ("pw", "conv2d.arm_mve"): 0.15, ("dw", "depthwise.arm_mve"): 2.0,
    ("pw", "matmul.arm_mve"): 0.15,
    ("conv", "chain.conv_arm_mve"): 0.25, ("pw", "chain.conv_arm_mve"): 0.25,
    # 16x8 (benchmarks/data/int16_kernels.md, the 16x8 DS-CNN's layers less EPILOGUE_INSNS per output; the int64
    # requantize of their epilogue costs about 25 more per output, in these figures): arm_dsp_s16 on cortex-m4,
    # arm_mve_s16 on cortex-m55
    ("conv", "conv2d.arm_dsp_s16"): 2.6, ("pw", "conv2d.arm_dsp_s16"): 1.9, ("dw", "depthwise.arm_dsp_s16"): 8.2,
    ("pw", "matmul.arm_dsp_s16"): 2.0,
    ("conv", "conv2d.arm_mve_s16"): 1.4, ("pw", "conv2d.arm_mve_s16"): 1.0, ("dw", "depthwise.arm_mve_s16"): 6.0,
    ("pw", "matmul.arm_mve_s16"): 0.95,
}
EPILOGUE_INSNS = 14           # requantize + clamp + store of one output element
# the in-place kernels the memory plan gives a portable (conv2d.ref) member, by family
# (memory/inplace.py: pixel_buffer for 1x1 and strided convs, the channel plane for depthwise)
INPLACE_KINDS = {"pw": "conv2d.pixel_buffer", "conv": "conv2d.pixel_buffer", "dw": "depthwise.dw_plane"}
ROW_OVERHEAD_INSNS = 12       # per output row per stage of a fused chain (step bookkeeping, ring slot)
SPILL_REGS = 13               # r0-r12 on ARMv7-M/v8-M


@dataclass(frozen=True)
class KernelEstimate:
    macs: int
    bytes_moved: int
    scratch: int
    instructions: float
    cycles: float             # roofline lower bound
    intensity: float          # MACs per byte moved


@dataclass(frozen=True)
class ChainEstimate:
    fused: KernelEstimate
    unfused: KernelEstimate   # members as separate kernels
    recompute: float          # fused MACs / unfused MACs
    live_registers: int       # worst stage
    tile_w: int
    scratch: int
    unfused_inplace: float = 0.0   # instructions of the members unfused, portable ones as their in-place kernels

    @property
    def overhead(self) -> float:
        """Extra instructions of the fused kernel, as a fraction of the unfused members'."""
        return self.fused.instructions / self.unfused.instructions - 1 if self.unfused.instructions else 0.0

    @property
    def overhead_bound(self) -> float:
        """``overhead`` against the cheaper of the unfused estimates (the memory plan runs a portable
        member in place where it can: ``INPLACE_KINDS``)."""
        base = min(self.unfused.instructions, self.unfused_inplace or self.unfused.instructions)
        return self.fused.instructions / base - 1 if base else 0.0


@dataclass(frozen=True)
class Decision:
    fuse: bool
    reason: str


def ipm(fam: str, kind: str) -> float:
    """Instructions per MAC of ``fam`` (conv, dw, pw) in implementation ``kind`` (IPM; the family's
    portable conv when that pair was not measured)."""
    return IPM.get((fam, kind), IPM[fam, "conv2d.ref"])


def chain_kinds(members, options) -> tuple[list[str], list[str]]:
    """(each stage's implementation in the fused kernel, each member's implementation unfused) of a
    chain whose member groups are ``members`` (Functions), under ``options``: strategy.choose's
    answers, the same the lowering takes; a whole-image pool ends a chain as ``chain.pool``)."""
    return (["chain.pool" if global_pool_group(m) is not None and conv_group(m) is None else
             choose(m, options, "chain_stage").kind for m in members],
            [choose(m, options).kind for m in members])


def kernel_estimate(fam: str, macs: int, bytes_moved: int, outputs: int, target, scratch: int = 0,
                    kind: str = "conv2d.ref") -> KernelEstimate:
    """Estimate of one kernel (module doc) of implementation ``kind`` on ``target`` (a Target: its
    roofline peak and bandwidth)."""
    insns = macs * ipm(fam, kind) + outputs * EPILOGUE_INSNS
    cycles = max(macs / target.peak_macs_per_cycle, bytes_moved / target.sram_bytes_per_cycle)
    return KernelEstimate(macs, bytes_moved, scratch, insns, cycles, macs / bytes_moved if bytes_moved else 0.0)


def conv_bytes(geo, weights: bool = True) -> int:
    """Activation bytes read (each input element once per tap row it feeds) and written, + weights."""
    reads = geo.OH * geo.OW * geo.K * geo.KH * geo.KW * geo.Cg if geo.depthwise else \
        geo.OH * geo.OW * geo.KH * geo.KW * geo.C
    w = geo.K * geo.KH * geo.KW * geo.Cg if weights else 0
    return reads + geo.out_bytes + w


def chain_estimate(plan, options, kinds: tuple[list[str], list[str]]) -> ChainEstimate:
    """Fused vs unfused estimate of a ``linebuf.ChainPlan`` under ``options`` (a CompileOptions): the
    fused kernel's stages and the members unfused as ``kinds`` says (``chain_kinds``: the
    implementations the strategies choose), the target's roofline."""
    target = options.target
    stage_kinds, unfused_kinds = kinds
    fused_insns = unf_insns = unf_inplace = 0.0
    fused_bytes = unf_bytes = 0
    regs = 0
    for i, st in enumerate(plan.stages):
        g = st.geo
        fam = g.family
        evals = plan.evaluations[i]
        macs_i = evals * g.KH * g.KW * g.Cg
        fused_insns += macs_i * ipm(fam, stage_kinds[i]) + evals * EPILOGUE_INSNS
        fused_insns += plan.ntiles * g.OH * ROW_OVERHEAD_INSNS
        unf_insns += g.macs * ipm(fam, unfused_kinds[i]) + g.out_bytes * EPILOGUE_INSNS
        best = min(ipm(fam, unfused_kinds[i]), ipm(fam, INPLACE_KINDS[fam])) if unfused_kinds[i] == "conv2d.ref" \
            else ipm(fam, unfused_kinds[i])
        unf_inplace += g.macs * best + g.out_bytes * EPILOGUE_INSNS
        b = conv_bytes(g)
        fused_bytes += b * evals // max(g.out_bytes, 1)
        unf_bytes += b
        # acc, source and weight pointers, 6 loop counters, ring slot/origin, out pointer
        regs = max(regs, 11 + (1 if st.src[0] == "stage" else 0) + len(st.extras) + len(st.param_reads))
    if regs > SPILL_REGS:
        fused_insns *= 1.05
    fused = KernelEstimate(plan.macs, fused_bytes, plan.scratch_bytes, fused_insns,
                           max(plan.macs / target.peak_macs_per_cycle, fused_bytes / target.sram_bytes_per_cycle),
                           plan.macs / fused_bytes if fused_bytes else 0.0)
    unfused = KernelEstimate(plan.macs_unfused, unf_bytes, 0, unf_insns,
                             max(plan.macs_unfused / target.peak_macs_per_cycle,
                                 unf_bytes / target.sram_bytes_per_cycle),
                             plan.macs_unfused / unf_bytes if unf_bytes else 0.0)
    return ChainEstimate(fused, unfused, plan.recompute, regs, plan.tile_w, plan.scratch_bytes, unf_inplace)


MIN_GAIN = 0.01               # a fusion must lower the arena peak by at least 1% (and 64 bytes)


def decide(est: ChainEstimate, peak_before: int, peak_after: int, scratch_budget: int,
           max_recompute: float = 1.10, min_gain: float = MIN_GAIN, max_overhead: float | None = None) -> Decision:
    """Memory-first fusion policy (module doc); ``max_overhead``: the most extra instructions the
    fused kernel may cost (a fraction of its members' unfused estimate), None: no bound."""
    if max_overhead is not None and est.overhead_bound > max_overhead:
        return Decision(False, f"~{est.overhead_bound:+.0%} instructions exceed the bound {max_overhead:+.0%}")
    if est.scratch > scratch_budget:
        return Decision(False, f"working set {est.scratch} B exceeds the scratch budget {scratch_budget} B")
    if est.recompute > max_recompute:
        return Decision(False, f"recompute x{est.recompute:.3f} exceeds x{max_recompute:.2f}")
    if peak_before - peak_after < max(64, min_gain * peak_before):
        return Decision(False, f"arena peak {peak_before} B -> {peak_after} B: gain below "
                               f"{min_gain:.0%} (fusion costs instructions, see the estimate)")
    return Decision(True, f"arena peak {peak_before} B -> {peak_after} B, recompute x{est.recompute:.3f}, "
                          f"~{est.overhead:+.0%} instructions")


# the sparse variant (lower/conv/sparse.py), fitted to cortex-m4 qemu instruction counts of the pruned
# KWS and ResNet-8 (benchmarks/sparsity.py): instructions per nonzero MAC of a pixel computed in a
# block of BLOCK, alone with a flat list, alone checking its taps (a border window); per output (the
# epilogue and store); per pass over a channel's list (shared by the pixels of a block); per checked
# tap. Below SPARSE_MIN_ZEROS zero weights a kernel stays dense whatever the estimate (unpruned
# models keep their kernels); the sparse kernel must save SPARSE_MIN_GAIN of the dense estimate's
# instructions (the dense IPM above are means over layers; a margin against choosing a slower kernel).
SPARSE_IPM = {"blocked": 3.5, "single": 6.0, "border": 8.0}
SPARSE_OUTPUT_INSNS = 27
SPARSE_PASS_INSNS = 20
SPARSE_TAP_INSNS = 12
SPARSE_MIN_ZEROS = 0.40
# the dense SIMD conv / pointwise / FC kernels against which a sparse one is weighed: instructions per MAC
# fall with the reduction length R = KH*KW*Cg (im2col and the epilogue amortised over more MACs), a line
# a + b / R on cortex-m4 (b / R = b x outputs / MACs; refitted by benchmarks/cost_figures.py); IPM's means
# misjudge both ends. DENSE_DW_DSP_IPM: the dense depthwise kernel on arm_dsp (the in-place row kernel)
# besides the epilogue
DENSE_SIMD_IPM = (1.28, 18.0)
DENSE_DW_DSP_IPM = 0.95
SPARSE_MIN_GAIN = 0.20


def sparse_instructions(pixels: tuple[int, int, int], channels: int, nonzeros: float, taps: float,
                        block: int) -> float:
    """Estimated instructions of the sparse kernel: ``pixels`` (blocked, single, border) output
    pixels (``ops.sparse_geom.pixel_kinds`` x batch), ``channels`` output channels, ``nonzeros`` and
    ``taps``: mean nonzero weights and mean kernel taps with a nonzero weight per channel, ``block``
    pixels per block."""
    blocked, single, border = pixels
    per = SPARSE_OUTPUT_INSNS
    return channels * (blocked * (per + SPARSE_PASS_INSNS / block + nonzeros * SPARSE_IPM["blocked"])
                       + single * (per + SPARSE_PASS_INSNS + nonzeros * SPARSE_IPM["single"])
                       + border * (per + SPARSE_PASS_INSNS + nonzeros * SPARSE_IPM["border"] + taps * SPARSE_TAP_INSNS))


def sparse_decision(fam: str, macs: int, outputs: int, zeros: float, dense_kind: str,
                    sparse_insns: float) -> Decision:
    """Whether a kernel of family ``fam`` (conv, dw, pw) with ``macs`` dense MACs and ``outputs``
    output elements, a ``zeros`` fraction of its weights zero, runs the sparse variant
    (``sparse_insns``: ``sparse_instructions``) instead of the dense implementation ``dense_kind``
    (strategy.choose's, e.g. conv2d.arm_dsp): only with at least SPARSE_MIN_ZEROS zeros and
    SPARSE_MIN_GAIN fewer estimated instructions. The dense SIMD conv/pw kernels are costed by
    DENSE_SIMD_IPM, depthwise by DENSE_DW_DSP_IPM."""
    per_mac = ipm(fam, dense_kind)
    if by_name(dense_kind).isa in ("arm_dsp", "arm_mve"):
        per_mac = DENSE_DW_DSP_IPM if fam == "dw" else DENSE_SIMD_IPM[0] + DENSE_SIMD_IPM[1] * outputs / macs
    dense = macs * per_mac + outputs * EPILOGUE_INSNS
    why = f"{zeros:.0%} zero weights, ~{sparse_insns:.0f} vs {dense:.0f} instructions ({dense_kind})"
    if zeros < SPARSE_MIN_ZEROS:
        return Decision(False, f"{why}: below {SPARSE_MIN_ZEROS:.0%} zeros")
    return Decision(sparse_insns <= (1 - SPARSE_MIN_GAIN) * dense, why)


# the SMLAD pair layout on arm_dsp (lower/conv/sparse_dsp.py, ops/sparse_pairs.py), fitted (non-negative least
# squares on relative error, rms 15%) to the per-kernel cortex-m4 qemu counts of KWS and ResNet-8 at 50/75/90%
# and 2:4 with --sparse on (benchmarks/sparsity.py models): per widened column element of a pixel (input
# channels a multiple of 4: SXTAB16 four at a time, else one by one), per cross-pair word of a pixel,
# per kept pair per block of PAIR_BLOCK pixels (the inner loop: LDRD, 4 loads, 4 SMLAD), per output
PAIR_COL_INSNS = {"wide": 2.0, "narrow": 14.5}
PAIR_CROSS_INSNS, PAIR_BLOCK_INSNS, PAIR_OUTPUT_INSNS = 5.0, 10.0, 35.0
PAIR_BLOCK = 4


def sparse_pair_instructions(pixels: int, reduction: int, channels: int, pairs: int, cross: int,
                             wide: bool) -> float:
    """Estimated instructions of the pair-layout sparse kernel: ``pixels`` output pixels (rows of a
    fully connected layer, x batch), ``reduction`` taps per output, ``channels`` output channels,
    ``pairs`` kept weight pairs over all channels and ``cross`` cross-pair words per column
    (``ops.sparse_pairs.pair_cover``); ``wide``: input channels a multiple of 4."""
    blocks = -(-pixels // PAIR_BLOCK)
    return (pixels * (reduction * PAIR_COL_INSNS["wide" if wide else "narrow"] + cross * PAIR_CROSS_INSNS)
            + blocks * pairs * PAIR_BLOCK_INSNS + pixels * channels * PAIR_OUTPUT_INSNS)
