"""One differential run of the graph fuzzer (tests/fuzz/generator.py): a model compiled by tinyfuse for
a target (the host, or a Cortex-M target whose SIMD kernels build on the host through simd_host.h,
the portable stand-ins of the intrinsics) → gcc → run, against onnxruntime, the compiler's numpy
reference and, on the host build, the per-kernel real-arithmetic oracle (module doc of generator.py)."""
from __future__ import annotations

import shutil
import tempfile
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from tests.fuzz.graph_build import spec_model

CFLAGS = ["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror"]
FLOAT_REL = 1e-4            # the float criterion: 1e-4 x max|ref|
LSB_LIMIT = 8               # int8 vs onnxruntime (float requantization), output LSBs
BUILD_TIMEOUT = 600         # seconds for gcc: a runaway build is a crash, not a hang


@dataclass
class Outcome:
    """``status``: ok | rejected (a clear TinyfuseError) | crash (any other exception, gcc error,
    nonzero exit) | mismatch (float vs ORT) | mismatch_ref (int8 C vs numpy reference) |
    mismatch_real (an int8 kernel more than 1 LSB from real arithmetic, or without real facts) |
    mismatch_ort (int8 more than LSB_LIMIT from ORT)."""

    status: str
    detail: str = ""
    lsb: int | None = None
    kernels: int = 0
    ops: list = field(default_factory=list)
    variants: list = field(default_factory=list)     # the kernel variants used (twin_run.kernel_variants)

    @property
    def failed(self) -> bool:
        return self.status not in ("ok", "rejected")


def ort_outputs(model: onnx.ModelProto, feeds) -> list[np.ndarray]:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)


def output_scales(model: onnx.ModelProto) -> list[float | None]:
    """The scale of the DequantizeLinear producing each graph output (None for a float op)."""
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    prod = {o: n for n in model.graph.node for o in n.output}
    out = []
    for o in model.graph.output:
        n = prod.get(o.name)
        out.append(float(inits[n.input[1]].reshape(-1)[0]) if n is not None and n.op_type == "DequantizeLinear"
                   and n.input[1] in inits else None)
    return out


def _lsb_gain(result) -> float:
    """The largest factor by which one int8 kernel turns a 1-LSB change of an input into output LSBs:
    its requantize's real multiplier (s_in·s_w/s_out, or s_in/s_out), times 127 (the largest |W_q|) when
    a weighted op feeds it. Two implementations each within 1 LSB of real arithmetic per kernel can end
    that many output LSBs apart after such a kernel (seed 7177: s_in·|w|/s_out = 24.5, 25 LSB from
    onnxruntime)."""
    from tinyfuse.ir import Call, Function, post_order
    gain = 1.0
    for step in result.steps:
        fn = step.call.op
        for node in post_order(fn.body) if isinstance(fn, Function) else ():
            real = node.attrs.get("real_multiplier") if isinstance(node, Call) else None
            if not real:
                continue
            src = node.args[0]
            while isinstance(src, Call) and src.op == "add":        # the bias add between conv and requantize
                src = src.args[0]
            weighted = isinstance(src, Call) and any(k in str(src.op) for k in ("conv", "matmul", "dense"))
            gain = max(gain, float(np.max(np.abs(real))) * (127.0 if weighted else 1.0))
    return gain


