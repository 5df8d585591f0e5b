"""Many inputs through one build: on the host a batch test main (``host_batch_main.c.j2``) runs
every sample in one process; on a qemu target one image holds every sample
(``target_batch_main.c.j2``) and one qemu run appends each output to out<i>.bin.

    exe = build_host_batch(result, workdir)
    outs = run_host_batch(exe, result, samples)              # samples[k][i]: input i of sample k
    outs = run_target_batch(result, "cortex-m4", samples, workdir)
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
import numpy as np

from ..codegen.templates import template
from ..errors import TinyfuseError
from .host import STRICT_CFLAGS


def host_batch_files(result) -> list[str]:
    """The names build_host_batch and run_host_batch write directly into their work directory."""
    return ["src", "batch_main.c", "model_batch", *(f"batch_in{i}.bin" for i in range(len(result.inputs))),
            *(f"batch_out{i}.bin" for i in range(len(result.outputs)))]


def build_host_batch(result, workdir: str | Path, cc: str = "gcc") -> Path:
    """Write the sources into ``workdir/src`` and build ``workdir/model_batch`` (strict flags, -O2).
    TinyfuseError with the compiler's first lines when it fails."""
    workdir = Path(workdir)
    src = result.write(workdir / "src")
    main = workdir / "batch_main.c"
    main.write_text(template("harness/host_batch_main.c.j2").render(name=result.name, NAME=result.name.upper(),
                                                            inputs=result.inputs, outputs=result.outputs, states=result.states,
                                                            r=result))
    if shutil.which(cc) is None:
        raise TinyfuseError(f"C compiler '{cc}' not found; install it (apt-get install {cc})")
    exe = workdir / "model_batch"
    cmd = [cc, *STRICT_CFLAGS, f"-I{src}", str(src / f"{result.name}.c"), str(src / f"{result.name}_weights.c"),
           str(main), "-o", str(exe), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise TinyfuseError(f"{cc} failed on the generated code:\n{proc.stderr[:4000]}")
    return exe


def run_host_batch(exe: str | Path, result, samples: list[list[np.ndarray]],
                   timeout: float = 600) -> list[list[np.ndarray]]:
    """Outputs of every sample (``[k][i]``: output i of sample k), from one run of the batch build."""
    exe = Path(exe)
    work, n = exe.parent, len(samples)
    ins, outs = [], [work / f"batch_out{i}.bin" for i in range(len(result.outputs))]
    for i, t in enumerate(result.inputs):
        f = work / f"batch_in{i}.bin"
        f.write_bytes(b"".join(np.ascontiguousarray(np.asarray(s[i]).astype(t.dtype).reshape(t.shape)).tobytes()
                               for s in samples))
        ins.append(f)
    proc = subprocess.run([str(exe), str(n), *map(str, ins), *map(str, outs)], capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode:
        raise TinyfuseError(f"generated model exited with {proc.returncode}: {proc.stderr[:2000]}")
    arrays = [np.frombuffer(f.read_bytes(), dtype=t.dtype).reshape((n, *t.shape)) for f, t in zip(outs, result.outputs)]
    return [[a[k] for a in arrays] for k in range(n)]


def run_target_batch(result, target, samples: list[list[np.ndarray]], workdir: str | Path,
                     timeout: float = 1800) -> list[list[np.ndarray]]:
    """Outputs of every sample on a qemu target, from one image with all samples compiled in
    (``target_batch_main.c.j2``) and one qemu run."""
    from .qemu import _check_exit, _run, build_target, qemu_command
    n = len(samples)
    stacked = [np.stack([np.asarray(s[i]).astype(t.dtype).reshape(t.shape) for s in samples])
               for i, t in enumerate(result.inputs)]
    build = build_target(result, target, workdir, stacked, samples=n)
    run_dir = build.workdir / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    _check_exit(build, _run(qemu_command(build), f"qemu ({build.board.name})", cwd=run_dir, timeout=timeout))
    arrays = []
    for i, t in enumerate(result.outputs):
        raw = (run_dir / f"out{i}.bin").read_bytes()
        if len(raw) != n * t.nbytes:
            raise TinyfuseError(f"output {i} of the target run has {len(raw)} bytes, expected {n} x {t.nbytes}")
        arrays.append(np.frombuffer(raw, dtype=t.dtype).reshape((n, *t.shape)))
    return [[a[k] for a in arrays] for k in range(n)]


__all__ = ["build_host_batch", "host_batch_files", "run_host_batch", "run_target_batch"]
