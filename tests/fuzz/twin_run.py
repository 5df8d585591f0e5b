"""How the TFLM twin fuzzer (tests/fuzz/tflm_twin.py) runs a drawn model on each side: TFLite Micro in a
worker process of its own, tinyfuse compiled for the kernel variant asked and built either on the host
(many models in one program, ``harness.multi``; the SIMD variants through ``simd_host.h``, the portable
stand-ins of the Arm intrinsics) or for a Cortex-M target and run under qemu (``harness.qemu``).

    variant   compiled for   built with                      kernels it can get
    ref       host           gcc                             portable C
    arm_dsp   cortex-m4      gcc + simd_host.h               arm_dsp (int8), arm_fpu (float)
    arm_mve   cortex-m55     gcc + simd_host.h               arm_mve, arm_dsp (int8), arm_fpu (float)
    arm_fpu   cortex-m4      gcc + simd_host.h               arm_fpu (float), arm_dsp (int8)
    --qemu T  T              T's arm-none-eabi-gcc, qemu     all T has

Which variants a model's kernels actually got is read from the compile result (``kernel_variants``):
a kernel's ``variant``, and for the kernels whose variant names their form rather than the ISA
(``fused_chain``, ``inplace_*``, ``sparse``) the intrinsics their C calls.
"""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import shutil
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

CFLAGS = ["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror"]
VARIANT_TARGET = {"ref": "host", "arm_dsp": "cortex-m4", "arm_mve": "cortex-m55", "arm_fpu": "cortex-m4"}
SIMD = ("arm_dsp", "arm_mve", "arm_fpu")
MVE_MARKS = ("vldrbq", "vmladavaq", "vqrdmulhq", "int32x4_t", "vctp8q", "vctp32q")
DSP_MARKS = ("tf_smlad", "tf_smuad", "tf_sxtb16", "tf_sxtab16", "tf_smlabb", "tf_smlatt", "tf_rq2", "tf_smmlar")
ARENA_FILL, GUARD = 0x5A, 64          # host builds: a non-zero arena and guard regions around it
BUILD_TIMEOUT = 600                   # seconds per compiler run: a runaway build is a failure, not a hang
# tuned builds: how often each kind of tune move is picked (the lowering knobs of the SIMD kernels most)
MOVE_WEIGHTS = {"weights": 4.0, "channels": 4.0, "unroll": 4.0, "body": 4.0, "inplace": 2.0, "chain": 2.0,
                "variant": 0.5}


# ----------------------------------------------------------------------------- the TFLM side
def _tflm_run(model: bytes, inputs: list) -> list | str:
    """In the worker process: TFLM's outputs, or why it refused (its first stderr line) as a str. TFLM
    prints its reasons on file descriptor 2, caught in a temporary file."""
    import os
    from tests.builders.tflm_cases import tflm_oneop
    saved = os.dup(2)
    with tempfile.TemporaryFile() as err:
        os.dup2(err.fileno(), 2)
        try:
            return tflm_oneop().run(model, inputs)
        except Exception as e:  # noqa: BLE001 - TFLM's RuntimeError (and the editor's ValueError): refused
            err.seek(0)
            said = [ln.strip() for ln in err.read().decode(errors="replace").splitlines() if ln.strip()]
            return f"{type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}" + \
                (f" ({said[0][:200]})" if said else "")
        finally:
            os.dup2(saved, 2)
            os.close(saved)


class Tflm:
    """TFLM in a worker process (spawned, restarted when a model kills it)."""

    def __init__(self):
        self.pool = None

    def run(self, model: bytes, inputs: list):
        if self.pool is None:
            self.pool = cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        try:
            return self.pool.submit(_tflm_run, model, inputs).result(timeout=120)
        except (cf.process.BrokenProcessPool, cf.TimeoutError) as e:
            self.close()
            return f"TFLM process died ({type(e).__name__})"

    def close(self):
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None


# ----------------------------------------------------------------------------- one model
@dataclass
class Outcome:
    status: str
    detail: str = ""
    ratio: float = 0.0           # float twins: the largest |tinyfuse - TFLM| / bound


@dataclass
class Item:
    """One drawn model on its way through both sides."""

    seed: int
    op: str
    d: object                    # the Draw (None when drawing failed)
    out: Outcome | None = None   # set once the model is decided
    want: list | None = None
    result: object = None
    variants: tuple = ()
    seconds: float = 0.0


