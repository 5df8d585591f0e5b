"""The text of ``bench --measure``'s extra figures: traffic, cycle and energy estimates per kernel."""
from __future__ import annotations


def _kb(n: int) -> str:
    return f"{n / 1024:.1f}"


def measured_text(f: dict) -> str:
    """Totals and a per-kernel table of ``bench_target(..., measure=True)``'s figures: SRAM read/write
    and flash read KiB, the estimated cycles of the target's core and cycles/MAC."""
    t, cyc = f["traffic"], f.get("cycles_estimate")
    lines = ["", f"data traffic (measured): SRAM read {_kb(t['sram_read_bytes'])} KiB, write "
             f"{_kb(t['sram_write_bytes'])} KiB (stack {_kb(t['stack_read_bytes'])} / {_kb(t['stack_write_bytes'])}), "
             f"flash read {_kb(t['flash_read_bytes'])} KiB"]
    if cyc and cyc["total"] is not None:
        per_mac = f", {cyc['total'] / f['macs']:.2f} cycles/MAC" if f["macs"] else ""
        lines.append(f"cycles ({cyc['note']}; {cyc['source']}): {cyc['total']}{per_mac}; same mix by core: "
                     + ", ".join(f"{c.removeprefix('cortex-')} {n}" for c, n in cyc["by_core"].items()))
    if f.get("energy_estimate_uj") is not None:
        lines.append(f"energy {f['energy_estimate_uj']:.1f} µJ per inference ({f['energy_estimate_note']})")
    lines += ["", f"{'kernel':<40} {'SRAM rd KiB':>11} {'SRAM wr KiB':>11} {'flash KiB':>10} {'cycles*':>10}"]
    per_cyc = cyc["per_kernel"] if cyc else {}
    for k in f["kernels"]:
        kt = t["per_kernel"].get(k["name"])
        if kt is None:
            continue
        c = per_cyc.get(k["name"], "-")
        lines.append(f"{k['name']:<40} {_kb(kt['sram_read_bytes']):>11} {_kb(kt['sram_write_bytes']):>11} "
                     f"{_kb(kt['flash_read_bytes']):>10} {c:>10}")
    lines.append("* estimated cycles")
    return "\n".join(lines)



def bench_text(f: dict) -> str:
    """The bench figures as a short report with a per-kernel table."""
    from .realtime import realtime_text
    ipm = f"{f['instructions_per_mac']:.2f}" if f["instructions_per_mac"] is not None else "-"
    lib = f["instructions"] - f["instructions_model_code"]
    per = " per frame" if f.get("state_bytes") else ""      # a stateful model: one frame after reset
    state = f" + state {f['state_bytes']} B" if f.get("state_bytes") else ""
    state += f" + caller I/O buffers {f['io_bytes']} B" if f.get("io_bytes") else ""
    lines = [f"model {f['model']} on {f['target']} (qemu {f['board']}): {f['instructions']} instructions{per} "
             f"(model code {f['instructions_model_code']}, library {lib}), {f['macs']} MACs, {ipm} instructions/MAC",
             f"flash: code {f['flash_code']} B (model {f['flash_code_model']} + library {f['flash_code_lib']}), "
             f"constants {f['flash_const']} B",
             f"RAM: arena {f['arena_bytes']} B{state} + data/bss {f['ram_data']} B + stack {f['ram_stack']} B "
             f"= {f['ram_total']} B", "",
             f"{'kernel':<40} {'MACs':>10} {'instructions':>13} {'instr/MAC':>10}"]
    for k in f["kernels"]:
        n = k["instructions"]
        per = f"{n / k['macs']:.2f}" if n is not None and k["macs"] else "-"
        lines.append(f"{k['name']:<40} {k['macs']:>10} {n if n is not None else '-':>13} {per:>10}")
    return "\n".join(lines + realtime_text(f))


__all__ = ["bench_text", "measured_text"]
