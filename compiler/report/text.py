"""Text tables of ``tinyfuse report`` (through ``tabulate``: columns sized to their content, long
cells wrapped or shortened inside their column instead of pushing the other columns)."""
from __future__ import annotations

from tabulate import tabulate

from ..memory import format_plan
from ..memory.state import copied_per_frame

LAYER_WIDTH = 38          # characters of the layers column before a cell wraps
OPT_IN_REASONS = ("needs ", "--skip-zero-activations is off", "dense weights")
FUSED_KEYS = ("kernel", "strategy", "stages", "tile_w", "ntiles", "rows", "recompute", "scratch", "decision")


def kernel_table(rows: list[dict], measured: bool) -> str:
    """Per kernel: index, name, source layers (one a line, long names shortened in the middle),
    implementation (``Kernel.kind``; a fused chain's stages), MACs, flash, RAM, MAC/B, estimated and
    (``measured``) qemu instructions, in-place rule."""
    head = ["#", "kernel", "layers", "implementation", "MACs", "flash B", "RAM B", "MAC/B", "est. instr"]
    traffic = measured and any(r.get("measured_bytes") is not None for r in rows)
    if measured:
        head += ["instr (qemu)", "instr/MAC"] + (["MAC/B (qemu)", "cycles*"] if traffic else [])
    head.append("in place")
    body = []
    for r in rows:
        layers = "\n".join(map(shorten, r["layers"])) or "(compiler-inserted)"   # e.g. a layout transpose
        impl = "\n".join([r["kind"], *(f"  {k}" for k in r.get("stage_kinds", []))])
        line = [r["index"], r["kernel"], layers, impl, r["macs"], r["flash"], r["ram"],
                f"{r['intensity']:.2f}", r["instructions"]]
        if measured:
            n = r["measured"]
            line += [n if n is not None else "-", f"{n / r['macs']:.2f}" if n is not None and r["macs"] else "-"]
            if traffic:
                mi, cyc = r.get("measured_intensity"), r.get("cycles_estimate")
                line += [f"{mi:.2f}" if mi is not None else "-", cyc if cyc is not None else "-"]
        line.append(r["inplace"] or "-")
        body.append(line)
    widths = [None, None, LAYER_WIDTH] + [None] * (len(head) - 4) + [34]
    return tabulate(body, head, tablefmt="grid", maxcolwidths=widths, disable_numparse=True,
                    colalign=_align(head, {"#", "MACs", "flash B", "RAM B", "MAC/B", "est. instr", "instr (qemu)",
                                           "instr/MAC", "MAC/B (qemu)", "cycles*"}))


def declined_lines(rows: list[dict]) -> str:
    """Why each kernel did not get the implementations its strategy lists before the chosen one: one
    line per declined implementation (left out: those the target or --kernels lacks, and the opt-in
    ones not asked for: --skip-zero-activations, sparse weights the cost model did not choose)."""
    out = []
    for r in rows:
        for name, reason in r.get("declined", []):
            if not reason.startswith(OPT_IN_REASONS):
                out.append(f"{r['kernel']}: {name} declined: {reason}")
    return "\n".join(out)


def totals_table(rows: list[dict], s: dict) -> str:
    """The model's totals: MACs, flash (weights; code when measured), RAM (arena and its bounds)."""
    body = [["kernels", s["kernel_count"]], ["MACs", s["macs"]],
            ["weights (flash)", f"{s['weights_bytes']} B"],
            ["arena (RAM: activations + scratch)" if s.get("io_bytes") else "arena (RAM: I/O + activations + scratch)",
             f"{s['arena_bytes']} B"],
            *([["caller-owned I/O buffers (RAM, --io-buffers caller)", f"{s['io_bytes']} B"]] if s.get("io_bytes") else []),
            *([["state (RAM, persistent between frames)", f"{s['state_bytes']} B"]] if s.get("state_bytes") else []),
            ["live-bytes lower bound", f"{s['lower_bound']} B"],
            ["without in-place reuse", f"{s['bound_no_inplace']} B" if s["bound_no_inplace"] is not None else "-"],
            ["naive (no reuse)", f"{s['naive_bytes']} B"],
            ["estimated instructions", sum(r["instructions"] for r in rows)]]
    if s.get("instructions") is not None:
        body += [[f"instructions (qemu {s['board']})", s["instructions"]],
                 ["code (flash)", f"{s['flash_code']} B"], ["stack", f"{s['ram_stack']} B"],
                 ["RAM total (arena + data/bss + stack)", f"{s['ram_total']} B"]]
    return tabulate(body, tablefmt="simple", disable_numparse=True, colalign=("left", "right"))


