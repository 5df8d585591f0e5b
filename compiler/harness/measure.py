"""Measured memory traffic and instruction mix of one inference on a qemu target (``bench --measure``).

The instruction-count plugin (``runtime_c/tools/tc_insncount.c``) runs with ``classes=1`` (the
executed-instruction class histogram of ``tc_classes.h``, Arm targets only) and ``rgn=K:LO:HI``
ranges: every load and store of the guest (the CPU's own, and the element accesses of Helium
helpers) adds its bytes to a read or write counter of the region that holds its address. Regions
from the ELF (``regions``): ``stack`` = [__tf_stack_limit, __stack_top) (the linker script's stack),
``sram`` = the rest of RAM from the first writable section up to the stack top, ``flash`` = every
read-only allocated section (code, literal pools, weights, .rodata; on the MPS3 AN547 ITCM code and
QSPI constants); anything else (peripherals) is ``other``. Instruction fetches are not data traffic
and are not counted.

All counters are snapshot at the same marks as the instruction counts (``bench.py``), so a
kernel's traffic and mix run from its entry to the next kernel's entry, callees included.
``traffic``: ``sram_read_bytes``/``sram_write_bytes`` (stack included), ``stack_read_bytes``/
``stack_write_bytes`` (the stack's share of those), ``flash_read_bytes``, ``other_read_bytes``/
``other_write_bytes`` and the same per kernel (``per_kernel``). Cycles (``cycles.py``) and energy
(``energy.py``) are estimates computed from these.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import TinyfuseError
from .cycles import cycles_figures
from .energy import ESTIMATE as ENERGY_NOTE
from .energy import energy_uj
from .elf import SHF_ALLOC, SHF_WRITE, _open
from .qemu import TargetBuild, _check_exit, _read_stats, _run, qemu_command

REGIONS = ("flash", "sram", "stack", "unused", "other")     # plugin region ids 0..4


def regions(elf: Path) -> list[tuple[int, int, int]]:
    """(region id, lo, hi) ranges for the plugin, first match wins: the stack, the RAM, each
    read-only allocated section. TinyfuseError when the linker symbols of the stack are missing."""
    f, e = _open(elf)
    with f:
        syms = {}
        for table in (s for s in e.iter_sections() if s["sh_type"] == "SHT_SYMTAB"):
            for sym in table.iter_symbols():
                if sym.name in ("__tf_stack_limit", "__stack_top"):
                    syms[sym.name] = sym["st_value"]
        secs = [s for s in e.iter_sections() if s["sh_flags"] & SHF_ALLOC and s["sh_size"]]
    if len(syms) != 2:
        raise TinyfuseError(f"{elf}: no __tf_stack_limit/__stack_top symbols (runtime_c/boards/cortex_m/sections.ld)")
    limit, top = syms["__tf_stack_limit"], syms["__stack_top"]
    ram_lo = min((s["sh_addr"] for s in secs if s["sh_flags"] & SHF_WRITE), default=limit)
    out = [(2, limit, top), (1, ram_lo, top)]
    out += [(0, s["sh_addr"], s["sh_addr"] + s["sh_size"]) for s in secs if not s["sh_flags"] & SHF_WRITE]
    return out


def plugin_arg(plugin: Path, out: Path, elf: Path, marks: list[int], code_range: tuple[int, int] | None,
               classes: bool) -> str:
    """The ``-plugin`` argument of a measured run of ``elf``: traffic by ``regions(elf)``, the class
    histogram when ``classes``, counters snapshot at every address of ``marks``."""
    lo_hi = [f"lo={code_range[0]:#x}", f"hi={code_range[1]:#x}"] if code_range else []
    return ",".join([str(plugin), f"out={out}", *lo_hi, *(f"rgn={k}:{lo:#x}:{hi:#x}" for k, lo, hi in regions(elf)),
                     *(["classes=1"] if classes else []), *(f"mark={a:#x}" for a in marks)])


def parse_measure(text: str) -> tuple[list[str], list[tuple[int, list[int]]]]:
    """(column names, [(mark address, counters before it)...]) of the plugin's output file."""
    columns, log = [], []
    for line in text.splitlines():
        parts = line.split()
        if parts[0] == "columns":
            columns = parts[1:]
        elif parts[0] == "mark":
            log.append((int(parts[1], 16), [int(p) for p in parts[2:]]))
    if not columns:
        raise TinyfuseError("the traffic counter wrote no columns")
    return columns, log


