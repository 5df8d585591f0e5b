"""Deterministic figures of one inference on a qemu target: executed instructions (total and per
kernel), flash (code and constants, from the ELF through pyelftools: ``elf.py``) and RAM (arena, model .data/.bss, stack).

Instructions come from a TCG plugin (``runtime_c/tools/tc_insncount.c``, built here with the host
gcc) under ``-icount shift=0``: it counts every executed instruction, and separately those inside the
model's own code (section ``.tinyfuse_text``), and snapshots both counts when the first instruction
of a marked function runs. Marks: ``<name>_run``, every kernel function (the
generated code keeps them out of line) and ``tf_bench_end`` (called right after ``<name>_run``
returns). So ``instructions`` = count(tf_bench_end) - count(<name>_run): the whole call, library
code included (soft-float routines, expf, memcpy), plus two or three instructions of the test main.
A kernel's figure runs from its entry to the next kernel's entry, its callees and the call glue in
``<name>_run`` included. ``instructions_model_code`` counts only the model's own functions (the rest is
library code: soft-float routines, expf). These are instructions, not cycles.

Flash: ``flash_const`` is the weights section (``.tinyfuse_weights``); ``flash_code`` is what the
model adds to the image's loaded bytes beyond its constants (the same image linked without the call
to ``<name>_run`` is the baseline), split into ``flash_code_model`` (the model's own functions,
``.tinyfuse_text``) and ``flash_code_lib`` (library code the model pulls in).
RAM: ``ram_total`` = ``arena_bytes`` + the model objects' .data + .bss (``ram_data``, 0 for
generated code) + ``ram_stack`` (stack high-water mark of the call, by stack painting) + ``io_bytes``
(the caller-owned input and output buffers of a model compiled with ``--io-buffers caller``; 0 when
they are inside the arena).

``measure=True`` (``bench --measure``, ``report --measure``): the same run also counts the bytes loaded
and stored by region and the executed instruction mix (``measure.py``), with estimated cycles
(``cycles.py``) and energy (``energy.py``); about 1.5-2x the plain run's qemu time.
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
from pathlib import Path

from ..errors import TinyfuseError
from ..targets import RUNTIME_DIR, Placement
from .elf import data_bss
from .elf import sections as elf_sections
from .elf import symbols as elf_symbols
from .qemu import TargetBuild, _check_exit, _read_stats, _run, qemu_command

PLUGIN_SRC = RUNTIME_DIR / "tools" / "tc_insncount.c"
BENCH_KEYS = ("instructions", "macs", "flash_code", "flash_const", "arena_bytes", "ram_stack", "ram_total")


def plugin_path(cc: str = "gcc") -> Path:
    """The instruction-count plugin, built once per source version into the temp dir."""
    src = PLUGIN_SRC.read_bytes() + (PLUGIN_SRC.parent / "tc_classes.h").read_bytes()
    digest = hashlib.sha256(src).hexdigest()[:12]
    cache = Path(tempfile.gettempdir()) / f"tinyfuse-{os.getuid()}"
    so = cache / f"tc_insncount-{digest}.so"
    if so.exists():
        return so
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f".tc_insncount-{digest}-{os.getpid()}.so"
    proc = subprocess.run([cc, "-O2", "-shared", "-fPIC", f"-I{PLUGIN_SRC.parent}", str(PLUGIN_SRC), "-o", str(tmp)],
                          capture_output=True, text=True)
    if proc.returncode:
        raise TinyfuseError(f"building the qemu plugin failed:\n{proc.stderr[:2000]}")
    os.replace(tmp, so)
    return so


def symbols(build: TargetBuild, elf: Path | None = None) -> dict[str, tuple[int, int]]:
    """Defined symbols of the ELF with a size: name -> (address without the Thumb bit, size)."""
    return elf_symbols(elf or build.elf)


def sections(build: TargetBuild, elf: Path) -> dict[str, tuple[int, int, bool]]:
    """Allocated sections of ``elf``: name -> (size, address, loaded from the image)."""
    return elf_sections(elf)


def object_ram(build: TargetBuild) -> int:
    """.data + .bss of the model's own object files (berkeley ``size``)."""
    return data_bss(build.objects)


def count_instructions(build: TargetBuild, marks: list[int], code_range: tuple[int, int] | None = None,
                       timeout: float = 600) -> tuple[int, list[tuple[int, int, int]]]:
    """Run the image under the plugin: (instructions of the whole run, [(mark address, instructions
    before it, of which inside ``code_range`` = [lo, hi))...])."""
    run_dir = build.workdir / "bench"
    run_dir.mkdir(parents=True, exist_ok=True)
    out = run_dir / "insns.txt"
    if out.exists():
        out.unlink()
    lo_hi = [f"lo={code_range[0]:#x}", f"hi={code_range[1]:#x}"] if code_range else []
    arg = ",".join([f"{plugin_path()}", f"out={out}", *lo_hi, *(f"mark={a:#x}" for a in marks)])
    cmd = qemu_command(build, ("-icount", "shift=0", "-plugin", arg))
    proc = _run(cmd, f"qemu ({build.board.name}) with the instruction counter", cwd=run_dir, timeout=timeout)
    _check_exit(build, proc)
    build.stats = _read_stats(run_dir / "stats.txt")
    log, total = [], None
    for line in out.read_text().splitlines():
        parts = line.split()
        if parts[0] == "mark":
            log.append((int(parts[1], 16), int(parts[2]), int(parts[3])))
        elif parts[0] == "insns":
            total = int(parts[1])
    if total is None:
        raise TinyfuseError(f"the instruction counter wrote no total: {out}")
    return total, log


