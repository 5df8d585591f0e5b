"""Per-kernel figures of a compiled model, in the manner of X-CUBE-AI's ``analyze``: which source
layers each kernel covers, its MACs, the flash its constants take, the arena RAM live while it
runs, and its operational intensity against the target's roofline.

Definitions (all sizes in bytes):

* ``layers``: the ``span`` of every IR call the kernel covers (ONNX node names; TFLite ``<op>_<index>``),
  nested poly-fused groups included (``Function.source_spans``).
* ``flash``: the constants the kernel's C function references, as emitted in ``<name>_weights.c``;
  a constant shared by several kernels is counted once, at its first user, so the column sums to
  ``weights_bytes``.
* ``ram``: the live arena bytes during the kernel (inputs still needed, its output, its scratch;
  the memory schedule's ``per_step``); the arena is at least the largest of them.
* ``bytes``: compulsory bytes moved: every input tensor and the output once, every constant once,
  and for a poly-fused kernel its line-buffer traffic (each intermediate element written once and
  read once). ``intensity`` = MACs / bytes. The roofline's attainable MACs/cycle is
  min(peak, intensity x SRAM bytes/cycle) (Williams, Waterman, Patterson, CACM 52(4), 2009) with
  the Target's ``peak_macs_per_cycle`` and ``sram_bytes_per_cycle``.
* ``nonzero_macs``: the MACs the kernel performs: ``macs`` for a dense kernel; for a kernel that runs
  without its zero weights (the sparse implementations, ``--sparse``) ``macs`` x the nonzero fraction of
  its weights. The roofline plots kernels with it (intensity = nonzero_macs / bytes, MACs per cycle =
  nonzero_macs / cycles): the nominal count would put a sparse kernel above the roof.
* ``instructions``: the cost model's estimate; ``measured``: instructions qemu executed inside the
  kernel (``tinyfuse.harness.bench``), None when not measured.
* ``measured_bytes`` (``report --measure``): the bytes the kernel actually loaded and stored under qemu
  (SRAM read + SRAM write, stack included, + flash read: ``harness/measure.py``), its
  ``measured_intensity`` = MACs / measured_bytes (the roofline's x then), and ``cycles_estimate``
  (``harness/cycles.py``, from the executed instruction mix: the roofline's y is MACs per estimated cycle).
"""
from __future__ import annotations

import re
from collections import Counter

import numpy as np

from ..cost.analytical import EPILOGUE_INSNS, ipm
from ..ops.conv_geom import conv_group

C_TYPE_BYTES = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
                "int64_t": 8, "uint64_t": 8, "float": 4, "double": 8}


def constant_sizes(result) -> dict[str, int]:
    """Name -> bytes of every constant array in ``<name>_weights.c`` (as emitted, so the sizes are
    the flash the firmware gets)."""
    text = result.files.get(f"{result.name}_weights.c", "")
    return {name: int(n) * C_TYPE_BYTES[ctype]
            for ctype, name, n in re.findall(r"^const (\w+) (\w+)\[(\d+)\]", text, re.M)}


def kernel_flash(result) -> list[int]:
    """Flash bytes of the constants each kernel references (a shared constant at its first user)."""
    sizes, seen, out = constant_sizes(result), set(), []
    for s in result.steps:
        names = sorted(set(re.findall(rf"\b{re.escape(result.name)}_c\d+\b", s.kernel.code)) - seen)
        seen.update(names)
        out.append(sum(sizes.get(n, 0) for n in names))
    return out


def kernel_rows(result, measured: dict | None = None) -> list[dict]:
    """One dict per kernel in execution order: index, kernel, layers, ops, variant, macs, flash, ram,
    bytes, intensity, instructions (estimate), measured (qemu, or None), scratch, inplace (rule or "").

    ``measured``: the figures of ``tinyfuse.harness.bench.bench_target`` (its ``kernels`` list)."""
    mem = getattr(result, "memory", None)
    live = list(mem.schedule.per_step) if mem is not None else [0] * len(result.steps)
    flash = kernel_flash(result)
    counted = {k["name"]: k["instructions"] for k in (measured or {}).get("kernels", [])}
    traffic = ((measured or {}).get("traffic") or {}).get("per_kernel", {})
    cycles = ((measured or {}).get("cycles_estimate") or {}).get("per_kernel", {})
    rows = []
    for i, s in enumerate(result.steps):
        k, call = s.kernel, s.call
        moved = sum(p.nbytes for p in k.params) + k.out.nbytes + flash[i]
        plan = k.plan
        if plan is not None:
            moved += 2 * sum(plan.evaluations[:-1])
        rule = ""
        if mem is not None and i in mem.inplace:
            o = mem.inplace[i]
            rule = f"{o.rule} over p{o.arg}" + (f" ({o.order})" if o.rule == "pixel_buffer" else "")
        rows.append({"index": i, "kernel": k.name, "layers": call.op.source_spans() if call is not None else [],
                     "ops": list(k.ops), "kind": k.kind, "nonzero_macs": nonzero_macs(k, call, result.options), "stage_kinds": list(k.stage_kinds),
                     "declined": [list(d) for d in k.declined], "variant": k.variant, "macs": k.macs, "flash": flash[i],
                     "ram": live[i] if i < len(live) else 0, "bytes": moved,
                     "intensity": k.macs / moved if moved else 0.0,
                     "instructions": round(_instructions(k, call, result.options)), "measured": counted.get(k.name),
                     "scratch": k.scratch_bytes, "inplace": rule, "poly_fused": plan is not None,
                     **_measured_traffic(k.macs, traffic.get(k.name), cycles.get(k.name))})
    return rows


