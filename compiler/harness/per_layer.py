"""Layer-by-layer debugging (``run --per-layer``): run the generated C with a trace hook after every
kernel, on the host (gcc) or under qemu on a target, and compare each kernel's output with

- the numpy reference of the same fused group (the interpreter on the compiled IR: fixed-point exact
  for int8), and
- for a .tflite model, TFLite Micro's value of the same tensor where the kernel's output is a tensor
  of the model (harness/layer_map.py; TFLM keeps every tensor for this one invocation),

so the first diverging layer is named instead of a wrong final answer.

The model is compiled with ``TINYFUSE_TRACE(kernel, data, bytes)`` defined to the test main's
``tf_trace`` (host.trace_cflags): one record per kernel, ``uint32 kernel, uint32 bytes`` then the
output bytes, written to ``trace.bin`` (on a target through semihosting, qemu.build_target(trace=True)).
Integer kernels match when every element is equal; float kernels within FLOAT_RTOL x max |reference|.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..codegen.templates import template
from ..errors import TinyfuseError
from ..ir import Call, Function, post_order
from ..ir.interpreter import evaluate
from .host import trace_cflags

FLOAT_RTOL = 1e-4        # as run's end-to-end float verdict (harness/verdict.py)


@dataclass
class LayerDiff:
    """One kernel's output against the numpy reference (equal elements, largest difference) and,
    where the kernel's output is a TFLite tensor (``tflite``), against TFLite Micro's value of it."""

    index: int
    kernel: str
    shape: tuple[int, ...]
    exact: int
    total: int
    max_abs_diff: float
    max_abs_ref: float
    dtype: str
    layers: list[str] = field(default_factory=list)     # source layers (Function.source_spans)
    tflite: object = None                               # layer_map.TfliteTensor or None
    tflm_exact: int | None = None
    tflm_max_abs_diff: float | None = None
    tflm_max_abs_ref: float | None = None

    @property
    def matches(self) -> bool:
        """Integer kernels: every element equal; float: within FLOAT_RTOL x max|reference|."""
        return _within(self.dtype, self.exact, self.total, self.max_abs_diff, self.max_abs_ref)

    @property
    def tflm_matches(self) -> bool | None:
        """As :attr:`matches`, against TFLite Micro; None when the kernel has no TFLM value."""
        if self.tflm_exact is None:
            return None
        return _within(self.dtype, self.tflm_exact, self.total, self.tflm_max_abs_diff, self.tflm_max_abs_ref)

    @property
    def diverges(self) -> bool:
        return not self.matches or self.tflm_matches is False


def _within(dtype: str, exact: int, total: int, diff: float, ref: float) -> bool:
    return diff <= FLOAT_RTOL * ref if dtype.startswith("float") else exact == total


def _diff(got: np.ndarray, want: np.ndarray) -> tuple[int, float, float]:
    """(equal elements, max |got - want|, max |want|), in float64 over the row-major elements."""
    g, w = got.astype(np.float64).reshape(-1), np.asarray(want).astype(np.float64).reshape(-1)
    if not g.size:
        return 0, 0.0, 0.0
    return int(np.sum(g == w)), float(np.max(np.abs(g - w))), float(np.max(np.abs(w)))


def read_trace(path: str | Path, result, byteorder: str = "<") -> list[np.ndarray]:
    """Every kernel's output from the trace file ``path`` (records of the module doc), in kernel
    order. Raises TinyfuseError naming the first kernel whose record is missing or malformed (a
    run that faulted inside that kernel leaves the records of the kernels before it)."""
    data, pos, outs = Path(path).read_bytes(), 0, []
    head = np.dtype(f"{byteorder}u4")
    for i, s in enumerate(result.steps):
        want = s.kernel.out.nbytes
        if pos + 8 > len(data):
            raise TinyfuseError(f"the per-layer trace ends before kernel {i} ({s.kernel.name}): the run stopped "
                                "in it")
        k, n = (int(v) for v in np.frombuffer(data, head, 2, pos))
        if (k, n) != (i, want) or pos + 8 + n > len(data):
            raise TinyfuseError(f"trace record {i} is kernel {k} with {n} bytes ({len(data) - pos - 8} left); "
                                f"expected kernel {i} ({s.kernel.name}) with {want} bytes")
        outs.append(np.frombuffer(data, s.kernel.out.dtype, int(np.prod(s.kernel.out.shape)), pos + 8)
                    .reshape(s.kernel.out.shape))
        pos += 8 + n
    if pos != len(data):
        raise TinyfuseError(f"the trace holds {len(data) - pos} bytes after its {len(result.steps)} kernels")
    return outs


def _stopped(trace: Path, result, byteorder: str = "<") -> str:
    """Where a failed traced run stopped: '; ' + why its trace is incomplete, or '' when it is not."""
    try:
        read_trace(trace, result, byteorder)
    except (TinyfuseError, OSError) as e:
        return f"; {e}"
    return ""


def trace_kernels(result, inputs: list[np.ndarray], workdir: str | Path, cc: str = "gcc") -> list[np.ndarray]:
    """Every kernel's output of one run of the host build ``result`` (gcc), in kernel order."""
    workdir = Path(workdir)
    src = result.write(workdir / "src")
    main = workdir / "trace_main.c"
    main.write_text(template("harness/host_trace_main.c.j2").render(name=result.name, NAME=result.name.upper(),
                                                            inputs=result.inputs, states=result.states, r=result))
    exe = workdir / "trace"
    cmd = [cc, "-std=c99", "-O1", f"-I{src}", *trace_cflags(workdir), str(src / f"{result.name}.c"),
           str(src / f"{result.name}_weights.c"), str(main), "-o", str(exe), "-lm"]
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
        how = f"was killed by signal {-run.returncode}" if run.returncode < 0 else f"exited with {run.returncode}"
        raise TinyfuseError(f"the traced model {how}{_stopped(trace, result, '=')}")
    return read_trace(trace, result, "=")


