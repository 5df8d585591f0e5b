"""TFLM twins as a fuzz oracle (issue 13): random one-op (and cheap two-op chain) int8 TFLite models,
each compiled by tinyfuse → gcc → run, and run by TensorFlow Lite Micro (the tflite_micro package), the
exact oracle: the outputs must be byte-identical.

Draws (tests/fuzz/twin_draw*.py): seed ``s`` draws op ``OPS[s % len(OPS)]`` with ``numpy.random
.default_rng(s)``, so every op gets its share and a seed reproduces its model. Each model is one of

- exact: tinyfuse's bytes equal TFLM's (outside the channels where TFLM's int32 left shift overflows,
  see twin_draw.py: those models are counted ``tflm wraps`` and must equal TFLM everywhere else);
- tflm refused: TFLM rejects the model (an error, or its process dies, e.g. on a multiplier it
  checks): not a tinyfuse failure;
- tf refused: tinyfuse refuses it with a one-line TinyfuseError although TFLM runs it (a gap, listed);
- failure: a tinyfuse crash, gcc error, or a byte that differs from TFLM.

TFLM runs in a worker process of its own (a TFLITE_CHECK aborts the process), restarted after a crash.

    python -m tests.fuzz.tflm_twin --count 2000 --seed 0           # what `make fuzz-tflm` runs
    python -m tests.fuzz.tflm_twin --seed 17 --count 1 --show      # one model, its parameters and outcome
    python -m tests.fuzz.tflm_twin --ops CONV_2D,MEAN --count 200  # only some ops
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import functools
import json
import multiprocessing
import re
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.fuzz import twin_draw as d1
from tests.fuzz import twin_draw_move as dm
from tests.fuzz import twin_draw_ops as d2

ROOT = Path(__file__).resolve().parents[2]
CFLAGS = ["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror"]
P = functools.partial
OPS = {
    "CONV_2D": d1.draw_conv, "DEPTHWISE_CONV_2D": P(d1.draw_conv, depthwise=True), "FULLY_CONNECTED": d1.draw_fc,
    "TRANSPOSE_CONV": d1.draw_transpose_conv,
    "ADD": P(d2.draw_binary, opcode="ADD"), "SUB": P(d2.draw_binary, opcode="SUB"), "MUL": P(d2.draw_binary, opcode="MUL"),
    "MAX_POOL_2D": P(d2.draw_pool, opcode="MAX_POOL_2D"), "AVERAGE_POOL_2D": P(d2.draw_pool, opcode="AVERAGE_POOL_2D"),
    **{op: P(d2.draw_lut, opcode=op) for op in ("SOFTMAX", "LOGISTIC", "TANH", "RELU", "RELU6", "LEAKY_RELU", "HARD_SWISH")},
    "PRELU": d2.draw_prelu, "QUANTIZE": P(d2.draw_quantize, float_input=False),
    "QUANTIZE(f32)": P(d2.draw_quantize, float_input=True), "DEQUANTIZE": d2.draw_dequantize, "MEAN": d2.draw_mean,
    "RESIZE_BILINEAR": P(d2.draw_resize, opcode="RESIZE_BILINEAR"),
    "RESIZE_NEAREST_NEIGHBOR": P(d2.draw_resize, opcode="RESIZE_NEAREST_NEIGHBOR"),
    "CONCATENATION": dm.draw_concat, "PAD": P(dm.draw_pad, opcode="PAD"), "PADV2": P(dm.draw_pad, opcode="PADV2"),
    "RESHAPE": P(dm.draw_reshape, opcode="RESHAPE"), "SQUEEZE": P(dm.draw_reshape, opcode="SQUEEZE"),
    "TRANSPOSE": dm.draw_transpose, "STRIDED_SLICE": dm.draw_strided_slice, "SPLIT": P(dm.draw_split, opcode="SPLIT"),
    "SPLIT_V": P(dm.draw_split, opcode="SPLIT_V"), "GATHER": dm.draw_gather,
    "CONV+ADD": P(d2.draw_chain, kind="CONV+ADD"), "CONV+POOL": P(d2.draw_chain, kind="CONV+POOL"),
    "DW+CONV": P(d2.draw_chain, kind="DW+CONV"), "CONV+MEAN": P(d2.draw_chain2, kind="CONV+MEAN"),
    "CONV+SOFTMAX": P(d2.draw_chain2, kind="CONV+SOFTMAX"), "CONV+LEAKY_RELU": P(d2.draw_chain2, kind="CONV+LEAKY_RELU"),
}
STATUSES = ("exact", "tflm wraps", "tflm refused", "tf refused", "failure")


def draw(seed: int, ops: list[str] | None = None) -> d1.Draw:
    """The model of ``seed``: op ``ops[seed % len(ops)]`` (default every op), parameters from the seed."""
    names = ops or list(OPS)
    return OPS[names[seed % len(names)]](np.random.default_rng(seed))


# ----------------------------------------------------------------------------- the TFLM side
def _tflm_run(model: bytes, inputs: list) -> list:
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


def _compare(got: list, want: list, wrap) -> Outcome:
    if len(got) != len(want):
        return Outcome("failure", f"{len(got)} outputs, TFLM has {len(want)}")
    masked = False
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.dtype != w.dtype or g.shape != w.shape:
            return Outcome("failure", f"output {i}: {g.dtype}{list(g.shape)}, TFLM {w.dtype}{list(w.shape)}")
        keep = np.ones(g.shape, bool)
        if i == 0 and np.any(wrap):
            keep = np.broadcast_to(~np.asarray(wrap, bool), g.shape) if np.ndim(wrap) else np.zeros(g.shape, bool)
            masked = True
        diff = g.view(np.uint8) != w.view(np.uint8) if g.dtype == np.int8 else g.tobytes() != w.tobytes()
        bad = np.asarray(diff) & keep if g.dtype == np.int8 else diff
        if np.any(bad):
            where = np.argwhere(bad)[0].tolist() if g.dtype == np.int8 else "bytes"
            lsb = int(np.max(np.abs(g.astype(np.int64) - w.astype(np.int64))[bad])) if g.dtype == np.int8 else "-"
            return Outcome("failure", f"output {i}: {int(np.sum(bad))}/{g.size} differ from TFLM, max {lsb} LSB, "
                           f"first at {where}: {g[tuple(where)] if g.dtype == np.int8 else ''} vs "
                           f"{w[tuple(where)] if g.dtype == np.int8 else ''}")
    return Outcome("tflm wraps" if masked else "exact")


def check(d: d1.Draw, tflm: Tflm, work: Path) -> Outcome:
    """The whole check of one drawn model (see the module docstring for the statuses)."""
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import TinyfuseError
    from tinyfuse.harness import build_host, run_host

    want = tflm.run(d.model, d.inputs)
    if isinstance(want, str):
        return Outcome("tflm refused", want)
    try:
        result = compile_model(d.model, name="twin")
    except TinyfuseError as e:
        return Outcome("tf refused", str(e).splitlines()[0][:300])
    except Exception as e:  # noqa: BLE001 - a compiler crash is a failure
        tb = traceback.extract_tb(e.__traceback__)[-1]
        return Outcome("failure", f"compile: {type(e).__name__}: {str(e)[:300]} at {Path(tb.filename).name}:{tb.lineno}")
    try:
        got = run_host(build_host(result, work, cflags=CFLAGS), result, d.inputs)
    except Exception as e:  # noqa: BLE001 - gcc refusing the generated C, or the program failing
        return Outcome("failure", f"build/run: {type(e).__name__}: {str(e)[:500]}")
    return _compare(got, want, d.wrap)


# ----------------------------------------------------------------------------- campaign
def campaign(seeds, ops: list[str] | None = None, log: str | None = None, show: bool = False,
             progress: bool = True) -> dict:
    """Run every seed; returns the table {op: {status: count, 'seconds': s}}, the failures (seed, op, params,
    detail) and the refusals' reasons {"op status: reason (numbers as #)": count}."""
    import warnings
    warnings.filterwarnings("ignore")
    table: dict[str, dict] = {}
    failures, reasons = [], {}
    tflm, work = Tflm(), Path(tempfile.mkdtemp(prefix="tf_twin_"))
    bar = None
    if progress and not show:
        from tqdm import tqdm
        bar = tqdm(total=len(seeds), unit="model", dynamic_ncols=True)
    try:
        for seed in seeds:
            t0 = time.time()
            try:
                d = draw(seed, ops)
            except Exception as e:  # noqa: BLE001 - a draw the builders refuse is a bug of this fuzzer
                d, out = None, Outcome("failure", f"draw: {type(e).__name__}: {str(e)[:300]}")
            else:
                out = check(d, tflm, work)
            op = d.op if d is not None else (ops or list(OPS))[seed % len(ops or OPS)]
            row = table.setdefault(op, {s: 0 for s in STATUSES} | {"seconds": 0.0})
            row[out.status] += 1
            row["seconds"] += time.time() - t0
            if out.status in ("tflm refused", "tf refused"):
                key = f"{op} {out.status}: {re.sub(r'[-0-9.e]{4,}', '#', out.detail)[:160]}"
                reasons[key] = reasons.get(key, 0) + 1
            entry = {"seed": seed, "op": op, "status": out.status, "detail": out.detail,
                     "params": d.params if d is not None else None}
            if out.status == "failure":
                failures.append(entry)
                if log:
                    Path(log).parent.mkdir(parents=True, exist_ok=True)
                    with open(log, "a") as f:
                        f.write(json.dumps(entry, default=str) + "\n")
            if show:
                print(json.dumps(entry, default=str))
            if bar is not None:
                bar.update(1)
                bar.set_postfix(fail=len(failures))
    finally:
        if bar is not None:
            bar.close()
        tflm.close()
        shutil.rmtree(work, ignore_errors=True)
    return {"table": table, "failures": failures, "reasons": reasons}