def nonzero_macs(kernel, call, options) -> int:
    """The MACs ``kernel`` performs (module doc): ``kernel.macs`` x the nonzero fraction of the weights
    the sparse decision recorded for it (``CompileContext.sparse_kernels``), ``kernel.macs`` when dense."""
    from ..ir import Constant, post_order
    chosen = options.context.sparse_kernels if options is not None else {}
    if call is None or not chosen or "sparse" not in kernel.kind.rsplit(".", 1)[-1]:
        return kernel.macs
    weights = [n.value for n in post_order(call.op.body) if isinstance(n, Constant) and id(n) in chosen]
    size = sum(w.size for w in weights)
    return round(kernel.macs * sum(int(np.count_nonzero(w)) for w in weights) / size) if size else kernel.macs


def _measured_traffic(macs: int, t: dict | None, cycles: int | None) -> dict:
    """measured_bytes, measured_intensity and cycles_estimate of one kernel (None when not measured)."""
    if t is None:
        return {"measured_bytes": None, "measured_intensity": None, "cycles_estimate": cycles}
    moved = t["sram_read_bytes"] + t["sram_write_bytes"] + t["flash_read_bytes"]
    return {"measured_bytes": moved, "measured_intensity": macs / moved if moved else 0.0, "cycles_estimate": cycles}


def _instructions(kernel, call, options) -> float:
    """Cost-model instructions of one kernel (conv families; others: 4 per output element + 2 per MAC)."""
    plan = kernel.plan
    if plan is not None:
        from ..cost.analytical import chain_estimate
        return chain_estimate(plan, options, (kernel.stage_kinds, kernel.stage_kinds)).fused.instructions
    got = conv_group(call.op) if call is not None else None
    if got is None:
        return 4.0 * kernel.out.size + kernel.macs * 2
    return kernel.macs * ipm(got[2].family, kernel.kind) + kernel.out.size * EPILOGUE_INSNS


def fused_rows(result) -> list[dict]:
    """The poly-fused kernels' decisions (strategy, stages, tile width, ring rows, recompute, scratch)."""
    rows = []
    for s in result.steps:
        info = s.call.op.attrs.get("poly") if s.call is not None else None
        if info:
            rows.append({"kernel": s.kernel.name, **{k: v for k, v in info.items() if k != "estimate"},
                         **info.get("estimate", {})})
    return rows


def buffer_rows(result) -> list[dict]:
    """The memory plan, sorted by offset: name, kind (input, activation, output, scratch), size,
    offset, first and last kernel index (a model output's ``last`` is the last kernel: the planner
    keeps it live with a sentinel), cluster (an in-place group of two or more buffers, else "")."""
    n = len(result.steps)
    members = Counter(b.group for b in result.buffers if b.group)
    rows = []
    for b in sorted(result.buffers, key=lambda b: (result.plan.offsets[b.name], b.first, b.name)):
        kind = ("scratch" if b.name.startswith("s") else "input" if b.first < 0
                else "output" if b.last >= n else "activation")
        rows.append({"name": b.name, "kind": kind, "size": b.size, "offset": result.plan.offsets[b.name],
                     "first": b.first, "last": min(b.last, n - 1), "live_to_end": b.last >= n,
                     "cluster": b.group if members[b.group] > 1 else ""})
    return rows


def summary(result, target, measured: dict | None = None) -> dict:
    """Model-level figures: kernels, MACs, weights (flash), arena (RAM) with its bounds, roofs."""
    mem = getattr(result, "memory", None)
    out = {"model": result.name, "target": target.name, "kernel_count": len(result.steps), "macs": result.macs,
           "weights_bytes": result.weights_bytes, "arena_bytes": result.arena_bytes,
           "state_bytes": getattr(result, "state_bytes", 0), "io_bytes": getattr(result, "io_bytes", 0),
           "lower_bound": result.plan.lower_bound, "naive_bytes": result.naive_bytes,
           "bound_no_inplace": getattr(mem, "bound_no_inplace", None), "planner": result.plan.planner,
           "peak_macs_per_cycle": target.peak_macs_per_cycle, "sram_bytes_per_cycle": target.sram_bytes_per_cycle,
           "inputs": [{"name": t.name, "shape": list(t.shape), "dtype": t.dtype} for t in result.inputs],
           "outputs": [{"name": t.name, "shape": list(t.shape), "dtype": t.dtype} for t in result.outputs]}
    if measured:
        out.update({k: measured.get(k) for k in ("board", "instructions", "instructions_model_code",
                                                  "flash_code", "flash_const", "ram_stack", "ram_total")})
    return out
