"""Plots of ``tinyfuse report`` through matplotlib (the optional extra ``tinyfuse[plots]``):

* ``memory_plan.<fmt>``: x = kernel (execution order, named by its first source layer), y = arena
  offset; one rectangle per buffer over its lifetime, coloured by kind (model input, activation,
  model output, kernel scratch), hatched when it shares an in-place cluster; the live bytes per
  kernel as a step line.
* ``roofline.<fmt>``: log-log roofline of the target (Williams, Waterman, Patterson, CACM 52(4),
  2009): attainable MACs/cycle = min(peak, intensity x SRAM bytes/cycle) with the Target's
  ``peak_macs_per_cycle`` and ``sram_bytes_per_cycle``; one labelled point per kernel at
  (MACs per byte moved, MACs per instruction), measured under qemu when available (one
  instruction taken as one cycle), else the cost model's estimate.

SVG text stays text (``svg.fonttype = none``) so labels and legends can be searched, and the
output carries no date, so the same report gives the same bytes.
"""
from __future__ import annotations

import io
import math

PLOTS_HINT = "plots need matplotlib: pip install tinyfuse[plots]"
KIND_COLORS = {"input": "#76b7b2", "activation": "#4e79a7", "output": "#59a14f", "scratch": "#bab0ac"}
KIND_LABELS = {"input": "model input", "activation": "activation", "output": "model output",
               "scratch": "kernel scratch"}
POINT_STYLES = {"layer": ("#555555", "o", "layer kernel"), "inplace": ("#e15759", "s", "in-place kernel"),
                "chain": ("#f28e2b", "D", "poly-fused chain")}


def available() -> bool:
    """Whether matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def short_label(row: dict, width: int = 22) -> str:
    """``k<i> <layer>``: the kernel index and the tail of its first source layer's name."""
    name = row["layers"][0].split(";")[-1] if row["layers"] else row["kernel"].split("_", 1)[-1]
    tail = "/".join(name.split("/")[-2:])
    return f"k{row['index']} " + (tail if len(tail) <= width else tail[: width - 1] + "~")


def point_kind(row: dict) -> str:
    """layer, inplace or chain: what the roofline colours a kernel by (from the memory plan's
    in-place choice, not the variant name, which on SIMD targets says arm_dsp / arm_mve)."""
    return "chain" if row["poly_fused"] else "inplace" if row["inplace"] else "layer"