def kernel_variants(kernel) -> set[str]:
    """The variants one kernel ran: its ``variant``, plus arm_dsp / arm_mve when a kernel of another form
    (a poly-fused chain's SIMD stages, an in-place SIMD kernel, the DSP sparse layout) calls their intrinsics."""
    found = {kernel.variant}
    if kernel.variant not in SIMD:
        found |= {"arm_mve"} if any(m in kernel.code for m in MVE_MARKS) else set()
        found |= {"arm_dsp"} if any(m in kernel.code for m in DSP_MARKS) else set()
    return found


def compare(got: list, want: list, wrap, tol=None) -> Outcome:
    """int8 and int16 outputs byte for byte (outside the ``wrap`` channels of output 0), float32 outputs within
    ``tol`` (output 0; others exactly)."""
    if len(got) != len(want):
        return Outcome("failure", f"{len(got)} outputs, TFLM has {len(want)}")
    masked, ratio = False, 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.dtype != w.dtype or g.shape != w.shape:
            return Outcome("failure", f"output {i}: {g.dtype}{list(g.shape)}, TFLM {w.dtype}{list(w.shape)}")
        if g.dtype == np.float32 and tol is not None and i == 0:
            diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
            bound = np.broadcast_to(np.asarray(tol, np.float64), g.shape)
            bad = ~(diff <= bound)
            ratio = float(np.max(diff / np.maximum(bound, 1e-300), initial=0.0))
            if np.any(bad):
                where = tuple(np.argwhere(bad)[0].tolist())
                return Outcome("failure", f"output {i}: {int(np.sum(bad))}/{g.size} beyond the float bound, first at "
                               f"{list(where)}: {g[where]!r} vs TFLM {w[where]!r} (bound {bound[where]:.3g})", ratio=ratio)
            continue
        keep = np.ones(g.shape, bool)
        if i == 0 and np.any(wrap):
            keep = np.broadcast_to(~np.asarray(wrap, bool), g.shape) if np.ndim(wrap) else np.zeros(g.shape, bool)
            masked = True
        if g.dtype not in (np.int8, np.int16):
            if g.tobytes() != w.tobytes():
                return Outcome("failure", f"output {i}: {g.dtype} bytes differ from TFLM")
            continue
        bad = (g != w) & keep
        if np.any(bad):
            where = tuple(np.argwhere(bad)[0].tolist())
            lsb = int(np.max(np.abs(g.astype(np.int64) - w.astype(np.int64))[bad]))
            return Outcome("failure", f"output {i}: {int(np.sum(bad))}/{g.size} differ from TFLM, max {lsb} LSB, "
                           f"first at {list(where)}: {g[where]} vs {w[where]}")
    return Outcome("tflm wraps" if masked else "exact", ratio=ratio)


