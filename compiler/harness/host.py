"""Host harness: gcc the generated sources with a test main, run it on raw input files, read the
raw outputs back as numpy arrays."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

from ..codegen.templates import template
from ..errors import TinyfuseError
from ..targets import ARENA_ALIGN

STRICT_CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"]
CONVERSION_CFLAGS = [*STRICT_CFLAGS, "-Wconversion"]
SANITIZE_CFLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g"]
GUARD_PATTERN = 0xCD       # the guard bytes around the arena (not a fill a test uses for the arena)
TRACE_PROTOTYPE = "void tf_trace(int kernel, const void *data, long bytes);\n"


def trace_cflags(workdir: Path) -> list[str]:
    """The flags that compile the generated model with its per-kernel hook ``TINYFUSE_TRACE(kernel,
    data, bytes)`` (model.c.j2) calling ``tf_trace``, defined by the test main (host_trace_main.c.j2,
    target_main.c.j2 with ``trace``); the prototype reaches the model file through ``-include``
    (written as ``workdir/tf_trace.h``)."""
    proto = Path(workdir) / "tf_trace.h"
    proto.write_text(TRACE_PROTOTYPE)
    return ["-DTINYFUSE_TRACE(k,d,n)=tf_trace(k,d,n)", "-include", str(proto)]


def host_files(result) -> list[str]:
    """The names build_host and run_host write directly into their work directory."""
    return ["src", "main.c", "model", *(f"in{i}.bin" for i in range(len(result.inputs))),
            *(f"out{i}.bin" for i in range(len(result.outputs)))]


def build_host(result, workdir: str | Path, cc: str = "gcc", cflags=None, arena_fill: int = 0,
               sanitize: bool = False, guard: int = 0, timeout: float | None = None) -> Path:
    """Write the sources into ``workdir/src`` and build ``workdir/model``. Raises TinyfuseError with the
    compiler's first lines if the C compiler fails.

    ``cc`` is the compiler (gcc, clang, ...), ``cflags`` replaces STRICT_CFLAGS; ``arena_fill`` is the
    byte the test main fills the arena with. ``sanitize`` adds AddressSanitizer and
    UndefinedBehaviorSanitizer (any report aborts the run, so run_host raises). ``guard`` puts that
    many bytes (rounded up to ARENA_ALIGN, 16) before and after the arena, filled with GUARD_PATTERN: the main
    checks them after the run and exits with 3 naming the first overwritten byte; under ASan the
    guards are also poisoned, so a read or write there is reported where it happens. ``timeout``
    (seconds, None: none): TinyfuseError when the compiler takes longer."""
    workdir = Path(workdir)
    src = result.write(workdir / "src")
    main = workdir / "main.c"
    guard = -(-guard // ARENA_ALIGN) * ARENA_ALIGN
    main.write_text(template("harness/host_main.c.j2").render(name=result.name, NAME=result.name.upper(),
                                                      inputs=result.inputs, outputs=result.outputs, fill=arena_fill,
                                                      guard=guard, guard_pattern=GUARD_PATTERN, states=result.states,
                                                      r=result))
    if shutil.which(cc) is None:
        raise TinyfuseError(f"C compiler '{cc}' not found; install it (apt-get install {cc})")
    exe = workdir / "model"
    flags = [*(cflags or STRICT_CFLAGS), *(SANITIZE_CFLAGS if sanitize else [])]
    cmd = [cc, *flags, f"-I{src}", str(src / f"{result.name}.c"),
           str(src / f"{result.name}_weights.c"), str(main), "-o", str(exe), "-lm"]
    proc = compile_run(cmd, timeout)
    if proc.returncode:
        raise TinyfuseError(f"{cc} failed on the generated code:\n{proc.stderr[:4000]}")
    return exe


def compile_run(cmd: list[str], timeout: float | None) -> subprocess.CompletedProcess:
    """Run a compiler command; TinyfuseError when it takes longer than ``timeout`` seconds (None: no limit)."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TinyfuseError(f"{cmd[0]} did not finish in {timeout:g} s: {' '.join(map(str, cmd[:4]))} ...") from None


def run_host(exe: str | Path, result, inputs: list[np.ndarray], timeout: float = 120) -> list[np.ndarray]:
    """Run the built model once on ``inputs`` (one array per model input, any dtype castable)."""
    exe = Path(exe)
    work = exe.parent
    in_files, out_files = [], []
    for i, (t, x) in enumerate(zip(result.inputs, inputs)):
        arr = np.ascontiguousarray(np.asarray(x).astype(t.dtype).reshape(t.shape))
        f = work / f"in{i}.bin"
        f.write_bytes(arr.tobytes())
        in_files.append(str(f))
    for i in range(len(result.outputs)):
        out_files.append(str(work / f"out{i}.bin"))
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:exitcode=86",
           "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=87"}
    proc = subprocess.run([str(exe), *in_files, *out_files], capture_output=True, text=True, timeout=timeout,
                          env=env)
    if proc.returncode:
        raise TinyfuseError(f"generated model exited with {proc.returncode}: {proc.stderr[:2000]}")
    return [np.frombuffer(Path(f).read_bytes(), dtype=t.dtype).reshape(t.shape)
            for f, t in zip(out_files, result.outputs)]