def trace_target(result, target, inputs: list[np.ndarray], workdir: str | Path) -> tuple[list[np.ndarray], str]:
    """Every kernel's output of one run of ``result`` built for the qemu ``target`` with the trace hook
    (qemu.build_target(trace=True)), in kernel order, and the qemu board it ran on."""
    from .qemu import build_target, run_target
    build = build_target(result, target, workdir, inputs, trace=True)
    trace = build.workdir / "run" / "trace.bin"
    try:
        run_target(build, timeout=600)
    except TinyfuseError as e:
        raise TinyfuseError(f"{e}{_stopped(trace, result)}") from None
    return read_trace(trace, result), build.board.name


def reference_kernels(result, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The numpy reference value of every kernel (fused group call) of result.module, in kernel order;
    a stateful model runs one frame from its reset state (``State.initial``); a ``--weights-dtype float16``
    build has its float constants rounded through binary16, as the C reads them (half_oracle.py)."""
    env, mod, renamed = {}, result.module, {}
    if result.options is not None and result.options.weights_dtype == "float16":
        from .half_oracle import half_rounded_module
        mod = half_rounded_module(mod, renamed)
    evaluate(mod.main, [*inputs, *(s.initial() for s in mod.states)], env)
    calls = [s.call for s in result.steps] if all(getattr(s, "call", None) is not None for s in result.steps) \
        else [n for n in post_order(result.module.main.body) if isinstance(n, Call) and isinstance(n.op, Function)]
    return [env[id(renamed.get(id(c), c))] for c in calls]   # in kernel order (the plan may reorder branches)


def _layers(step) -> list[str]:
    call = getattr(step, "call", None)
    return call.op.source_spans() if call is not None and isinstance(call.op, Function) else []


def diff_layers(result, got: list[np.ndarray], want: list[np.ndarray], tflite=None, tflm=None) -> list[LayerDiff]:
    """One LayerDiff per kernel: traced outputs ``got`` against the references ``want``; ``tflite``
    (per kernel: its TfliteTensor or None) and ``tflm`` ({tensor index: TFLM's value}) add the TFLM column."""
    diffs = []
    for i, (s, g, w) in enumerate(zip(result.steps, got, want)):
        exact, diff, ref = _diff(g, w)
        d = LayerDiff(i, s.kernel.name, g.shape, exact, g.size, diff, ref, str(g.dtype), _layers(s))
        d.tflite = t = tflite[i] if tflite is not None else None
        if t is not None and tflm is not None and t.index in tflm:
            d.tflm_exact, d.tflm_max_abs_diff, d.tflm_max_abs_ref = _diff(g, tflm[t.index])
        diffs.append(d)
    return diffs


def compare_layers(result, inputs: list[np.ndarray], workdir: str | Path) -> list[LayerDiff]:
    """The host build's per-kernel trace against the numpy reference (no TFLM column)."""
    return diff_layers(result, trace_kernels(result, inputs, workdir), reference_kernels(result, inputs))
