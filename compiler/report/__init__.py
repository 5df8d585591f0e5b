"""``tinyfuse report``: an X-CUBE-AI-style analysis of a compiled model.

    text, files = report(result, target)                    # tables; files: report.json + plots
    text, files = report(result, target, measured=figures)  # + qemu instructions per kernel

``measured`` is ``tinyfuse.harness.bench.bench_target``'s figures. The tables (``report.text``)
come through tabulate, the plots (``report.plots``) through matplotlib, the optional extra
``tinyfuse[plots]``: without it the text says so in one line and only report.json is written.
Figures and their definitions: ``tinyfuse.report.analysis``.
"""
from __future__ import annotations

import json

from . import plots
from .analysis import buffer_rows, fused_rows, kernel_rows, summary
from .text import buffer_table, declined_lines, fused_table, kernel_table, totals_table


def report_data(result, target, measured: dict | None = None) -> dict:
    """Everything the report shows, as one JSON-serialisable dict: summary figures, ``kernels``,
    ``fused`` (poly-fused decisions), ``buffers`` (the memory plan)."""
    krows = kernel_rows(result, measured)
    return {**summary(result, target, measured), "measured": bool(measured), "kernels": krows,
            "fused": fused_rows(result), "buffers": buffer_rows(result)}


def report_text(data: dict) -> str:
    """The report's tables as text."""
    peak, bw = data["peak_macs_per_cycle"], data["sram_bytes_per_cycle"]
    lines = [f"model {data['model']} for {data['target']}: {data['kernel_count']} kernels, {data['macs']} MACs, "
             f"weights {data['weights_bytes']} B, arena {data['arena_bytes']} B", "",
             totals_table(data["kernels"], data), "",
             f"kernels (roofline: peak {peak:g} MACs/cycle, {bw:g} SRAM bytes/cycle, ridge {peak / bw:.2f} MACs/byte;"
             " flash = constants, RAM = live arena bytes during the kernel):",
             kernel_table(data["kernels"], data["measured"]), *_measured_note(data["kernels"]), "",
             *_declined(data["kernels"]),
             "fused groups (poly_fuse):", fused_table(data["fused"]), "",
             "memory plan (t<i>: tensors, s<i>: kernel scratch; first/last = kernel index; "
             "a cluster shares an in-place offset):", buffer_table(data["buffers"]),
             "live bytes per kernel: " + " ".join(str(r["ram"]) for r in data["kernels"])]
    return "\n".join(lines)


def _declined(rows: list[dict]) -> list[str]:
    text = declined_lines(rows)
    return ["implementations declined (the strategy's list before the chosen one; tinyfuse/strategy):", text, ""] \
        if text else []


def _measured_note(rows: list[dict]) -> list[str]:
    if not any(r.get("measured_bytes") is not None for r in rows):
        return []
    return ["MAC/B (qemu): MACs per byte the kernel loaded and stored under qemu (SRAM incl. stack, flash); "
            "cycles*: an estimate from the executed instruction mix and the core's TRM timings, not a measurement"]


def report_files(plot_format: str | None = "svg") -> list[str]:
    """The names ``report`` may give its files (``-o DIR`` claims them before the report runs)."""
    return ["report.json", "network_report.txt", *((f"memory_plan.{plot_format}", f"roofline.{plot_format}") if plot_format else ())]


def report(result, target, measured: dict | None = None,
           plot_format: str | None = "svg") -> tuple[str, dict[str, bytes]]:
    """(text, files) of ``tinyfuse report``: files are report.json, network_report.txt (the text
    tables, as ``stedgeai analyze`` writes its network report beside its JSON), memory_plan.<fmt> and
    roofline.<fmt> (``plot_format`` svg or png; None: no plots). Without matplotlib the plots are
    left out and the text's last line says how to get them."""
    data = report_data(result, target, measured)
    text = report_text(data)
    files = {"report.json": (json.dumps(data, indent=1, default=str) + "\n").encode()}
    if plot_format and plots.available():
        files.update(plots.plot_files(data, data["kernels"], data["buffers"], plot_format))
    elif plot_format:
        text += "\n" + plots.PLOTS_HINT
    files["network_report.txt"] = (text + "\n").encode()
    return text, files


__all__ = ["report", "report_data", "report_files", "report_text"]
