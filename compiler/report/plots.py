"""Plots of ``tinyfuse report`` through matplotlib (the optional extra ``tinyfuse[plots]``):

* ``memory_plan.<fmt>``: x = kernel (execution order, named by its first source layer), y = arena
  offset; one rectangle per buffer over its lifetime, coloured by kind (model input, activation,
  model output, kernel scratch), hatched when it shares an in-place cluster; the live bytes per
  kernel as a step line.
* ``roofline.<fmt>``: log-log roofline of the target (Williams, Waterman, Patterson, CACM 52(4),
  2009): attainable MACs/cycle = min(peak, intensity x SRAM bytes/cycle) with the Target's
  ``peak_macs_per_cycle`` and ``sram_bytes_per_cycle``; one point per kernel at (MACs per byte
  moved, MACs per cycle), measured under qemu when available (estimated cycles, or one instruction
  taken as one cycle), else the cost model's estimate. The MACs are those the kernel performs: a
  sparse kernel's nonzero MACs (``nonzero_macs``). Labels (``k<i>``; kernels on one spot share one)
  are placed where they overlap no other label, marker or the legend (:func:`place_labels`, with a
  leader line when away from the point); a key beside the plot names each kernel's layer and lists
  any label that found no free place.

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


def roofline_points(krows: list[dict]) -> tuple[list[tuple[dict, float, float]], bool, bool, bool]:
    """(points, measured, traffic, cycles): one (row, intensity, MACs per cycle) per kernel with MACs,
    from the MACs it performs (``nonzero_macs``: a sparse kernel's nonzero MACs), over the bytes it
    loaded and stored under qemu (``traffic``) or its compulsory bytes, and over its estimated cycles
    (``cycles``), its qemu instructions (``measured``) or the cost model's instructions."""
    measured = bool(krows) and all(r["measured"] is not None for r in krows)
    traffic = measured and all(r.get("measured_bytes") is not None for r in krows)
    cycles = traffic and all(r.get("cycles_estimate") for r in krows if r["macs"])
    pts = []
    for r in krows:
        work = r.get("nonzero_macs", r["macs"])
        moved = r["measured_bytes"] if traffic else r["bytes"]
        if work and moved:
            time = r["cycles_estimate"] if cycles else r["measured"] if measured else max(r["instructions"], 1)
            pts.append((r, work / moved, work / max(time, 1)))
    return pts, measured, traffic, cycles


def roofline_figure(summary: dict, krows: list[dict]):
    """Log-log roofline with one labelled point per kernel (see the module docstring)."""
    from matplotlib.figure import Figure
    peak, bw = summary["peak_macs_per_cycle"], summary["sram_bytes_per_cycle"]
    pts, measured, traffic, cycles = roofline_points(krows)
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
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(lo_y, hi_y)
    ax.set_xlabel("operational intensity (MACs per byte " + ("loaded/stored, measured under qemu)" if traffic
                                                             else "moved, compulsory)")
                  + (" ; sparse kernels: their nonzero MACs" if any(r.get("nonzero_macs", r["macs"]) != r["macs"]
                                                                   for r, _, _ in pts) else ""))
    how = f"measured under qemu ({summary.get('board')})" if measured else "cost-model estimate"
    ax.set_ylabel("MACs per cycle (estimated from the executed instruction mix)" if cycles
                  else f"MACs per instruction ({how}; 1 instruction ~ 1 cycle)")
    ax.set_title(f"roofline {summary['target']}: {summary['model']}", fontsize=10)
    legend = ax.legend(loc="upper left", fontsize=8)
    ax.grid(True, which="both", linewidth=0.3, alpha=0.5)
    at: dict[tuple[float, float], list[dict]] = {}     # kernels on one spot (repeated layers) share a label
    for r, x, y in pts:
        at.setdefault((round(math.log10(x), 3), round(math.log10(y), 3)), []).append(r)
    unplaced = place_labels(fig, ax, [((10 ** lx, 10 ** ly), ",".join(f"k{r['index']}" for r in rows))
                                      for (lx, ly), rows in at.items()], [legend])
    _kernel_key(ax, [r for r, _, _ in pts], unplaced)
    return fig


KEY_ROWS = 48          # kernels named in the key beside the roofline (the most MACs first when more)
# label offsets in points from the point, nearest first (the corner of the label nearest the point):
# rings of radius _RINGS, 16 directions each, the four diagonals first
_RINGS = (6, 14, 26, 40, 58, 80, 108)
_ANGLES = (45, 315, 135, 225, 90, 270, 0, 180, 22.5, 67.5, 112.5, 157.5, 202.5, 247.5, 292.5, 337.5)


def place_labels(fig, ax, spots: list[tuple[tuple[float, float], str]], avoid=()) -> list[str]:
    """Annotate each ((x, y), text) of ``spots`` at the nearest offset (``_RINGS`` x ``_ANGLES``,
    a leader line beyond the first two rings) whose text box overlaps no other label, no point
    marker and none of ``avoid`` (artists such as the legend) and stays inside the axes; the texts
    with no such place are returned (not drawn). Greedy, the lowest points first."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    renderer = FigureCanvasAgg(fig).get_renderer()
    frame = ax.get_window_extent(renderer)
    taken = [a.get_window_extent(renderer) for a in avoid]
    for (x, y), _ in spots:                       # every marker (s=30: about 5.5 points across)
        px, py = ax.transData.transform((x, y))
        r = 4 * fig.dpi / 72
        taken.append(_box(px - r, py - r, px + r, py + r))
    unplaced = []
    for (x, y), text in sorted(spots, key=lambda s: (s[0][1], s[0][0])):
        if not _place_one(ax, renderer, frame, taken, (x, y), text):
            unplaced.append(text)
    return unplaced


def _box(x0, y0, x1, y1):
    from matplotlib.transforms import Bbox
    return Bbox([[x0, y0], [x1, y1]])


def _place_one(ax, renderer, frame, taken, xy, text) -> bool:
    from matplotlib.text import Text
    for ring in _RINGS:
        for angle in _ANGLES:
            dx, dy = math.cos(math.radians(angle)), math.sin(math.radians(angle))
            ann = ax.annotate(text, xy, textcoords="offset points", xytext=(ring * dx, ring * dy), fontsize=7,
                              ha="left" if dx > 0.3 else "right" if dx < -0.3 else "center",
                              va="bottom" if dy > 0.3 else "top" if dy < -0.3 else "center",
                              arrowprops=dict(arrowstyle="-", linewidth=0.5, color="#666666", shrinkA=0, shrinkB=3)
                              if ring > 14 else None)
            ann.update_positions(renderer)
            box = Text.get_window_extent(ann, renderer).padded(1)      # the text, not its leader line
            if frame.containsx(box.x0) and frame.containsx(box.x1) and frame.containsy(box.y0) and \
                    frame.containsy(box.y1) and not any(box.overlaps(b) for b in taken):
                taken.append(box)
                return True
            ann.remove()
    return False


def _kernel_key(ax, rows: list[dict], unplaced: list[str]) -> None:
    """The key beside the plot: which layer each kernel label stands for (the KEY_ROWS kernels with the
    most MACs when there are more), and the labels the plot had no free place for."""
    shown = rows if len(rows) <= KEY_ROWS else sorted(sorted(rows, key=lambda r: -r["macs"])[:KEY_ROWS],
                                                      key=lambda r: r["index"])
    head = "kernels:" if len(shown) == len(rows) else f"kernels ({KEY_ROWS} of {len(rows)}, most MACs):"
    lines = [head, *(short_label(r, 30) for r in shown)]
    if unplaced:
        lines += ["", "not labelled (no free place):", *unplaced]
    ax.text(1.02, 1.0, "\n".join(lines), transform=ax.transAxes, va="top", fontsize=7, family="monospace")
