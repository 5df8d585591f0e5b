"""``tinyfuse report``: fused groups, the memory plan (table + SVG) and per-kernel MACs, bytes moved,
operational intensity against the target's roofline (table + SVG).

Bytes moved per kernel are the compulsory ones: every input tensor and the output once, every
constant (weights, bias, multipliers) once, and for a poly-fused kernel its line-buffer traffic
(each intermediate element written once and read once). Intensity = MACs / bytes moved; the
roofline's attainable MACs/cycle = min(peak, intensity x SRAM bytes/cycle) from the Target data.
The "estimated" column divides MACs by the cost model's instruction estimate (one instruction per
cycle), which places every kernel under the roof.
"""
from __future__ import annotations

import json
import math
import zlib

from ..cost.analytical import EPILOGUE_INSNS, ipm, family
from ..ir import Call, Constant, Function, post_order
from ..lower.inplace_conv import ConvGeom
from .planner import format_plan


def kernel_rows(result, target=None) -> list[dict]:
    """Per kernel: name, ops, variant, MACs, bytes moved, intensity, estimated instructions, rule."""
    mem = getattr(result, "memory", None)
    rows = []
    for i, s in enumerate(result.steps):
        k, call = s.kernel, s.call
        consts = _constants(call.op) if call is not None else 0
        moved = sum(p.nbytes for p in k.params) + k.out.nbytes + consts
        plan = k.plan
        if plan is not None:
            moved += 2 * sum(plan.evaluations[:-1])
        rule = ""
        if mem is not None and i in mem.inplace:
            o = mem.inplace[i]
            rule = f"{o.rule} over p{o.arg}" + (f" ({o.order})" if o.rule == "pixel_buffer" else "")
        rows.append({"kernel": k.name, "ops": k.ops, "variant": k.variant, "macs": k.macs, "bytes": moved,
                     "intensity": k.macs / moved if moved else 0.0, "instructions": _instructions(k, call, target),
                     "scratch": k.scratch_bytes, "inplace": rule})
    return rows


def _constants(fn: Function) -> int:
    total = 0
    for n in post_order(fn.body):
        if isinstance(n, Constant):
            total += n.value.nbytes
        elif isinstance(n, Call) and isinstance(n.op, Function):
            total += _constants(n.op)
    return total


def _instructions(kernel, call, target=None) -> float:
    """Cost-model instructions of one kernel (conv families; others: 4 per output element)."""
    plan = kernel.plan
    if plan is not None:
        from ..cost.analytical import chain_estimate
        return chain_estimate(plan, target).fused.instructions
    got = ConvGeom.of(call.op) if call is not None else None
    if got is None:
        return 4.0 * kernel.out.size + kernel.macs * 2
    variant = {"inplace_dw_plane": "dw_plane"}.get(kernel.variant, kernel.variant)
    if variant.startswith("inplace_pixel"):
        variant = "pixel_buffer"
    return kernel.macs * ipm(family(got[2]), variant) + kernel.out.size * EPILOGUE_INSNS


def fused_rows(result) -> list[dict]:
    rows = []
    for s in result.steps:
        info = s.call.op.attrs.get("poly") if s.call is not None else None
        if info:
            rows.append({"kernel": s.kernel.name, **{k: v for k, v in info.items() if k != "estimate"},
                         **info.get("estimate", {})})
    return rows