def format_table(table: dict) -> str:
    """A markdown table: op | models | exact | tflm wraps | tflm refused | tf refused | failures | seconds."""
    head = "| op | models | exact | tflm wraps | tflm refused | tf refused | failures | seconds |"
    lines = [head, "|" + "---|" * 8]
    total = {s: 0 for s in STATUSES} | {"seconds": 0.0}
    for op in sorted(table):
        row = table[op]
        for k in total:
            total[k] += row[k]
        lines.append(f"| {op} | {sum(row[s] for s in STATUSES)} | " + " | ".join(str(row[s]) for s in STATUSES)
                     + f" | {row['seconds']:.0f} |")
    lines.append(f"| **total** | {sum(total[s] for s in STATUSES)} | " + " | ".join(str(total[s]) for s in STATUSES)
                 + f" | {total['seconds']:.0f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="random int8 TFLite models: tinyfuse vs TFLM, byte for byte")
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0, help="first seed (seeds are consecutive)")
    ap.add_argument("--ops", default="", help="comma-separated op names (default: all of OPS)")
    ap.add_argument("--log", default=str(ROOT / "build" / "fuzz" / "tflm_twin_failures.jsonl"),
                    help="append each failure (seed, op, parameters, detail) as a JSON line")
    ap.add_argument("--show", action="store_true", help="print every model's parameters and outcome")
    args = ap.parse_args(argv)
    ops = [o for o in args.ops.split(",") if o] or None
    unknown = set(ops or ()) - set(OPS)
    if unknown:
        ap.error(f"unknown ops {sorted(unknown)}; known: {', '.join(OPS)}")
    t0 = time.time()
    r = campaign(list(range(args.seed, args.seed + args.count)), ops, args.log, args.show)
    print(format_table(r["table"]))
    for reason, n in sorted(r["reasons"].items()):
        print(f"  {n:4d} x {reason}")
    for f in r["failures"]:
        print(f"FAIL seed {f['seed']} {f['op']}: {f['detail']}\n  params: {json.dumps(f['params'], default=str)}")
    print(f"{args.count} models in {time.time() - t0:.0f} s; {len(r['failures'])} failures"
          + (f" (logged to {args.log})" if r["failures"] else ""))
    return 1 if r["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