def fused_table(rows: list[dict]) -> str:
    """The poly-fused kernels' line-buffer/tile decisions, or one line saying there are none."""
    if not rows:
        return "none (no fusion lowers the arena peak, or --disable-pass poly_fuse)"
    body = [[_fmt(r.get(k, "")) for k in FUSED_KEYS] for r in rows]
    head = ["kernel", "strategy", "stages", "tile_w", "tiles", "ring rows", "recompute", "scratch", "decision"]
    return tabulate(body, head, tablefmt="simple", maxcolwidths=[34, None, None, None, None, 16, None, None, 40],
                    disable_numparse=True)


def buffer_table(rows: list[dict]) -> str:
    """The memory plan: buffer, kind, size, offset, first and last kernel ("input" / "end" for a
    tensor live from the start / to the end of the run), in-place cluster."""
    body = [[r["name"], r["kind"], r["size"], r["offset"], "input" if r["first"] < 0 else r["first"],
             "end" if r["live_to_end"] else r["last"], r["cluster"] or "-"] for r in rows]
    head = ["buffer", "kind", "size B", "offset", "first", "last", "cluster"]
    return tabulate(body, head, tablefmt="simple", disable_numparse=True,
                    colalign=_align(head, {"size B", "offset", "first", "last"}))


def shorten(name: str, width: int = LAYER_WIDTH) -> str:
    """``name`` cut in the middle to ``width`` characters (head ~ tail), so one layer is one line; the
    JSON report keeps the full names."""
    if len(name) <= width:
        return name
    head = (width - 1) // 2
    return name[:head] + "~" + name[len(name) - (width - 1 - head):]


def _align(head: list[str], right: set[str]) -> tuple[str, ...]:
    return tuple("right" if h in right else "left" for h in head)


def _fmt(v) -> str:
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def compile_report_text(result) -> str:
    """``compile --report``: the fused groups (anchor + epilogue) and the memory plan table."""
    lines = [f"model {result.name}: {len(result.steps)} kernels, {result.macs} MACs, "
             f"arena {result.arena_bytes} B (naive {result.naive_bytes} B), weights {result.weights_bytes} B"
             + (f", state {result.state_bytes} B (persistent: " + ", ".join(
                 f"{t.name} {list(t.shape)} {t.dtype} at {t.offset}" + (f", ring buffer of {t.capacity} B"
                                                                       if t.ring_step else "")
                for t in result.states) + f"); state bytes copied per frame: {_copied(result)}"
                if result.states else ""), "",
             f"{'kernel':<40} {'ops (anchor -> epilogue)':<48} {'MACs':>10}"]
    for s in result.steps:
        lines.append(f"{s.kernel.name:<40} {' -> '.join(s.kernel.ops):<48} {s.kernel.macs:>10}")
    lines += ["", "memory plan (buffer t<i>; first/last = kernel index, -1 = model input):",
              format_plan(result.plan, result.buffers)]
    return "\n".join(lines)


def _copied(result) -> str:
    c = copied_per_frame(result.states, result.steps)
    return f"{c['total']:.0f} (" + ", ".join(f"{k} {v:.0f}" for k, v in c.items() if k != "total" and v) + ")"
