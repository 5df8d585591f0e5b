"""The Pareto front of measured builds: RAM (arena + measured stack, bytes) against instructions.

A build is on the front when no other build has both no more RAM and no more instructions with one
of them strictly less. ``front(builds)`` sorts it by RAM (ascending; instructions then descend);
``front_table`` renders it as a markdown table, ``plot_front`` as an SVG (matplotlib, the ``plots``
extra) with every measured build in grey and the front as a step line.

Some knobs trade flash, not RAM, for speed (int16 pre-widened weights: ``lower.group_knobs``), so
``front(builds, flash=True)`` is the front in three resources: no other build has no more RAM, no
more model flash (code + weights, ``flash_bytes`` of the records) and no more instructions, one of
them strictly less -- what a firmware engineer with both a RAM and a flash budget chooses from.
"""
from __future__ import annotations

from pathlib import Path

from ..cost.records import BuildRecord, parse_record


def front(builds: list, flash: bool = False) -> list[BuildRecord]:
    """The non-dominated measured builds (BuildRecords or their JSON objects), by RAM ascending (ties:
    the default build, then the configuration key); ``flash``: in RAM, model flash and instructions
    (module doc; a record without ``flash_bytes`` counts 0)."""
    ordered = sorted((parse_record(r) for r in builds), key=lambda r: (r.ram, r.instructions, (r.flash_bytes or 0) if flash else 0,
                                                                      bool(r.changes), r.config_key))
    if flash:
        cost = [(r.ram, r.flash_bytes or 0, r.instructions) for r in ordered]
        out, seen = [], set()
        for r, c in zip(ordered, cost):
            dominated = any(o != c and all(a <= b for a, b in zip(o, c)) for o in cost)
            if not dominated and c not in seen:              # equal costs: the first only
                seen.add(c)
                out.append(r)
        return out
    out, best = [], None
    for r in ordered:
        if best is None or r.instructions < best:
            out.append(r)
            best = r.instructions
    return out


def front_table(points: list[BuildRecord], default: BuildRecord | None = None) -> str:
    """Markdown: arena, stack, RAM, instructions (and against the default build), the model's flash
    (code + weights, bytes; "-" in records older than that column), knobs changed."""
    lines = ["| arena B | stack B | arena+stack B | instructions | vs default | model flash B | knobs changed |",
             "|---:|---:|---:|---:|---:|---:|---|"]
    for r in points:
        vs = f"{r.instructions / default.instructions - 1:+.1%}" if default else ""
        changes = brief_changes(r.changes or []) or "(default)"
        flash = "-" if r.flash_bytes is None else r.flash_bytes
        lines.append(f"| {r.arena_bytes} | {r.ram_stack} | {r.ram} | {r.instructions} | {vs} | {flash} | {changes} |")
    return "\n".join(lines)


def brief_changes(labels: list[str]) -> str:
    """Move labels (``"k2 qconv2d 1x25x5x64: weights int16"``, ``tune.space``) grouped by the change:
    ``"weights int16: k0 k2 k4"``, in first-seen order; a label without a kernel is kept whole."""
    by: dict[str, list[str]] = {}
    for label in labels:
        kernel, sep, what = label.partition(": ")
        if not sep:
            by.setdefault(label, [])
            continue
        by.setdefault(what, []).append(kernel.split(" ")[0])
    return "; ".join(f"{what}: {' '.join(ks)}" if ks else what for what, ks in by.items())


def plot_front(builds: list[BuildRecord], points: list[BuildRecord], path: str | Path, title: str) -> Path:
    """SVG of every build (grey) and the front (step line); returns the path."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.scatter([r.ram for r in builds], [r.instructions for r in builds], s=12, c="0.7",
               label="measured builds")
    ax.step([r.ram for r in points], [r.instructions for r in points], where="post", c="C0", marker="o",
            label="Pareto front")
    ax.set_xlabel("arena + stack (bytes)")
    ax.set_ylabel("instructions per inference")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, format="svg")
    plt.close(fig)
    return path


__all__ = ["brief_changes", "front", "front_table", "plot_front"]