def bench_target(build: TargetBuild, timeout: float = 600, measure: bool = False) -> dict:
    """Instructions, MACs, flash and RAM of one inference of ``build`` (see the module docstring);
    ``measure``: in the same run, the memory traffic, instruction mix and the cycle and energy
    estimates (``measure.py``: keys traffic, instruction_mix, cycles_estimate, energy_estimate_uj)."""
    result = build.result
    syms = symbols(build)
    labels = _marks(build, syms)
    secs, secs_nm = sections(build, build.elf), sections(build, build.elf_no_model)
    text_size, text_addr, _ = secs.get(".tinyfuse_text", (0, 0, True))
    code_range = (text_addr, text_addr + text_size)
    if measure:
        from .measure import measured_figures
        log, extra = measured_figures(build, labels, code_range, plugin_path(), timeout)
    else:
        (_, log), extra = count_instructions(build, sorted(labels), code_range, timeout), {}
    (start, start_own), (end, end_own) = [next((c, r) for a, c, r in log if labels[a] == m) for m in ("<run>", "<end>")]
    per_kernel, glue = _per_kernel([(labels[a], c) for a, c, _ in log])

    loaded = sum(size for size, _, load in secs.values() if load)
    loaded_nm = sum(size for size, _, load in secs_nm.values() if load)
    if result.placement.weights_section == Placement().weights_section:
        flash_const = secs.get(".tinyfuse_weights", (0, 0, True))[0]
    else:
        flash_const = sum(size for sname, (_, size) in syms.items() if re.fullmatch(rf"{result.name}_c\d+", sname))
    flash_code = loaded - loaded_nm - flash_const     # the no-model image holds no model code at all
    ram_data = object_ram(build)
    stack = build.stats.get("stack", 0)
    instructions = end - start
    io_bytes = result.io_bytes
    return extra | {
        "model": result.name, "target": build.target.name, "board": build.board.name,
        "instructions": instructions, "macs": result.macs,
        "instructions_per_mac": round(instructions / result.macs, 3) if result.macs else None,
        "instructions_model_code": end_own - start_own,
        "flash_code": flash_code, "flash_code_model": text_size, "flash_code_lib": flash_code - text_size,
        "flash_const": flash_const, "flash_image": loaded, "weights_bytes": result.weights_bytes,
        "arena_bytes": result.arena_bytes, "state_bytes": result.state_bytes, "ram_data": ram_data, "ram_stack": stack,
        "io_bytes": io_bytes, "ram_total": result.arena_bytes + result.state_bytes + ram_data + stack + io_bytes,
        "kernels": [{"name": s.kernel.name, "ops": s.kernel.ops, "macs": s.kernel.macs, "kind": s.kernel.kind, "variant": s.kernel.variant,
                     "instructions": per_kernel.get(s.kernel.name)} for s in result.steps],
        "run_glue_instructions": glue,
    }


def _marks(build: TargetBuild, syms: dict[str, tuple[int, int]]) -> dict[int, str]:
    """Address -> label of the plugin's marks: "<run>", every kernel function, "<end>"."""
    kernels = {s.kernel.name for s in build.result.steps}
    labels = {}
    for sname, (addr, _) in syms.items():
        if sname.split(".")[0] in kernels:       # GCC clones too: k3_x.constprop.0, k3_x.part.0
            labels.setdefault(addr, sname.split(".")[0])
    for sym, label in ((f"{build.result.name}_run", "<run>"), ("tf_bench_end", "<end>")):
        if sym not in syms:
            raise TinyfuseError(f"symbol {sym} missing from {build.elf}")
        labels[syms[sym][0]] = label
    return labels


def _per_kernel(hits: list[tuple[str, int]]) -> tuple[dict[str, int], int]:
    """Instructions from each mark to the next, summed per kernel; the segments that start at
    "<run>" (its prologue, the glue before the first kernel) as the second result."""
    per_kernel: dict[str, int] = {}
    glue = 0
    for (name, c), (_, c_next) in zip(hits, hits[1:]):
        if name == "<end>":
            break
        if name == "<run>":
            glue += c_next - c
        else:
            per_kernel[name] = per_kernel.get(name, 0) + c_next - c
    return per_kernel, glue


__all__ = ["BENCH_KEYS", "bench_target", "count_instructions", "plugin_path", "sections", "symbols"]
