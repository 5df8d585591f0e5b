"""Estimated cycles of Cortex-M cores from an executed instruction mix: an ESTIMATE, not a measurement.

The mix is the exact histogram of executed instruction classes counted by the qemu plugin
(``runtime_c/tools/tc_classes.h`` names the classes; ``bench --measure``). The cycles are
``sum(count[class] * CYCLES[core][class])``, with each core's per-class timing from its Technical
Reference Manual (TRM) or, where Arm publishes no timing table, the stated assumption of ``NOTES``.
What the model cannot see: wait states of the memories (flash at 0 wait states, i.e. an ART/cache
hit, and SRAM at 0), bus contention, the actual pipeline refill P of each taken branch (1..3 on
M3/M4: the midpoint 2 is used), operand-dependent divides (midpoint of 2..12) and, on M7/M55,
dual issue and beat overlap beyond the average figures below.

Classes (``tc_classes.h``): ``alu`` data processing, ``ld``/``st`` single loads/stores, ``ldst_pipe``
a single load/store right after another (M3/M4: "neighbouring load and store single instructions can
pipeline their address and data phases", 1 cycle), ``ldm``/``stm`` (LDM, STM, PUSH, LDRD, STRD) with
``ldm_words``/``stm_words`` their transferred words (the N of "1+N"), ``ldm_pc`` a POP/LDM that loads
PC (a return), ``br`` unconditional branches (B, BL, BX, BLX, TBB, LDR PC), ``bcond`` conditional
branches (B<c>, CBZ) and ``bcond_taken`` those that were taken (the plugin sees the next PC),
``mul`` MUL, ``mac`` MLA/MLS, ``mull`` SMULL/UMULL, ``macl`` SMLAL/UMLAL, ``dsp`` the DSP extension
(SMLAD, SMLABB, SXTB16, QADD, SSAT...), ``div`` SDIV/UDIV, ``fp`` FPU data processing and moves,
``fp_mac`` VMLA/VFMA, ``fp_div`` VDIV/VSQRT, ``fp_ldst`` VLDR/VSTR/VLDM/VPUSH with ``fp_ldst_words``,
``mve`` Helium data processing, ``mve_ldst`` Helium loads/stores, ``lob`` low-overhead branches
(LE, DLS, WLS), ``other`` hints, IT, barriers, MSR/MRS.
"""
from __future__ import annotations

CLASSES = ("alu", "ld", "st", "ldst_pipe", "ldm", "ldm_pc", "ldm_words", "stm", "stm_words",
           "br", "bcond", "bcond_taken", "mul", "mac", "mull", "macl", "dsp", "div",
           "fp", "fp_mac", "fp_div", "fp_ldst", "fp_ldst_words", "mve", "mve_ldst", "lob", "other")

P = 2   # pipeline refill of a taken branch on M0/M3/M4/M33: "P ... ranges from 1 to 3" (M4 TRM 3.3.1); midpoint

# Cortex-M4 TRM r0p1 (ARM DDI 0439B; Arm 100166_0001_00) 3.3.1 Table 3-1 "Processor instruction set summary"
# (cycles with zero wait states) and, for the
# FPU, 7.2.3 Table 7-1 "FPU instruction set":
_M4 = {
    "alu": 1,            # ADD/SUB/MOV/logical/shift/extend: 1
    "ld": 2, "st": 2,    # LDR/STR (any offset) 2
    "ldst_pipe": 1,      # footnote: neighbouring load/store single instructions pipeline -> 1
    "ldm": 1, "ldm_words": 1, "stm": 1, "stm_words": 1,    # LDM/STM/PUSH/POP 1+N, LDRD/STRD 1+2
    "ldm_pc": 1 + P,     # POP {..., PC}, LDM loading PC: 1+N+P
    "br": 1 + P,         # B, BL, BX, BLX 1+P; TBB/TBH 2+P (counted 1+P)
    "bcond": 1, "bcond_taken": P,   # B<c>: 1 not taken, 1+P taken; CBZ/CBNZ 1 or 1+P
    "mul": 1, "mac": 1, "mull": 1, "macl": 1,               # MUL, MLA, MLS, SMULL, UMULL, SMLAL, UMLAL: 1
    "dsp": 1,            # SMLAD, SMUAD, SMLAxy, SXTB16, QADD, SSAT, SEL, parallel add/sub: 1
    "div": 7,            # SDIV/UDIV 2-12 (early termination on the operands): midpoint
    "fp": 1,             # VADD/VSUB/VMUL/VNMUL/VMOV/VCVT/VCMP 1
    "fp_mac": 3,         # VMLA/VMLS/VNMLA/VFMA/VFMS/VFNMA 3
    "fp_div": 14,        # VDIV, VSQRT 14
    "fp_ldst": 1, "fp_ldst_words": 1,   # VLDR.32 2, VLDR.64 3, VLDM/VSTM/VPUSH/VPOP 1+N
    "mve": 1, "mve_ldst": 1, "lob": 1,  # not in the ISA: never executed on M4
    "other": 1,          # IT (folded: 0-1), NOP, barriers (counted 1)
}

