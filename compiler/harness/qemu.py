"""QEMU harness: cross-compile the generated sources with a test main that has the inputs compiled
in, run the image under qemu-system-{arm,riscv32}, read the outputs back as numpy arrays.

    build = build_target(result, "cortex-m4", workdir, inputs)   # -> TargetBuild (elf, board, sizes)
    outputs = run_target(build)                                   # list of arrays, as run_host
    figures = bench_target(build)                                 # instructions, flash, RAM (see bench.py)

The test main (``codegen_templates/harness/target_main.c.j2``, written as tf_main.c) writes out<i>.bin and
stats.txt into the run directory through semihosting and exits with ``<name>_run``'s status. A
target's boards are tried in order; the first one the image links for (no region overflow, enough
RAM left for the stack) is used.
"""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..codegen.templates import template
from ..errors import TinyfuseError
from .host import GUARD_PATTERN, trace_cflags
from ..targets import ARENA_ALIGN, BOARDS_DIR, RUNTIME_DIR, Board, Target, check_fits, get_target

CFLAGS = ("-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-ffunction-sections", "-fdata-sections")
INSTALL_HINT = ("apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm "
                "gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc (or: make setup)")
FAULT_EXIT = 127
_FITS_ERRORS = ("overflowed", "will not fit in region", "__tf_min_stack")
# The names build_target and run_target (run_target_batch) write directly into their work directory
TARGET_FILES = ("src", "tf_main.c", "obj", "model.elf", "model_no_model.elf", "model.map", "model_no_model.map", "run")


@dataclass
class TargetBuild:
    """A linked image: ``elf`` for ``board``; ``elf_no_model`` is the same image without the call to
    ``<name>_run`` (for the flash the model adds); ``objects`` are the model's own object files."""

    result: object                  # the CompileResult
    target: Target
    board: Board
    workdir: Path
    elf: Path
    elf_no_model: Path
    objects: list[Path] = field(default_factory=list)
    stats: dict = field(default_factory=dict)     # filled by run_target: status, stack


def missing_tools(target: str | Target) -> list[str]:
    """The executables ``target`` needs that are not on PATH."""
    return [t for t in get_target(target).tools if shutil.which(t) is None]


def require_tools(target: Target) -> None:
    missing = missing_tools(target)
    if missing:
        raise TinyfuseError(f"target {target.name} needs {', '.join(missing)}; install: {INSTALL_HINT}")