def _where(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    return f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""


def prepare(item: Item, tflm: Tflm, target: str) -> None:
    """TFLM's outputs and tinyfuse's compile result for ``target``; decides the item when either refuses."""
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import TinyfuseError
    t0 = time.time()
    try:
        want = tflm.run(item.d.model, item.d.inputs)
        if isinstance(want, str):
            item.out = Outcome("tflm refused", want)
            return
        item.want = want
        options = dict(item.d.options)
        tune = options.pop("tune", None)
        try:
            item.result = compile_model(item.d.model, target=target, name=f"s{item.seed}", **options)
            if tune is not None:
                item.result = tuned_build(item, target, options, tune)
        except TinyfuseError as e:
            item.out = Outcome("tf refused", str(e).splitlines()[0][:300])
            return
        except Exception as e:  # noqa: BLE001 - a compiler crash is a failure
            item.out = Outcome("failure", f"compile: {type(e).__name__}: {str(e)[:300]}{_where(e)}")
            return
        item.variants = tuple(sorted(set().union(*(kernel_variants(k) for k in item.result.kernels))))
    finally:
        item.seconds += time.time() - t0


def tuned_build(item: Item, target: str, options: dict, seed: int):
    """The item compiled again with a random ``tinyfuse tune`` configuration: 1..3 compatible moves its
    default build offers (``tune.space.moves_of``: lowering knobs such as int16 weights, channels per
    block and unroll, out-of-place kernels, the portable variant, chain tile widths, the global ones),
    recorded in the item's parameters."""
    import warnings

    from tinyfuse.cost.records import TuningRecords
    from tinyfuse.driver import compile_model
    from tinyfuse.tune.space import apply_moves, compatible, moves_of
    rng = np.random.default_rng(seed)
    moves = moves_of(item.result)
    weight = np.array([MOVE_WEIGHTS.get(m.family.split(":")[0], 1.0) for m in moves])
    order = rng.choice(len(moves), size=min(len(moves), int(rng.integers(1, 4))), replace=False, p=weight / weight.sum())
    picked = [moves[int(i)] for i in order]
    while len(picked) > 1 and not compatible(picked):
        picked.pop()
    item.d.params["tuned"] = [m.label for m in picked]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*per-kernel knobs match no kernel")
        return compile_model(item.d.model, target=target, name=f"s{item.seed}",
                             tuning_records=TuningRecords(config=apply_moves(picked)), **options)


def _build_run(items: list[Item], work: Path, simd_host: bool, jobs: int) -> None:
    from tinyfuse.harness.multi import build_host_multi, run_host_multi
    shutil.rmtree(work, ignore_errors=True)
    exe = build_host_multi([it.result for it in items], work, cflags=CFLAGS, simd_host=simd_host, jobs=jobs,
                           guard=GUARD, arena_fill=ARENA_FILL, timeout=BUILD_TIMEOUT)
    outs = run_host_multi(exe, [it.result for it in items], [it.d.inputs for it in items], timeout=600)
    for it, got in zip(items, outs):
        it.out = compare(got, it.want, it.d.wrap, it.d.tol)


def run_host_batch(items: list[Item], work: Path, simd_host: bool, jobs: int = 1) -> None:
    """Build the compiled items into one host program and run it; when the build or the run fails,
    each item alone (so a failure names its model)."""
    todo = [it for it in items if it.out is None]
    if not todo:
        return
    t0 = time.time()
    try:
        _build_run(todo, work, simd_host, jobs)
    except Exception:  # noqa: BLE001 - gcc refusing one model's C, or one model's run failing: retry alone
        for it in todo:
            try:
                _build_run([it], work, simd_host, jobs)
            except Exception as e:  # noqa: BLE001
                it.out = Outcome("failure", f"build/run: {type(e).__name__}: {str(e)[:500]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    share = (time.time() - t0) / len(todo)
    for it in todo:
        it.seconds += share


def run_qemu(item: Item, target: str, work: Path) -> None:
    """Cross-compile one compiled item for ``target`` (its inputs compiled in), run it under qemu."""
    from tinyfuse.harness.qemu import build_target, run_target
    if item.out is not None:
        return
    t0 = time.time()
    shutil.rmtree(work, ignore_errors=True)
    try:
        build = build_target(item.result, target, work, item.d.inputs)
        item.out = compare(run_target(build), item.want, item.d.wrap, item.d.tol)
        steps = [build.workdir / "run" / f"step_out{i}.bin" for i in range(len(item.result.outputs))]
        if item.out.status != "failure" and all(f.exists() for f in steps):     # step fission: _step's outputs too
            got = [np.frombuffer(f.read_bytes(), t.dtype).reshape(t.shape) for f, t in zip(steps, item.result.outputs)]
            stepped = compare(got, item.want, item.d.wrap, item.d.tol)
            if stepped.status == "failure":
                item.out = Outcome("failure", f"{target} <name>_step: {stepped.detail}")
    except Exception as e:  # noqa: BLE001 - the cross compiler refusing the C, a fault, a timeout
        item.out = Outcome("failure", f"qemu {target}: {type(e).__name__}: {str(e)[:500]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        item.seconds += time.time() - t0


@dataclass
class Runner:
    """Runs batches of drawn items for one variant (host) or one qemu target."""

    variant: str = "ref"
    qemu: str | None = None
    jobs: int = 1
    tflm: Tflm = field(default_factory=Tflm)
    work: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="tf_twin_")))

    @property
    def target(self) -> str:
        return self.qemu or VARIANT_TARGET[self.variant]

    def asked(self) -> tuple[str, ...]:
        """The variants whose use counts as coverage: the one asked, or every SIMD variant under qemu."""
        if self.qemu:
            from tinyfuse.options import resolve_variants
            from tinyfuse.targets import get_target
            return resolve_variants(get_target(self.qemu))
        return (self.variant,)

    def run(self, items: list[Item]) -> None:
        for it in items:
            if it.out is None:
                prepare(it, self.tflm, self.target)
        if self.qemu:
            for it in items:
                run_qemu(it, self.qemu, self.work / "q")
        else:
            run_host_batch(items, self.work / "h", simd_host=self.variant != "ref", jobs=self.jobs)

    def close(self) -> None:
        self.tflm.close()
        shutil.rmtree(self.work, ignore_errors=True)
