"""Parser fuzzing of .onnx and .tflite (issue 13): mutants from tests/fuzz/parser_mutators.py, drawn
by hypothesis, through ``compile_model`` and through the real CLI.

The property, per mutant: ``compile_model(path)`` returns (and then ``CompileResult.write`` writes
its files), or raises :class:`TinyfuseError` whose message is one line and no output directory
appears. Through ``python -m tinyfuse compile M -o DIR``: exit 0 (DIR holds metadata.json and
``gcc -fsyntax-only`` accepts the generated C), or exit 2 with exactly one ``error:`` line on stderr
(other lines only ``warning:``) and DIR as it was (the file put there beforehand, nothing else). Anything else (another exception, a multi-line
error, exit 3 or a signal, a partial output, more than ``TIMEOUT`` seconds) counts as *other*.

Each mutant runs in a worker process (forked, memory-limited to ``MEMORY_LIMIT``); the parent kills
a worker that exceeds the timeout or dies and starts another. Outcomes per format:
``tried, clear error, compiled, other``.

    python -m tests.fuzz.parsers --count 10000 --seed 0 [--cli 200] [--jobs 2]
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from multiprocessing.connection import wait
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from tests.fuzz.parser_mutators import mutate, onnx_plans, tflite_plans

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30.0
MEMORY_LIMIT = 4 << 30
FORMATS = ("onnx", "tflite")
SENTINEL = "user_file.txt"


def draw_plans(fmt: str, count: int, seed: int) -> list:
    """``count`` mutation plans for ``fmt`` from hypothesis (generate phase only, no database; the
    same ``seed`` gives the same plans; tinyfuse is imported first, as in the campaign: importing it
    changes what hypothesis draws)."""
    import tinyfuse.driver  # noqa: F401

    plans: list = []
    strategy = onnx_plans() if fmt == "onnx" else tflite_plans()
    run = 0
    while len(plans) < count:
        @settings(max_examples=count - len(plans), database=None, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @hypothesis_seed(seed * 1000 + run)
        @given(strategy)
        def collect(plan):
            plans.append(plan)
        collect()
        run += 1
    return plans[:count]


# ----------------------------------------------------------------------------------------- one mutant

def _where(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    own = [f for f in tb if "/compiler/" in f.filename or "/tinyfuse/" in f.filename] or tb
    return f"{Path(own[-1].filename).name}:{own[-1].lineno}" if own else "?"


def check_in_process(fmt: str, plan, work: Path) -> tuple[str, str]:
    """('error' | 'compiled' | 'other', detail) for one mutant through compile_model + write."""
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import TinyfuseError

    seed_name, data = mutate(fmt, plan)
    path = work / f"mutant.{fmt}"
    path.write_bytes(data)
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile_model(path).write(out)
    except TinyfuseError as e:
        msg = str(e)
        if "\n" in msg or not msg.strip():
            return "other", f"{seed_name}: error message is not one line: {msg!r}"
        if out.exists():
            return "other", f"{seed_name}: partial output after error: {sorted(os.listdir(out))}"
        return "error", msg
    except Exception as e:   # noqa: BLE001 - any other exception is the finding
        return "other", f"{seed_name}: {type(e).__name__} at {_where(e)}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    if not (out / "metadata.json").is_file():
        return "other", f"{seed_name}: compiled but no metadata.json written"
    return "compiled", seed_name


def check_cli(fmt: str, plan, work: Path) -> tuple[str, str]:
    """The same through ``python -m tinyfuse compile M -o DIR`` (DIR holds a user file beforehand)."""
    seed_name, data = mutate(fmt, plan)
    path = work / f"mutant.{fmt}"
    path.write_bytes(data)
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    (out / SENTINEL).write_text("mine\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p)}
    try:
        r = subprocess.run([sys.executable, "-m", "tinyfuse", "compile", str(path), "-o", str(out)], env=env,
                           capture_output=True, text=True, timeout=TIMEOUT, cwd=work)
    except subprocess.TimeoutExpired:
        return "other", f"{seed_name}: CLI hang > {TIMEOUT:.0f} s"
    left = sorted(os.listdir(out))
    if (out / SENTINEL).read_text() != "mine\n":
        return "other", f"{seed_name}: CLI changed the user's file"
    lines = r.stderr.splitlines()
    errors = [ln for ln in lines if ln.startswith("error:")]
    if r.returncode == 2:
        if len(errors) != 1 or any(not ln.startswith(("error:", "warning:")) for ln in lines):
            return "other", f"{seed_name}: exit 2 but stderr is {r.stderr[:300]!r}"
        if left != [SENTINEL]:
            return "other", f"{seed_name}: exit 2 left files {left}"
        return "error", errors[0]
    if r.returncode == 0 and "metadata.json" in left:
        return _gcc_syntax(out, seed_name)
    return "other", f"{seed_name}: exit {r.returncode}: {r.stderr.strip()[-300:]!r}"


def _gcc_syntax(out: Path, seed_name: str) -> tuple[str, str]:
    """('compiled', seed) when gcc accepts every generated .c (C99, -fsyntax-only; skipped without gcc)."""
    sources = sorted(str(p) for p in out.glob("*.c"))
    if shutil.which("gcc") is None or not sources:
        return "compiled", seed_name
    r = subprocess.run(["gcc", "-std=c99", "-fsyntax-only", f"-I{out}", *sources], capture_output=True, text=True,
                       timeout=TIMEOUT)
    if r.returncode:
        return "other", f"{seed_name}: compiled, but gcc rejects the C: {r.stderr.strip()[:300]!r}"
    return "compiled", seed_name


def _worker(conn) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    work = Path(tempfile.mkdtemp(prefix="tinyfuse_parserfuzz_"))
    try:
        while (job := conn.recv()) is not None:
            idx, fmt, plan, cli = job
            conn.send((idx, (check_cli if cli else check_in_process)(fmt, plan, work)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ----------------------------------------------------------------------------------------- the pool

class Pool:
    """``jobs`` forked workers; a job past ``TIMEOUT`` seconds or a dead worker is an 'other' outcome."""

    def __init__(self, jobs: int):
        self.ctx = mp.get_context("fork")
        self.slots = [self._start() for _ in range(jobs)]

    def _start(self):
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        proc.start()
        child.close()
        return {"proc": proc, "conn": parent, "job": None, "t0": 0.0}

    def _restart(self, k: int) -> None:
        self.slots[k]["proc"].kill()
        self.slots[k]["proc"].join()
        self.slots[k] = self._start()

    def run(self, jobs: list, on_result) -> None:
        """Run ``jobs`` [(idx, fmt, plan, cli)]; ``on_result(idx, (status, detail))`` for each."""
        todo = list(reversed(jobs))
        while todo or any(s["job"] for s in self.slots):
            for s in self.slots:
                if s["job"] is None and todo:
                    s["job"], s["t0"] = todo.pop(), time.monotonic()
                    s["conn"].send(s["job"])
            busy = [s["conn"] for s in self.slots if s["job"]]
            ready = wait(busy, timeout=1.0)
            for k, s in enumerate(self.slots):
                if s["job"] is None:
                    continue
                if s["conn"] in ready:
                    try:
                        idx, outcome = s["conn"].recv()
                    except (EOFError, OSError):
                        code = s["proc"].exitcode
                        on_result(s["job"][0], ("other", f"worker died (exit code {code}) on plan {s['job'][2]}"))
                        s["job"] = None
                        self._restart(k)
                        continue
                    on_result(idx, outcome)
                    s["job"] = None
                elif time.monotonic() - s["t0"] > TIMEOUT + 5:
                    on_result(s["job"][0], ("other", f"hang > {TIMEOUT:.0f} s on plan {s['job'][2]}"))
                    s["job"] = None
                    self._restart(k)

    def close(self) -> None:
        for s in self.slots:
            try:
                s["conn"].send(None)
            except OSError:
                pass
            s["proc"].join(timeout=5)
            if s["proc"].is_alive():
                s["proc"].kill()


def campaign(count: int, seed: int = 0, cli: int = 0, jobs: int = 2, formats=FORMATS, progress: bool = False) -> dict:
    """Run ``count`` in-process mutants and ``cli`` CLI mutants per format. Returns
    {fmt: {"tried", "error", "compiled", "other": [details], "seconds", "cli": {...}}}."""
    import tinyfuse.driver  # noqa: F401  (imported once, before the fork)

    report = {}
    pool = Pool(jobs)
    try:
        for fmt in formats:
            plans = draw_plans(fmt, count + cli, seed)
            for mode, chosen in (("in_process", plans[:count]), ("cli", plans[count:])):
                t0 = time.monotonic()
                counts: Counter = Counter()
                other: list[str] = []

                def record(idx, outcome, counts=counts, other=other, fmt=fmt, mode=mode):
                    counts[outcome[0]] += 1
                    if outcome[0] == "other":
                        other.append(f"#{idx}: {outcome[1]}")
                        print(f"OTHER {fmt} {mode} #{idx}: {outcome[1][:300]}", file=sys.stderr, flush=True)
                    if progress and sum(counts.values()) % 1000 == 0:
                        print(f"{fmt} {mode}: {sum(counts.values())} done {dict(counts)}", file=sys.stderr, flush=True)
                pool.run([(i, fmt, p, mode == "cli") for i, p in enumerate(chosen)], record)
                report.setdefault(fmt, {})[mode] = {"tried": len(chosen), "error": counts["error"],
                                                    "compiled": counts["compiled"], "other": other,
                                                    "seconds": time.monotonic() - t0}
    finally:
        pool.close()
    return report


def summary(report: dict) -> list[str]:
    """One line per format and mode: tried, clear error, compiled, other, time."""
    lines = []
    for fmt, modes in report.items():
        for mode, r in modes.items():
            if r["tried"]:
                lines.append(f"{fmt:6} {mode:10} tried {r['tried']:6}  clear error {r['error']:6}  compiled "
                             f"{r['compiled']:6}  other {len(r['other']):4}  ({r['seconds']:.0f} s)")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=10000, help="in-process mutants per format")
    p.add_argument("--cli", type=int, default=200, help="mutants per format through python -m tinyfuse compile")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--format", choices=FORMATS, action="append")
    a = p.parse_args(argv)
    t0 = time.monotonic()
    report = campaign(a.count, a.seed, a.cli, a.jobs, tuple(a.format or FORMATS), progress=True)
    print("\n".join(summary(report)))
    print(f"parser fuzzing: {time.monotonic() - t0:.0f} s")
    return 1 if any(r["other"] for modes in report.values() for r in modes.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