def _run(cmd: list[str], what: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TinyfuseError(f"{what} timed out after {timeout:g} s: {' '.join(map(str, cmd[:3]))} ...") from None
    return proc


def _c_bytes(arr: np.ndarray, per_line: int = 24) -> str:
    hexes = [f"0x{b:02x}" for b in arr.tobytes()]
    return ",\n  ".join(", ".join(hexes[i:i + per_line]) for i in range(0, len(hexes), per_line)) or "0"


def build_target(result, target: str | Target, workdir: str | Path, inputs: list[np.ndarray],
                 arena_fill: int = 0, cflags: tuple[str, ...] = CFLAGS, samples: int = 0,
                 guard: int = 0, trace: bool = False) -> TargetBuild:
    """Write the sources into ``workdir/src``, compile them with the target's compiler and flags,
    link ``workdir/model.elf`` for the first board it fits. Raises TinyfuseError when a tool is
    missing, the compiler rejects the code or no board is large enough. ``samples`` > 0: each of
    ``inputs`` holds that many samples (N, *shape) and the batch test main
    (``target_batch_main.c.j2``, tinyfuse.harness.batch) runs them all. ``guard`` > 0 (single runs
    only): that many bytes (rounded up to ARENA_ALIGN) of host.GUARD_PATTERN before and after the
    arena, checked after the run: the image exits with 5 when one was overwritten. ``trace`` (single
    runs only): the model calls the test main's ``tf_trace`` after every kernel, which appends the
    kernel's output to ``run/trace.bin`` (harness/per_layer.py reads it)."""
    target = get_target(target)
    if target.is_host:
        raise TinyfuseError("target host runs with the host harness (tinyfuse.harness.build_host), not qemu")
    check_fits(result, target)                    # the plan's arena and weights against the boards' sizes
    require_tools(target)
    if (guard or trace) and samples:
        raise TinyfuseError("build_target: guard regions and traces are made by the single-run test main only "
                            "(samples=0)")
    align = max(ARENA_ALIGN, result.placement.align or 0)
    guard = -(-guard // align) * align                  # the arena keeps its alignment inside the guards
    workdir = Path(workdir).resolve()
    src = result.write(workdir / "src")
    main = workdir / "tf_main.c"
    data = [_c_bytes(np.ascontiguousarray(np.asarray(x).astype(t.dtype).reshape((samples, *t.shape) if samples
                                                                                 else t.shape)))
            for t, x in zip(result.inputs, inputs)]
    main.write_text(template("harness/target_batch_main.c.j2" if samples else "harness/target_main.c.j2").render(
        name=result.name, NAME=result.name.upper(), inputs=result.inputs, outputs=result.outputs,
        input_data=data, fill=arena_fill, samples=samples, guard=guard,
        guard_pattern=GUARD_PATTERN, states=result.states, r=result, trace=trace,
        step_api=bool(result.options and result.options.max_step_instructions) and not samples))
    model_srcs = [src / f for f in sorted(result.files) if f.endswith(".c")]   # <name>.c, <name>_weights.c, ...
    board_srcs = sorted({s for b in target.boards for s in b.sources})
    hook = tuple(trace_cflags(workdir)) if trace else ()       # the model's units only (the .S start-up too)
    units = {f"model_{s.stem}": (s, hook) for s in model_srcs}
    units |= {"tf_bench": (RUNTIME_DIR / "src" / "tf_bench.c", ()), "tf_main": (main, ()),
              "tf_main_no_model": (main, ("-DTF_NO_MODEL",))}
    units |= {f"board_{s.replace('/', '_')}": (BOARDS_DIR / s, ()) for s in board_srcs}
    objects = _compile(target, [*cflags, f"-I{src}", f"-I{RUNTIME_DIR / 'include'}"], units, workdir / "obj")

    model_objs = [objects[f"model_{s.stem}"] for s in model_srcs]
    errors = []
    for board in target.boards:
        boot = [objects[f"board_{s.replace('/', '_')}"] for s in board.sources]
        elf, elf_nm = workdir / "model.elf", workdir / "model_no_model.elf"
        proc = _link(target, board, [*model_objs, objects["tf_bench"], objects["tf_main"], *boot], elf)
        if proc.returncode == 0:
            proc = _link(target, board, [*model_objs, objects["tf_bench"], objects["tf_main_no_model"], *boot], elf_nm)
            if proc.returncode:
                raise TinyfuseError(f"linking for {board.name} failed:\n{proc.stderr[:4000]}")
            return TargetBuild(result, target, board, workdir, elf, elf_nm, model_objs)
        if not any(e in proc.stderr for e in _FITS_ERRORS):
            raise TinyfuseError(f"linking for {board.name} failed:\n{proc.stderr[:4000]}")
        errors.append(f"{board.name}: " + " ".join(line.split(": ", 1)[-1] for line in proc.stderr.splitlines()
                                                     if any(e in line for e in _FITS_ERRORS))[:300])
    raise TinyfuseError(f"model {result.name} (weights {result.weights_bytes} B, arena {result.arena_bytes} B) fits "
                        f"no board of {target.name}: " + "; ".join(errors))


def _compile(target: Target, cflags: list[str], units: dict[str, tuple[Path, tuple[str, ...]]],
             obj_dir: Path) -> dict[str, Path]:
    """Compile each unit (object name -> (source, extra flags)) into ``obj_dir``, two at a time."""
    obj_dir.mkdir(parents=True, exist_ok=True)
    objects = {name: obj_dir / f"{name}.o" for name in units}
    pending = [(name, [target.cc, *target.cflags, *cflags, *extra, "-c", str(src), "-o", str(objects[name])])
               for name, (src, extra) in units.items()]
    running: list[tuple[str, subprocess.Popen]] = []
    while pending or running:
        while pending and len(running) < 2:
            name, cmd = pending.pop(0)
            running.append((name, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        name, proc = running.pop(0)
        _, err = proc.communicate(timeout=300)
        if proc.returncode:
            for _, other in running:
                other.kill()
                other.wait()
            raise TinyfuseError(f"{target.cc} failed on {units[name][0].name}:\n{err[:4000]}")
    return objects


def _link(target: Target, board: Board, objects: list[Path], elf: Path) -> subprocess.CompletedProcess:
    cmd = [target.cc, *target.cflags, *objects, *target.ldflags, "-Wl,--gc-sections",
           *(f"-L{BOARDS_DIR / d}" for d in board.lib_dirs), "-T", BOARDS_DIR / board.linker_script,
           f"-Wl,-Map={elf.with_suffix('.map')}", "-Wl,--no-warn-rwx-segments", "-lm", "-o", elf]
    return _run(cmd, "linking")


def qemu_command(build: TargetBuild, extra: tuple[str, ...] = ()) -> list[str]:
    """The qemu command line running ``build.elf`` with semihosting (``extra`` before -kernel)."""
    return [*build.board.qemu, *extra, "-semihosting-config", "enable=on,target=native", "-kernel", str(build.elf)]


def _check_exit(build: TargetBuild, proc: subprocess.CompletedProcess) -> None:
    if proc.returncode == 0:
        return
    what = "faulted" if proc.returncode == FAULT_EXIT else f"exited with {proc.returncode}"
    raise TinyfuseError(f"model {build.result.name} on {build.target.name} ({build.board.name}) {what}: "
                        f"{(proc.stderr or proc.stdout).strip()[:2000]}")


def _read_stats(path: Path) -> dict:
    stats = {}
    for line in path.read_text().splitlines():
        key, value = line.split()
        stats[key] = int(value)
    return stats


def run_target(build: TargetBuild, timeout: float = 120, extra_qemu: tuple[str, ...] = ()) -> list[np.ndarray]:
    """Run the image once under qemu; the outputs as arrays of the model's output shapes and dtypes.
    ``build.stats`` gets the test main's figures (status, stack bytes of the call)."""
    run_dir = build.workdir / "run"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    proc = _run(qemu_command(build, extra_qemu), f"qemu ({build.board.name})", cwd=run_dir, timeout=timeout)
    _check_exit(build, proc)
    build.stats = _read_stats(run_dir / "stats.txt")
    outs = []
    for i, t in enumerate(build.result.outputs):
        raw = (run_dir / f"out{i}.bin").read_bytes()
        if len(raw) != t.nbytes:
            raise TinyfuseError(f"output {i} of the target run has {len(raw)} bytes, expected {t.nbytes}")
        outs.append(np.frombuffer(raw, dtype=t.dtype).reshape(t.shape))
    return outs


__all__ = ["TARGET_FILES", "TargetBuild", "build_target", "run_target", "missing_tools", "qemu_command"]