def plot_files(summary: dict, krows: list[dict], brows: list[dict], fmt: str = "svg") -> dict[str, bytes]:
    """{"memory_plan.<fmt>": ..., "roofline.<fmt>": ...}; ``fmt`` is svg or png."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    figures = {"memory_plan": memory_plan_figure(summary, krows, brows), "roofline": roofline_figure(summary, krows)}
    return {f"{name}.{fmt}": _render(fig, fmt) for name, fig in figures.items()}


def _render(fig, fmt: str) -> bytes:
    import matplotlib
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "tinyfuse"}):
        fig.savefig(buf, format=fmt, metadata={"Date": None} if fmt == "svg" else None, dpi=110,
                    bbox_inches="tight")
    return buf.getvalue()


def memory_plan_figure(summary: dict, krows: list[dict], brows: list[dict]):
    """Buffers as rectangles (kernel span x arena bytes), the live bytes per kernel as a step line."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch, Rectangle
    n = max(len(krows), 1)
    arena = max(summary["arena_bytes"], 1)
    fig = Figure(figsize=(min(6 + 0.35 * n, 24), 6))
    ax = fig.add_subplot()
    for b in brows:
        if not b["size"]:
            continue
        x0, x1 = max(b["first"], -1), b["last"] + 1
        ax.add_patch(Rectangle((x0, b["offset"]), x1 - x0, b["size"], facecolor=KIND_COLORS[b["kind"]],
                               edgecolor="#222222", linewidth=0.5, alpha=0.85, hatch="//" if b["cluster"] else None))
        if b["size"] / arena > 0.035 and x1 - x0 >= 1:
            ax.text(x0 + 0.08, b["offset"] + b["size"] / 2, f"{b['name']} {b['size']} B", va="center", fontsize=7)
    live = [r["ram"] for r in krows]
    ax.step(range(len(live) + 1), live + live[-1:], where="post", color="#d62728", linewidth=1.2, linestyle="--")
    ax.axhline(summary["lower_bound"], color="#999999", linewidth=0.8, linestyle=":")
    ax.set_xlim(-1, n)
    ax.set_ylim(0, arena * 1.04)
    ax.set_xticks([-0.5] + [i + 0.5 for i in range(len(krows))])
    step = max(1, len(krows) // 48)
    ax.set_xticklabels(["input"] + [short_label(r) if r["index"] % step == 0 else "" for r in krows],
                       rotation=60, ha="right", fontsize=7)
    ax.set_xlabel("kernel (execution order)")
    ax.set_ylabel("arena offset (bytes)")
    ax.set_title(f"{summary['model']} on {summary['target']}: arena {summary['arena_bytes']} B, "
                 f"lower bound {summary['lower_bound']} B", fontsize=10)
    handles = [Patch(facecolor=KIND_COLORS[k], edgecolor="#222222", label=KIND_LABELS[k]) for k in KIND_COLORS]
    handles.append(Patch(facecolor="white", edgecolor="#222222", hatch="//", label="in-place cluster (shared offset)"))
    from matplotlib.lines import Line2D
    handles += [Line2D([], [], color="#d62728", linestyle="--", label="live bytes per kernel"),
                Line2D([], [], color="#999999", linestyle=":", label="live-bytes lower bound")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="buffers")
    return fig


def roofline_figure(summary: dict, krows: list[dict]):
    """Log-log roofline with one labelled point per kernel (see the module docstring)."""
    from matplotlib.figure import Figure
    peak, bw = summary["peak_macs_per_cycle"], summary["sram_bytes_per_cycle"]
    measured = bool(krows) and all(r["measured"] is not None for r in krows)
    traffic = measured and all(r.get("measured_intensity") is not None for r in krows)
    cycles = traffic and all(r.get("cycles_estimate") for r in krows if r["macs"])
    pts = [(r, r["measured_intensity"] if traffic else r["intensity"],
            r["macs"] / (r["cycles_estimate"] if cycles else r["measured"] if measured else max(r["instructions"], 1)))
           for r in krows if r["macs"] and (r["measured_intensity"] if traffic else r["intensity"]) > 0]
    ridge = peak / bw
    xs = [x for _, x, _ in pts] + [ridge]
    ys = [y for _, _, y in pts] + [peak]
    lo_x, hi_x = 10 ** math.floor(math.log10(min(xs) / 2)), 10 ** math.ceil(math.log10(max(xs) * 2))
    lo_y, hi_y = 10 ** math.floor(math.log10(min(ys) / 2)), 10 ** math.ceil(math.log10(max(ys) * 2))
    fig = Figure(figsize=(11, 6))
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.plot([lo_x, ridge, hi_x], [lo_x * bw, peak, peak], color="#c00000", linewidth=2,
            label=f"roof: min({peak:g} MACs/cycle, intensity x {bw:g} SRAM B/cycle)")
    ax.axvline(ridge, color="#c00000", linewidth=0.6, linestyle=":", label=f"ridge {ridge:.2f} MACs/byte")
    for kind, (color, marker, label) in POINT_STYLES.items():
        mine = [(r, x, y) for r, x, y in pts if point_kind(r) == kind]
        if mine:
            ax.scatter([x for _, x, _ in mine], [y for _, _, y in mine], color=color, marker=marker, s=30,
                       label=label, zorder=3)
    at: dict[tuple[float, float], list[str]] = {}     # kernels on one spot (repeated layers) share a label
    for r, x, y in pts:
        at.setdefault((round(math.log10(x), 3), round(math.log10(y), 3)), []).append(f"k{r['index']}")
    for j, ((lx, ly), names) in enumerate(at.items()):   # alternately above and below the point
        ax.annotate(",".join(names), (10 ** lx, 10 ** ly), textcoords="offset points",
                    xytext=(4, 4 if j % 2 == 0 else -9), fontsize=7)
    if len(pts) <= 48:                       # the key: which layers each label stands for
        ax.text(1.02, 1.0, "kernels:\n" + "\n".join(short_label(r, 30) for r, _, _ in pts), transform=ax.transAxes,
                va="top", fontsize=7, family="monospace")
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(lo_y, hi_y)
    ax.set_xlabel("operational intensity (MACs per byte " + ("loaded/stored, measured under qemu)" if traffic
                                                             else "moved, compulsory)"))
    how = f"measured under qemu ({summary.get('board')})" if measured else "cost-model estimate"
    ax.set_ylabel("MACs per cycle (estimated from the executed instruction mix)" if cycles
                  else f"MACs per instruction ({how}; 1 instruction ~ 1 cycle)")
    ax.set_title(f"roofline {summary['target']}: {summary['model']}", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(True, which="both", linewidth=0.3, alpha=0.5)
    return fig