def run_measured(build: TargetBuild, marks: list[int], code_range: tuple[int, int], plugin: Path,
                 classes: bool, timeout: float = 600) -> tuple[list[str], list[tuple[int, list[int]]]]:
    """Run the image under the plugin with traffic (and ``classes``) on: ``parse_measure``'s result;
    column 0 is all instructions, 1 those in ``code_range``."""
    run_dir = build.workdir / "bench"
    run_dir.mkdir(parents=True, exist_ok=True)
    out = run_dir / "measure.txt"
    if out.exists():
        out.unlink()
    arg = plugin_arg(plugin, out, build.elf, marks, code_range, classes)
    proc = _run(qemu_command(build, ("-icount", "shift=0", "-plugin", arg)),
                f"qemu ({build.board.name}) with the traffic counter", cwd=run_dir, timeout=timeout)
    _check_exit(build, proc)
    build.stats = _read_stats(run_dir / "stats.txt")
    return parse_measure(out.read_text())


def interval_sums(hits: list[tuple[str, list[int]]]) -> tuple[dict[str, list[int]], list[int]]:
    """Counter differences from each mark to the next, summed per kernel label, up to "<end>"; and
    the total from "<run>" to "<end>" (``bench.py``'s intervals, on every counter)."""
    per: dict[str, list[int]] = {}
    for (name, row), (_, nxt) in zip(hits, hits[1:]):
        if name == "<end>":
            break
        if name != "<run>":
            acc = per.setdefault(name, [0] * len(row))
            per[name] = [a + n - r for a, n, r in zip(acc, nxt, row)]
    start = next(r for n, r in hits if n == "<run>")
    end = next(r for n, r in hits if n == "<end>")
    return per, [e - s for e, s in zip(end, start)]


def traffic_of(col: dict[str, int]) -> dict[str, int]:
    """The named traffic figures of one counter row (``col``: column name -> value)."""
    r = {name: (col[f"mem{k}_r"], col[f"mem{k}_w"]) for k, name in enumerate(REGIONS)}
    return {"sram_read_bytes": r["sram"][0] + r["stack"][0], "sram_write_bytes": r["sram"][1] + r["stack"][1],
            "flash_read_bytes": r["flash"][0], "flash_write_bytes": r["flash"][1],
            "stack_read_bytes": r["stack"][0], "stack_write_bytes": r["stack"][1],
            "other_read_bytes": r["other"][0], "other_write_bytes": r["other"][1]}


def mix_of(col: dict[str, int], classes: tuple[str, ...]) -> dict[str, int]:
    """Class name -> executed count of one counter row (the plugin's class columns)."""
    return {c: col[c] for c in classes if c in col}


def measured_figures(build: TargetBuild, labels: dict[int, str], code_range: tuple[int, int], plugin: Path,
                     timeout: float = 600) -> tuple[list[tuple[int, int, int]], dict]:
    """One measured run: (the (address, instructions, in range) log ``bench_target`` reads, and its
    extra figures: ``traffic``, ``instruction_mix``, ``cycles_estimate``, ``energy_estimate_uj``)."""
    from .cycles import CLASSES
    arm = build.target.cc.startswith("arm-")
    columns, log = run_measured(build, sorted(labels), code_range, plugin, arm, timeout)
    per, total = interval_sums([(labels[a], row) for a, row in log])
    named = {k: dict(zip(columns, v)) for k, v in per.items()}
    tot = dict(zip(columns, total))
    traffic = {**traffic_of(tot), "per_kernel": {k: traffic_of(v) for k, v in named.items()}}
    extra = {"traffic": traffic}
    if arm:
        mix = {k: mix_of(v, CLASSES) for k, v in named.items()}
        extra["instruction_mix"] = {"total": mix_of(tot, CLASSES), "per_kernel": mix}
        cyc = cycles_figures(extra["instruction_mix"]["total"], mix, build.target.name)
        extra["cycles_estimate"] = cyc
        extra["energy_estimate_uj"] = energy_uj(build.target.name, cyc["total"], traffic)
        extra["energy_estimate_note"] = ENERGY_NOTE
    return [(a, row[0], row[1]) for a, row in log], extra


__all__ = ["REGIONS", "interval_sums", "measured_figures", "mix_of", "parse_measure", "plugin_arg", "regions",
           "run_measured", "traffic_of"]