# Cortex-M3 TRM r2p1 (ARM DDI 0337I) 3.3 Table 3-1 "Cortex-M3 instruction set summary": as the M4 but
# MLA/MLS 2, SMULL/UMULL 3-5, SMLAL/UMLAL 4-7 (midpoints), no DSP and no FPU.
_M3 = {**_M4, "mac": 2, "mull": 4, "macl": 6}

# Cortex-M0 TRM r0p0 (ARM DDI 0432C) 3.3 Table 3-1 "Cortex-M0 instruction summary" (Armv6-M):
# LDR/STR 2 (no pipelining of neighbours), LDM/STM/PUSH 1+N, POP {PC} 4+N, B taken 3, B<c> 1 or 3,
# BL 4, BX/BLX 3, MULS 1 with the fast multiplier (32 with the small iterative one).
_M0 = {**_M4, "ld": 2, "st": 2, "ldst_pipe": 2, "ldm_pc": 4, "br": 3, "bcond_taken": 2,
       "mul": 1, "mac": 1, "mull": 1, "macl": 1}

# Cortex-M7 TRM r1p2 (ARM DDI 0489F) publishes no per-instruction timings: 6-stage dual-issue
# superscalar pipeline (TRM 1.2), branch prediction (BTAC), 64-bit AXI/TCM loads. Assumed: two ALU
# or MAC instructions can issue per cycle (0.5 each), one load/store per cycle (two 32-bit words of an
# LDM per cycle), predicted branches 1 with no refill, FPv5 VFMA pipelined (1 per cycle).
_M7 = {**_M4, "alu": 0.5, "ld": 1, "st": 1, "ldst_pipe": 1, "ldm_words": 0.5, "stm_words": 0.5,
       "ldm_pc": 2, "br": 1, "bcond": 1, "bcond_taken": 0, "mul": 0.5, "mac": 1, "dsp": 0.5,
       "fp": 0.5, "fp_mac": 1, "fp_ldst_words": 0.5, "other": 0.5}

# Cortex-M33 TRM r0p4 (Arm 100230) publishes no per-instruction timings; the M33 runs the same Armv8-M
# Mainline + DSP + FPv5-SP Thumb-2 code on a 3-stage pipeline: the M4 table is assumed.
_M33 = dict(_M4)

# Cortex-M55: "Arm Cortex-M55 Processor Software Optimization Guide" (scalar pipeline similar to the
# M33; Helium executes a 128-bit vector instruction in 4 beats, 2 beats per cycle, so 2 cycles when
# it does not overlap with its neighbour; LE of a low-overhead loop 0 once the loop is cached).
# Assumed: scalar as the M4 table, every Helium instruction 2 cycles (no overlap: an upper figure).
_M55 = {**_M4, "mve": 2, "mve_ldst": 2, "lob": 0, "fp_mac": 1}

CYCLES: dict[str, dict[str, float]] = {"cortex-m0": _M0, "cortex-m3": _M3, "cortex-m4": _M4,
                                        "cortex-m7": _M7, "cortex-m33": _M33, "cortex-m55": _M55}