def report(result, target) -> tuple[str, dict[str, str]]:
    """(text, files) of ``tinyfuse report``: files are memory_plan.svg, roofline.svg, report.json."""
    mem = getattr(result, "memory", None)
    krows, frows = kernel_rows(result, target), fused_rows(result)
    head = [f"model {result.name} for {target.name}: {len(result.steps)} kernels, {result.macs} MACs, "
            f"weights {result.weights_bytes} B",
            f"arena {result.arena_bytes} B (I/O + activations + scratch); live-bytes lower bound "
            f"{result.plan.lower_bound} B; without in-place reuse {getattr(mem, 'bound_no_inplace', '-')} B; "
            f"naive (no reuse) {result.naive_bytes} B", ""]
    lines = head + ["fused groups (poly_fuse):"]
    if frows:
        lines.append(f"  {'kernel':<34} {'strategy':<17} {'stages':>6} {'tile_w':>6} {'tiles':>5} "
                     f"{'ring rows':<12} {'recompute':>9} {'scratch':>8}  decision")
        for r in frows:
            lines.append(f"  {r['kernel']:<34} {r['strategy']:<17} {r['stages']:>6} {r['tile_w']:>6} "
                         f"{r['ntiles']:>5} {str(r['rows']):<12} {r['recompute']:>9.3f} {r['scratch']:>8}  "
                         f"{r.get('decision', '')}")
    else:
        lines.append("  none (no fusion lowers the arena peak, or --disable-pass poly_fuse)")
    peak, bw = target.peak_macs_per_cycle, target.sram_bytes_per_cycle
    lines += ["", f"kernels (roofline: peak {peak:g} MACs/cycle, {bw:g} SRAM bytes/cycle, ridge "
                  f"{peak / bw:.2f} MACs/byte):",
              f"  {'kernel':<40} {'variant':<22} {'MACs':>10} {'bytes':>9} {'MAC/B':>7} {'est.instr':>10} "
              f"{'scratch':>7}  {'in place':<30} ops (anchor -> epilogue)"]
    for r in krows:
        lines.append(f"  {r['kernel']:<40} {r['variant']:<22} {r['macs']:>10} {r['bytes']:>9} "
                     f"{r['intensity']:>7.2f} {r['instructions']:>10.0f} {r['scratch']:>7}  {r['inplace']:<30} "
                     f"{' -> '.join(r['ops'])}")
    lines += ["", "memory plan (t<i>: tensors, s<i>: kernel scratch; first/last = kernel index, -1 = model input;"
                  " a cluster shares an in-place offset):", format_plan(result.plan, result.buffers)]
    if mem is not None:
        lines.append("live bytes per kernel: " + " ".join(str(b) for b in mem.schedule.per_step))
    files = {"memory_plan.svg": plan_svg(result), "roofline.svg": roofline_svg(krows, target),
             "report.json": json.dumps({"model": result.name, "target": target.name,
                                        "arena_bytes": result.arena_bytes, "lower_bound": result.plan.lower_bound,
                                        "kernels": krows, "fused": frows,
                                        "buffers": [{"name": b.name, "size": b.size, "first": b.first,
                                                     "last": b.last, "offset": result.plan.offsets[b.name],
                                                     "cluster": b.group} for b in result.buffers]},
                                       indent=1, default=str) + "\n"}
    return "\n".join(lines), files


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plan_svg(result, width: int = 900, height: int = 480) -> str:
    """x = kernel step, y = arena offset; one rectangle per buffer over its lifetime."""
    n = max(len(result.steps), 1)
    arena = max(result.arena_bytes, 1)
    left, top, w, h = 70, 30, width - 90, height - 70
    col = w / (n + 1)

    def x(step):
        return left + (max(step, -1) + 1) * col

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="monospace" '
           f'font-size="10">', f'<text x="{left}" y="16" font-size="12">{_esc(result.name)}: arena '
           f'{result.arena_bytes} B (lower bound {result.plan.lower_bound} B)</text>',
           f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#888"/>']
    palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"]
    for i, b in enumerate(result.buffers):
        if not b.size:
            continue
        off = result.plan.offsets[b.name]
        last = min(b.last, n - 1) if b.last < 10**8 else n - 1
        x0, x1 = x(b.first), x(last) + col
        y0 = top + h - (off + b.size) / arena * h
        hh = max(b.size / arena * h, 1)
        color = "#bbbbbb" if b.name.startswith("s") else palette[zlib.crc32((b.group or b.name).encode()) % len(palette)]
        out.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{hh:.1f}" fill="{color}" '
                   f'fill-opacity="0.75" stroke="#222" stroke-width="0.5"><title>{_esc(b.name)}: {b.size} B at '
                   f'{off}, kernels {b.first}..{b.last}{" (cluster " + b.group + ")" if b.group else ""}</title></rect>')
        if hh > 11 and x1 - x0 > 30:
            out.append(f'<text x="{x0 + 2:.1f}" y="{y0 + 11:.1f}">{_esc(b.name)} {b.size}</text>')
    for k in range(n):
        if n <= 60 or k % 5 == 0:
            out.append(f'<text x="{x(k) + 2:.1f}" y="{top + h + 12}">{k}</text>')
    out.append(f'<text x="{left}" y="{height - 8}">kernel (step) -&gt;   y: arena offset (0 at the bottom, '
               f'{arena} B at the top)</text>')
    for frac in (0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<text x="4" y="{top + h - frac * h + 3:.1f}">{int(arena * frac)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def roofline_svg(rows: list[dict], target, width: int = 760, height: int = 480) -> str:
    """Log-log roofline of the target with one point per kernel (x: MACs/byte, y: MACs/cycle as the
    cost model estimates it)."""
    peak, bw = target.peak_macs_per_cycle, target.sram_bytes_per_cycle
    xs = [r["intensity"] for r in rows if r["intensity"] > 0]
    lo_x = 10 ** math.floor(math.log10(min(xs + [peak / bw]) / 2))
    hi_x = 10 ** math.ceil(math.log10(max(xs + [peak / bw]) * 2))
    ys = [r["macs"] / r["instructions"] for r in rows if r["instructions"] and r["macs"]]
    lo_y = 10 ** math.floor(math.log10(min(ys + [peak]) / 2))
    hi_y = 10 ** math.ceil(math.log10(peak * 2))
    left, top, w, h = 70, 30, width - 100, height - 80

    def px(v):
        return left + (math.log10(v) - math.log10(lo_x)) / (math.log10(hi_x) - math.log10(lo_x)) * w

    def py(v):
        return top + h - (math.log10(v) - math.log10(lo_y)) / (math.log10(hi_y) - math.log10(lo_y)) * h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="monospace" '
           f'font-size="10">', f'<text x="{left}" y="16" font-size="12">roofline {target.name}: {peak:g} MACs/cycle, '
           f'{bw:g} B/cycle</text>', f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#888"/>']
    ridge = peak / bw
    pts = [(lo_x, min(peak, lo_x * bw)), (ridge, peak), (hi_x, peak)]
    out.append('<polyline fill="none" stroke="#c00" stroke-width="2" points="' +
               " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in pts) + '"/>')
    for r in rows:
        if r["intensity"] <= 0 or not r["macs"]:
            continue
        yv = r["macs"] / r["instructions"] if r["instructions"] else peak
        color = "#2a7" if r["variant"] == "fused_chain" else "#36c" if r["variant"].startswith("inplace") else "#555"
        out.append(f'<circle cx="{px(r["intensity"]):.1f}" cy="{py(max(yv, lo_y)):.1f}" r="4" fill="{color}">'
                   f'<title>{_esc(r["kernel"])}: {r["intensity"]:.2f} MAC/B, ~{yv:.2f} MAC/cycle</title></circle>')
    for dec in range(int(math.log10(lo_x)), int(math.log10(hi_x)) + 1):
        out.append(f'<text x="{px(10 ** dec) - 8:.1f}" y="{top + h + 14}">{10 ** dec:g}</text>')
    for dec in range(int(math.log10(lo_y)), int(math.log10(hi_y)) + 1):
        out.append(f'<text x="4" y="{py(10 ** dec) + 3:.1f}">{10 ** dec:g}</text>')
    out.append(f'<text x="{left}" y="{height - 28}">x: operational intensity (MACs per byte moved), '
               f'y: MACs per cycle (cost-model estimate)</text>')
    out.append(f'<text x="{left}" y="{height - 14}">grey: layer kernels, blue: in-place kernels, green: '
               f'poly-fused chains</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
