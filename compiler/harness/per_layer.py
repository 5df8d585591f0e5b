"""Layer-by-layer debugging: run the generated C with a trace hook after every kernel and compare
each kernel's output with the numpy reference (the interpreter on the same fused IR), so the first
diverging layer is named instead of a wrong final answer."""
from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..codegen.templates import template
from ..errors import TinyfuseError
from ..ir import Call, Function, post_order
from ..ir.interpreter import evaluate


@dataclass
class LayerDiff:
    """One kernel's output against the reference: equal elements, and the largest difference."""

    index: int
    kernel: str
    shape: tuple[int, ...]
    exact: int
    total: int
    max_abs_diff: float
    max_abs_ref: float
    dtype: str

    @property
    def matches(self) -> bool:
        """Integer kernels: every element equal; float: within 1e-4 x max|reference|."""
        if self.dtype.startswith("float"):
            return self.max_abs_diff <= 1e-4 * self.max_abs_ref
        return self.exact == self.total


def trace_kernels(result, inputs: list[np.ndarray], workdir: str | Path, cc: str = "gcc") -> list[np.ndarray]:
    """Every kernel's output of one run of the generated C, in kernel order."""
    workdir = Path(workdir)
    src = result.write(workdir / "src")
    main = workdir / "trace_main.c"
    main.write_text(template("harness/host_trace_main.c.j2").render(name=result.name, NAME=result.name.upper(),
                                                            inputs=result.inputs, states=result.states, r=result))
    exe = workdir / "trace"
    proto = workdir / "tf_trace.h"   # the model file gets the hook's prototype through -include
    proto.write_text("void tf_trace(int kernel, const void *data, long bytes);\n")
    cmd = [cc, "-std=c99", "-O1", f"-I{src}", "-DTINYFUSE_TRACE(k,d,n)=tf_trace(k,d,n)", "-include", str(proto),
           str(src / f"{result.name}.c"), str(src / f"{result.name}_weights.c"), str(main), "-o", str(exe), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise TinyfuseError(f"{cc} failed building the per-layer trace: {proc.stderr[:2000]}")
    files = []
    for i, (t, x) in enumerate(zip(result.inputs, inputs)):
        f = workdir / f"in{i}.bin"
        f.write_bytes(np.ascontiguousarray(np.asarray(x).astype(t.dtype).reshape(t.shape)).tobytes())
        files.append(str(f))
    trace = workdir / "trace.bin"
    run = subprocess.run([str(exe), *files, str(trace)], capture_output=True, text=True, timeout=300)
    if run.returncode:
        raise TinyfuseError(f"traced model exited with {run.returncode}")
    data, outs, pos = trace.read_bytes(), [], 0
    for s in result.steps:
        n = s.kernel.out.nbytes
        outs.append(np.frombuffer(data[pos:pos + n], dtype=s.kernel.out.dtype).reshape(s.kernel.out.shape))
        pos += n
    return outs


def reference_kernels(result, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The numpy reference value of every kernel (fused group call) of result.module, in kernel order."""
    env: dict = {}
    evaluate(result.module.main, inputs, env)
    calls = [s.call for s in result.steps] if all(getattr(s, "call", None) is not None for s in result.steps) \
        else [n for n in post_order(result.module.main.body) if isinstance(n, Call) and isinstance(n.op, Function)]
    return [env[id(c)] for c in calls]     # in kernel order (the memory plan may reorder branches)


def compare_layers(result, inputs: list[np.ndarray], workdir: str | Path) -> list[LayerDiff]:
    got, want = trace_kernels(result, inputs, workdir), reference_kernels(result, inputs)
    diffs = []
    for i, (s, g, w) in enumerate(zip(result.steps, got, want)):
        g64, w64 = g.astype(np.float64), np.asarray(w).astype(np.float64)
        diffs.append(LayerDiff(i, s.kernel.name, g.shape, int(np.sum(g64 == w64)), g.size,
                               float(np.max(np.abs(g64 - w64))) if g.size else 0.0,
                               float(np.max(np.abs(w64))) if g.size else 0.0, str(g.dtype)))
    return diffs


def per_layer_lines(result, inputs) -> list[str]:
    """``run --per-layer``'s table: every kernel's output against the numpy reference, and the first
    kernel that diverges."""
    with tempfile.TemporaryDirectory(prefix="tinyfuse_trace_") as tmp:
        diffs = compare_layers(result, inputs, tmp)
    lines = [f"{'kernel':<44} {'shape':<18} {'equal':>12} {'max |diff|':>11}"]
    first = None
    for d in diffs:
        lines.append(f"{d.kernel:<44} {str(list(d.shape)):<18} {f'{d.exact}/{d.total}':>12} {d.max_abs_diff:>11.3g}")
        if first is None and not d.matches:
            first = d
    lines.append(f"first diverging layer: {first.kernel}" if first else "no layer diverges from the numpy reference")
    return lines