NOTES = {
    "cortex-m0": "Cortex-M0 TRM r0p0 (DDI 0432C) Table 3-1; fast multiplier",
    "cortex-m3": "Cortex-M3 TRM r2p1 (DDI 0337I) Table 3-1; midpoints of ranges, P=2",
    "cortex-m4": "Cortex-M4 TRM r0p1 (DDI 0439B) Tables 3-1 and 7-1; midpoints of ranges, P=2",
    "cortex-m7": "no TRM timing table: dual-issue assumptions (see harness/cycles.py)",
    "cortex-m33": "no TRM timing table: the Cortex-M4 table assumed",
    "cortex-m55": "Software Optimization Guide: scalar as Cortex-M4, Helium 2 cycles per instruction, LE 0",
}
ESTIMATE = "estimate from the executed instruction mix and per-class TRM timings; not a measurement"


def estimate_cycles(mix: dict[str, int], core: str) -> int:
    """Estimated cycles of an instruction mix on ``core`` (a key of ``CYCLES``).

    ``mix``: class name (``CLASSES``) -> executed count (``*_words``: transferred words;
    ``bcond_taken``: taken conditional branches). Returns sum(count * cycles per class), rounded.
    KeyError for an unknown class or core."""
    table = CYCLES[core]
    return round(sum(n * table[c] for c, n in mix.items()))


def cycles_figures(total_mix: dict[str, int], kernel_mix: dict[str, dict[str, int]], core: str) -> dict:
    """``bench``'s ``cycles_estimate``: ``core`` (the target's), its ``total`` and ``per_kernel``
    cycles, ``by_core`` (this mix under every table: what the same instructions would take), the
    ``source`` row of the table and ``note`` (the word estimate). A core without a table (rv32imac)
    gives None totals."""
    known = core in CYCLES
    return {"core": core, "estimate": True, "note": ESTIMATE, "source": NOTES.get(core),
            "total": estimate_cycles(total_mix, core) if known else None,
            "per_kernel": {k: estimate_cycles(m, core) for k, m in kernel_mix.items()} if known else {},
            "by_core": {c: estimate_cycles(total_mix, c) for c in CYCLES}}


def clock_mhz(text: str) -> float:
    """argparse type of ``bench --clock-mhz``: a finite number of MHz > 0 (ValueError otherwise)."""
    v = float(text)
    if not 0 < v < float("inf"):
        raise ValueError(text)
    return v


def time_estimate(f: dict, clock_mhz: float) -> dict:
    """``bench --clock-mhz``: ESTIMATED milliseconds of one inference at ``clock_mhz`` MHz, ms = cycles /
    (MHz x 1000), for the whole call (``total_ms``) and per kernel (``per_kernel_ms``). The cycles are
    ``f``'s ``cycles_estimate`` (bench --measure: the instruction mix under the core's TRM timings,
    ``basis`` 'cycles_estimate'), else the executed instructions taken as one cycle each (``basis``
    'instructions', rougher). Memory wait states, caches and interrupts are not in either."""
    cyc = f.get("cycles_estimate") or {}
    if cyc.get("total") is not None:
        basis, total, per = "cycles_estimate", cyc["total"], cyc["per_kernel"]
        note = f"{ESTIMATE} ({cyc.get('source')})"
    else:
        basis, total = "instructions", f["instructions"]
        per = {k["name"]: k["instructions"] for k in f["kernels"] if k["instructions"] is not None}
        note = "estimate from the executed instructions taken as one cycle each; not a measurement"
    scale = 1.0 / (clock_mhz * 1e3)
    return {"clock_mhz": clock_mhz, "basis": basis, "estimate": True, "note": note, "total_ms": total * scale,
            "per_kernel_ms": {k: v * scale for k, v in per.items()}}


def time_text(t: dict) -> list[str]:
    """The text of :func:`time_estimate`: the total and a per-kernel table, labelled as estimates."""
    lines = ["", f"ESTIMATED time at {t['clock_mhz']:g} MHz: {t['total_ms']:.3f} ms per inference ({t['note']}; "
             "flash wait states, caches and interrupts not included)",
             f"{'kernel':<40} {'est. ms':>10}"]
    lines += [f"{k:<40} {ms:>10.4f}" for k, ms in t["per_kernel_ms"].items()]
    return lines


__all__ = ["CLASSES", "CYCLES", "ESTIMATE", "NOTES", "P", "clock_mhz", "cycles_figures", "estimate_cycles", "time_estimate",
           "time_text"]