def check_model(model: onnx.ModelProto, feeds: dict, quant: bool, workdir: Path | None = None,
                lsb_limit: int | None = LSB_LIMIT, target: str = "host") -> Outcome:
    """The whole differential check of one model (see Outcome). ``lsb_limit`` None: the int8 LSB
    difference to onnxruntime is recorded, not judged (hand-drawn QDQ: multipliers > 1 amplify the
    1-LSB steps the real-arithmetic oracle allows per kernel, so only that oracle judges). ``target``:
    compile for it; a Cortex-M build runs on the host through simd_host.h and is judged by onnxruntime
    and the numpy reference (exact for int8); the per-kernel real-arithmetic oracle traces host builds
    only (the same seeds without a target)."""
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import TinyfuseError
    from tinyfuse.harness import build_host, run_host
    from tinyfuse.harness.multi import SIMD_HOST_HEADER
    from tinyfuse.ir.interpreter import run_module
    from tests.fuzz.twin_run import kernel_variants

    try:
        refs = ort_outputs(model, feeds)
    except Exception as e:  # noqa: BLE001 - the generator made something ORT refuses: not our bug
        return Outcome("rejected", f"onnxruntime: {str(e).splitlines()[0][:200]}")
    own = workdir is None
    work = Path(tempfile.mkdtemp(prefix="tf_fuzz_")) if own else Path(workdir)
    try:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = compile_model(model, name="fuzz", target=target)
            float_fallback = any("runs in float" in str(w.message) for w in caught)
        except TinyfuseError as e:
            return Outcome("rejected", str(e))
        except Exception as e:  # noqa: BLE001
            return Outcome("crash", f"compile: {type(e).__name__}: {_last_frame(e)}")
        inputs = [feeds[t.name] for t in result.inputs]
        info = dict(kernels=len(result.steps), ops=[k.ops for k in result.kernels],
                    variants=sorted(set().union(*(kernel_variants(k) for k in result.kernels))))
        flags = CFLAGS + (["-include", str(SIMD_HOST_HEADER)] if target != "host" else [])
        try:
            outs = run_host(build_host(result, work, cflags=flags, timeout=BUILD_TIMEOUT), result, inputs)
        except Exception as e:  # noqa: BLE001 - gcc rejecting generated C, or the model crashing
            return Outcome("crash", f"build/run: {type(e).__name__}: {str(e)[:600]}", **info)
        if not quant:
            for i, (o, r) in enumerate(zip(outs, refs)):
                scale = max(float(np.max(np.abs(r))), 1e-30)
                err = float(np.max(np.abs(o.astype(np.float64) - r.astype(np.float64))))
                if not err <= FLOAT_REL * scale:
                    return Outcome("mismatch", f"output {i}: max|C - ORT| = {err:.3g} > {FLOAT_REL} x {scale:.3g}",
                                   **info)
            return Outcome("ok", **info)
        try:
            interp = run_module(result.module, inputs)
        except Exception as e:  # noqa: BLE001
            return Outcome("crash", f"interpreter: {type(e).__name__}: {_last_frame(e)}", **info)
        scales = output_scales(model)
        for i, (o, r, s) in enumerate(zip(outs, interp, scales)):
            r = np.asarray(r).astype(o.dtype)
            if s is None:   # a float op after the last DequantizeLinear (one ORT leaves unquantized): float rules
                scale = max(float(np.max(np.abs(r))), 1e-30)
                same = float(np.max(np.abs(o.astype(np.float64) - r))) <= FLOAT_REL * scale
            elif float_fallback:   # an op legalize_qdq left in float between int8 ops: C and numpy float
                same = float(np.max(np.abs(o.astype(np.float64) - r))) <= 1.5 * s   # may round 1 LSB apart
            else:
                same = np.array_equal(o, r)
            if not same:
                return Outcome("mismatch_ref", f"output {i}: {int(np.sum(o != r))}/{o.size} C outputs differ from "
                               f"the numpy reference", **info)
        if target != "host":
            return _vs_ort(outs, refs, scales, lsb_limit, result, info)
        try:
            bad = _real_oracle(result, inputs, work)
        except Exception as e:  # noqa: BLE001 - the oracle or the trace build refusing the model
            return Outcome("crash", f"real oracle: {type(e).__name__}: {_last_frame(e)}", **info)
        if bad:
            return Outcome("mismatch_real", bad, **info)
        return _vs_ort(outs, refs, scales, lsb_limit, result, info)
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


def _vs_ort(outs, refs, scales, lsb_limit, result, info) -> Outcome:
    """The int8 outputs' LSB difference to onnxruntime, judged against ``lsb_limit`` unless a kernel
    amplifies one input LSB beyond it (``_lsb_gain``)."""
    lsb = 0
    for o, r, s in zip(outs, refs, scales):
        if s:
            lsb = max(lsb, int(np.max(np.rint(np.abs(o.astype(np.float64) - r.astype(np.float64)) / s))))
    if lsb_limit is not None and lsb > lsb_limit:
        gain = _lsb_gain(result)
        if gain <= lsb_limit:
            return Outcome("mismatch_ort", f"{lsb} LSB from onnxruntime (limit {lsb_limit}; largest per-LSB gain "
                           f"{gain:.2f})", lsb=lsb, **info)
        return Outcome("ok", f"{lsb} LSB from onnxruntime: a kernel amplifies one input LSB {gain:.1f}x "
                       "(recorded, not judged: every kernel is within 1 LSB of real arithmetic)", lsb=lsb, **info)
    return Outcome("ok", lsb=lsb, **info)


def _real_oracle(result, inputs, work: Path) -> str:
    """The per-kernel real-arithmetic oracle (harness/real_oracle.py) on the C run's own kernel
    inputs, ONNX rounding (half to even): '' when every int8 kernel is within 1 LSB, else why not."""
    from tinyfuse.harness.real_oracle import check_kernels, report_lines
    report = check_kernels(result, inputs, work / "trace", "half_even")
    return "" if report.holds else "; ".join(report_lines(report))


def check_spec(spec: dict, workdir: Path | None = None, target: str = "host") -> Outcome:
    try:
        model, feeds = spec_model(spec)
    except Exception as e:  # noqa: BLE001 - a generator or quantizer problem, reported as such
        return Outcome("rejected", f"generator/quantizer: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    return check_model(model, feeds, spec["quant"], workdir, None if spec.get("qdq") == "hand" else LSB_LIMIT, target)


def _last_frame(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
    return f"{str(e).splitlines()[0][:300] if str(e) else ''}{where}"
