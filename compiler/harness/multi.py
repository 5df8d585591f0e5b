"""Many compiled models in one host program: one C compiler run and one process for all of them, so a
test can put dozens of small models through a sanitizer build (tests/c/test_sanitize_families.py)
without paying a compiler start-up, a link and a sanitizer runtime start per model.

    exe = build_host_multi(results, workdir, sanitize=True, guard=256, arena_fill=0xA5)
    outs = run_host_multi(exe, results, inputs)      # outs[m][i]: output i of model m
    outs = run_host_multi(exe, results, inputs, frames=[1, 8])   # model 1: 8 frames, [8, *shape] each

Each model runs in its own arena between two guard regions (``guard`` bytes of
``host.GUARD_PATTERN``, checked after each frame; poisoned for AddressSanitizer during it), models in
list order. A stateful model (``result.states``) gets a state region between guard regions too,
filled like the arena, then ``<name>_reset(state)`` once and ``<name>_run(arena, state)`` per frame.
Models compiled for an Arm target with arm_dsp / arm_mve kernels build too when
``simd_host`` is set: ``runtime_c/include/tinyfuse/simd_host.h`` (the SIMD primitives and the few
Helium intrinsics in portable C) is force-included in place of the shipped ``tinyfuse_simd.h``.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
import shutil
import subprocess
from pathlib import Path

import numpy as np

from ..codegen.templates import template
from ..errors import TinyfuseError
from ..resources import runtime_dir
from ..targets import ARENA_ALIGN
from .host import GUARD_PATTERN, SANITIZE_CFLAGS, STRICT_CFLAGS, compile_run

SIMD_HOST_HEADER = runtime_dir() / "include" / "tinyfuse" / "simd_host.h"


def build_host_multi(results, workdir: str | Path, cc: str = "gcc", cflags=None, arena_fill: int = 0,
                     sanitize: bool = False, guard: int = 0, simd_host: bool = False, jobs: int = 1,
                     timeout: float | None = None) -> Path:
    """Write every result's sources into ``workdir/src/<name>`` (model names must differ: each model's
    symbols carry its name) and build ``workdir/models``. ``cc``, ``cflags`` (default STRICT_CFLAGS),
    ``arena_fill``, ``sanitize``, ``guard`` (bytes, rounded up to ARENA_ALIGN) and ``timeout`` (seconds
    per compiler run) as in ``host.build_host``; ``jobs`` translation units compile at a time. Raises
    TinyfuseError when names repeat or the compiler fails (its first lines) or times out."""
    names = [r.name for r in results]
    if len(set(names)) != len(names):
        raise TinyfuseError(f"build_host_multi: model names repeat: {sorted(names)}")
    if shutil.which(cc) is None:
        raise TinyfuseError(f"C compiler '{cc}' not found; install it (apt-get install {cc})")
    workdir = Path(workdir)
    srcs = [r.write(workdir / "src" / r.name) for r in results]    # one directory each: write() prunes
    guard = -(-guard // ARENA_ALIGN) * ARENA_ALIGN
    main = workdir / "multi_main.c"
    main.write_text(template("harness/host_multi_main.c.j2").render(models=results, fill=arena_fill, guard=guard,
                                                                   guard_pattern=GUARD_PATTERN))
    flags = [*(cflags or STRICT_CFLAGS), *(SANITIZE_CFLAGS if sanitize else [])]
    if simd_host:
        flags += ["-include", str(SIMD_HOST_HEADER)]
    units = [src / f"{n}{suffix}" for n, src in zip(names, srcs) for suffix in (".c", "_weights.c")] + [main]
    includes = [f"-I{src}" for src in srcs]
    objects = _compile_units(cc, [*flags, *includes], units, workdir / "obj", jobs, timeout)
    exe = workdir / "models"
    proc = compile_run([cc, *flags, *map(str, objects), "-o", str(exe), "-lm"], timeout)
    if proc.returncode:
        raise TinyfuseError(f"{cc} failed linking the models:\n{proc.stderr[:4000]}")
    return exe


def _compile_units(cc: str, flags: list[str], units: list[Path], obj_dir: Path, jobs: int,
                   timeout: float | None = None) -> list[Path]:
    """Each C file to an object in ``obj_dir`` (``jobs`` compilers at a time); TinyfuseError with the
    first failing unit's diagnostics."""
    obj_dir.mkdir(parents=True, exist_ok=True)
    objects = [obj_dir / f"{i}_{u.stem}.o" for i, u in enumerate(units)]

    def one(unit_obj):
        unit, obj = unit_obj
        return unit, compile_run([cc, *flags, "-c", str(unit), "-o", str(obj)], timeout)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for unit, proc in pool.map(one, zip(units, objects)):
            if proc.returncode:
                raise TinyfuseError(f"{cc} failed on the generated code ({unit.name}):\n{proc.stderr[:4000]}")
    return objects


def run_host_multi(exe: str | Path, results, inputs: list[list[np.ndarray]], frames: list[int] | None = None,
                   timeout: float = 300) -> list[list[np.ndarray]]:
    """Run every model (``inputs[m]``: the inputs of model m, any dtype castable) in one process;
    returns ``outs[m][i]``. ``frames[m]`` (default 1) frames of model m run one after the other
    (the arena and the state carried): then ``inputs[m][i]`` holds its frames back to back (e.g.
    ``[frames, *shape]``) and ``outs[m][i]`` has shape ``[frames, *shape]`` when frames > 1.
    TinyfuseError with the program's stderr when it exits non-zero (a sanitizer report, a guard
    hit: exit 3, a run status: exit 4)."""
    exe = Path(exe)
    frames = list(frames) if frames is not None else [1] * len(results)
    io_dir = exe.parent / "io"
    shutil.rmtree(io_dir, ignore_errors=True)
    io_dir.mkdir(parents=True)
    for r, xs, n in zip(results, inputs, frames):
        for i, (t, x) in enumerate(zip(r.inputs, xs)):
            arr = np.ascontiguousarray(np.asarray(x).astype(t.dtype).reshape((n, *t.shape)))
            (io_dir / f"{r.name}_in{i}.bin").write_bytes(arr.tobytes())
    env = {"ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:exitcode=86",
           "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=87"}
    proc = subprocess.run([str(exe), str(io_dir), *map(str, frames)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **env})
    if proc.returncode:
        raise TinyfuseError(f"generated models exited with {proc.returncode}: {proc.stderr[:3000]}")
    return [[np.frombuffer((io_dir / f"{r.name}_out{i}.bin").read_bytes(), dtype=t.dtype)
             .reshape((n, *t.shape) if n > 1 else t.shape) for i, t in enumerate(r.outputs)]
            for r, n in zip(results, frames)]


__all__ = ["SIMD_HOST_HEADER", "build_host_multi", "run_host_multi"]
