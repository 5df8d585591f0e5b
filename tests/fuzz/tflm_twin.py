"""TFLM twins as a fuzz oracle: random one-op (and cheap chain) int8 and float32 TFLite models, each
compiled by tinyfuse for the kernel variant asked → C → built → run, and run by TensorFlow Lite Micro
(the tflite_micro package), the oracle: int8 outputs must be byte-identical, float32 outputs within the
rounding bound of twin_draw_float.py.

Draws (tests/fuzz/twin_draw*.py): seed ``s`` draws op ``ops[s % len(ops)]`` with ``numpy.random
.default_rng(s)``, so every op gets its share and a seed reproduces its model whatever the variant:
``--variant ref --ops simd`` runs the very models ``--variant arm_dsp`` runs. The ``SIMD ...``, ``...+ADD``,
``CONV>DW>CONV`` and ``(f32)`` draws (twin_draw_simd.py, twin_draw_float.py) aim at the shapes where the
SIMD kernels branch and list their shape classes. Each model is one of

- exact: tinyfuse's bytes equal TFLM's (float: within the bound) outside the channels where TFLM's
  int32 left shift overflows (see twin_draw.py: those models are counted ``tflm wraps`` and must
  equal TFLM everywhere else);
- tflm refused: TFLM rejects the model (an error, or its process dies, e.g. on a multiplier it
  checks): not a tinyfuse failure;
- tf refused: tinyfuse refuses it with a one-line TinyfuseError although TFLM runs it (a gap, listed);
- failure: a tinyfuse crash, a compiler error, a guard-region hit, or an output that differs from TFLM.

Variants (twin_run.py): ``--variant ref`` compiles for the host (portable kernels); ``arm_dsp``
(cortex-m4), ``arm_mve`` (cortex-m55) and ``arm_fpu`` (cortex-m4, float draws) compile for the Arm
target and build on the host through the SIMD stand-ins, ``--batch`` models per program; ``--qemu T``
compiles for target T and runs each model under qemu. Per model the variants its kernels got are
recorded; the ``used`` column counts the models where a kernel ran the variant asked (under qemu:
any SIMD variant of the target), and a table per shape class shows that coverage.

    python -m tests.fuzz.tflm_twin --count 2000 --seed 0                   # `make fuzz-tflm`: every op, host
    python -m tests.fuzz.tflm_twin --variant arm_dsp --count 2000          # the SIMD draws, arm_dsp stand-ins
    python -m tests.fuzz.tflm_twin --qemu cortex-m55 --count 200           # SIMD + float draws under qemu
    python -m tests.fuzz.tflm_twin --seed 17 --count 1 --show              # one model, its parameters and outcome
    python -m tests.fuzz.tflm_twin --ops CONV_2D,MEAN --count 200          # only some ops (or a group: simd, float)
    python -m tests.fuzz.tflm_twin --variant arm_dsp --ops dsp16 --count 300   # the 16x8 arm_dsp_s16 kernels
    python -m tests.fuzz.tflm_twin --variant arm_mve --ops dsp16 --count 300   # the 16x8 arm_mve_s16 kernels
"""
from __future__ import annotations

import argparse
import functools
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

from tests.fuzz import twin_draw as d1
from tests.fuzz import twin_draw_elem as de
from tests.fuzz import twin_draw_float as df
from tests.fuzz import twin_draw_int16 as d16
from tests.fuzz import twin_draw_lstm as dl
from tests.fuzz import twin_draw_move as dm
from tests.fuzz import twin_draw_ops as d2
from tests.fuzz import twin_draw_simd as ds
from tests.fuzz import twin_draw_struct as dr
from tests.fuzz import twin_draw_struct_move as dv
from tests.fuzz import twin_draw_signal as dsig
from tests.fuzz import twin_draw_detection as ddet
from tests.fuzz import twin_draw_control as dctl
from tests.fuzz.twin_run import SIMD, VARIANT_TARGET, Item, Outcome, Runner

ROOT = Path(__file__).resolve().parents[2]
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
    # the SIMD shape classes (twin_draw_simd.py)
    "SIMD CONV_2D": ds.draw_conv, "SIMD DEPTHWISE_CONV_2D": P(ds.draw_conv, depthwise=True),
    "SIMD FULLY_CONNECTED": ds.draw_fc_rows, "SIMD CONV+ADD": ds.draw_conv_add, "DW+ADD": P(ds.draw_conv_add, depthwise=True),
    "FC+ADD": P(ds.draw_fc_rows, residual=True), "CONV>DW>CONV": ds.draw_poly_chain, "SIMD POOL": ds.draw_pool,
    # float32 twins (twin_draw_float.py)
    "CONV_2D(f32)": df.draw_conv, "DEPTHWISE_CONV_2D(f32)": P(df.draw_conv, depthwise=True),
    "FULLY_CONNECTED(f32)": df.draw_fc, "CONV>DW>CONV(f32)": df.draw_chain,
    # reductions, indexing, movement and shape ops (twin_draw_struct*.py): int8, float32, int32 as TFLM has them
    **{op: P(dr.draw_reduce, opcode=op) for op in ("SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_ALL")},
    "ARG_MAX": P(dr.draw_arg, opcode="ARG_MAX"), "ARG_MIN": P(dr.draw_arg, opcode="ARG_MIN"), "CUMSUM": dr.draw_cumsum,
    "LOG_SOFTMAX": dr.draw_log_softmax, "L2_NORMALIZATION": dr.draw_l2_norm, "L2_POOL_2D": dr.draw_l2_pool,
    "BATCH_MATMUL": dr.draw_batch_matmul, "SLICE": dv.draw_slice, "PACK": dv.draw_pack, "UNPACK": dv.draw_unpack,
    "REVERSE_V2": dv.draw_reverse, "BROADCAST_TO": dv.draw_broadcast_to, "EXPAND_DIMS": dv.draw_expand_dims,
    "DEPTH_TO_SPACE": P(dv.draw_depth_space, opcode="DEPTH_TO_SPACE"),
    "SPACE_TO_DEPTH": P(dv.draw_depth_space, opcode="SPACE_TO_DEPTH"),
    "SPACE_TO_BATCH_ND": P(dv.draw_space_batch, opcode="SPACE_TO_BATCH_ND"),
    "BATCH_TO_SPACE_ND": P(dv.draw_space_batch, opcode="BATCH_TO_SPACE_ND"), "MIRROR_PAD": dv.draw_mirror_pad,
    "GATHER_ND": dv.draw_gather_nd, "EMBEDDING_LOOKUP": dv.draw_embedding_lookup,
    "DYNAMIC_UPDATE_SLICE": dv.draw_update_slice, "FILL": dv.draw_fill, "S2B>CONV>B2S": dv.draw_dilated_chain,
    # int16 activations, 16x8 (twin_draw_int16.py)
    "CONV_2D(i16)": d16.draw_conv, "DEPTHWISE_CONV_2D(i16)": P(d16.draw_conv, depthwise=True),
    "FULLY_CONNECTED(i16)": d16.draw_fc, **{f"{op}(i16)": P(d16.draw_binary, opcode=op) for op in ("ADD", "SUB", "MUL")},
    **{f"{op}(i16)": P(d16.draw_pool, opcode=op) for op in ("MAX_POOL_2D", "AVERAGE_POOL_2D")},
    **{f"{op}(i16)": P(d16.draw_activation, opcode=op) for op in ("SOFTMAX", "LOGISTIC", "TANH")},
    "QUANTIZE(i16)": d16.draw_quantize, "MOVE(i16)": d16.draw_move, "MEAN(i16)": d16.draw_mean,
    "DW>CONV>ADD(i16)": d16.draw_chain, "SIMD CONV_2D(i16)": d16.draw_conv_simd,
    "SIMD FULLY_CONNECTED(i16)": P(d16.draw_fc, simd=True), "SIMD DEPTHWISE_CONV_2D(i16)": d16.draw_dw_simd,
    "UNIDIRECTIONAL_SEQUENCE_LSTM(i16)": dl.draw_lstm16,
    **dsig.DRAWS,     # TFLM's signal library (twin_draw_signal.py)
    # element-wise math, comparisons and logic in every TFLM type (twin_draw_elem.py)
    **de.OPS,
    **ddet.DRAWS,     # TFLM's DETECTION_POSTPROCESS (twin_draw_detection.py)
    **dctl.DRAWS,     # IF / WHILE folded, TFLM's CIRCULAR_BUFFER and BasicClassifier (twin_draw_control.py)
}
STRUCT = ["SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_ALL", "ARG_MAX", "ARG_MIN", "CUMSUM", "LOG_SOFTMAX", "L2_NORMALIZATION",
          "L2_POOL_2D", "BATCH_MATMUL", "SLICE", "PACK", "UNPACK", "REVERSE_V2", "BROADCAST_TO", "EXPAND_DIMS",
          "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND", "MIRROR_PAD", "GATHER_ND",
          "EMBEDDING_LOOKUP", "DYNAMIC_UPDATE_SLICE", "FILL", "S2B>CONV>B2S"]
FLOAT = ["CONV_2D(f32)", "DEPTHWISE_CONV_2D(f32)", "FULLY_CONNECTED(f32)", "CONV>DW>CONV(f32)"]
# the int8 draws whose kernels have SIMD variants; the SIMD shape-class draws twice as often
SIMD_INT8 = ["SIMD CONV_2D", "SIMD DEPTHWISE_CONV_2D", "SIMD FULLY_CONNECTED", "SIMD CONV+ADD", "DW+ADD", "FC+ADD",
             "CONV>DW>CONV", "SIMD POOL"] * 2 + ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "CONV+ADD", "DW+CONV",
                                                 "CONV+POOL", "CONV+MEAN", "AVERAGE_POOL_2D"]
INT16 = [o for o in OPS if o.endswith("(i16)") and o not in de.OPS]       # the 16x8 draws
# the 16x8 draws whose kernels have arm_dsp and arm_mve variants (conv2d / depthwise / matmul .arm_dsp_s16, .arm_mve_s16)
DSP_INT16 = ["SIMD CONV_2D(i16)", "SIMD FULLY_CONNECTED(i16)", "CONV_2D(i16)", "FULLY_CONNECTED(i16)", "DW>CONV>ADD(i16)",
             "SIMD DEPTHWISE_CONV_2D(i16)", "DEPTHWISE_CONV_2D(i16)"]
DETECTION = list(ddet.DRAWS)
GROUPS = {"all": list(OPS), "struct": STRUCT, "simd": SIMD_INT8, "float": FLOAT, "int16": INT16, "signal": list(dsig.DRAWS),
          "elem": list(de.OPS), "detection": DETECTION, "control": list(dctl.DRAWS),
          "int8": [o for o in OPS if o not in FLOAT and o not in INT16 and o not in dsig.DRAWS and o not in de.NOT_INT8
                   and o not in DETECTION and o not in dctl.DRAWS],
          "dsp": [o for o in SIMD_INT8 if "POOL" not in o],          # Cortex-M4 has no SIMD pool
          "dsp16": DSP_INT16, "mve": SIMD_INT8 + DSP_INT16}       # Helium: the int8 and the 16x8 SIMD draws
DEFAULT_GROUP = {"ref": "all", "arm_dsp": "dsp", "arm_mve": "mve", "arm_fpu": "float"}
STATUSES = ("exact", "tflm wraps", "tflm refused", "tf refused", "failure")


def op_list(names: str, variant: str = "ref", qemu: str | None = None) -> list[str]:
    """The op list of ``--ops`` (names and group names, comma-separated; a name may repeat to weight it),
    or the variant's default group (qemu: the SIMD draws of the target, dsp or mve, and the float
    ones twice)."""
    if not names:
        if qemu:
            from tinyfuse.targets import get_target
            return GROUPS["mve" if "mve" in get_target(qemu).features else "dsp"] + FLOAT * 2
        return GROUPS[DEFAULT_GROUP[variant]]
    out = []
    for n in (x for x in names.split(",") if x):
        out += GROUPS[n] if n in GROUPS else [n]
    return out


def draw(seed: int, ops: list[str] | None = None) -> d1.Draw:
    """The model of ``seed``: op ``ops[seed % len(ops)]`` (default every op), parameters from the seed."""
    names = ops or list(OPS)
    return OPS[names[seed % len(names)]](np.random.default_rng(seed))


def _item(seed: int, ops: list[str] | None) -> Item:
    op = (ops or list(OPS))[seed % len(ops or OPS)]
    try:
        d = draw(seed, ops)
    except Exception as e:  # noqa: BLE001 - a draw the builders refuse is a bug of this fuzzer
        return Item(seed, op, None, Outcome("failure", f"draw: {type(e).__name__}: {str(e)[:300]}"))
    return Item(seed, d.op, d)


# ----------------------------------------------------------------------------- campaign
class Tally:
    """The table {op: {status: count, 'used': n, 'seconds': s}}, the coverage per shape class, the
    failures, the refusals' reasons and the variants seen."""

    def __init__(self, asked):
        self.asked = set(asked)
        self.table, self.classes, self.reasons, self.variants = {}, {}, {}, {}
        self.failures: list[dict] = []
        self.float_ratio = 0.0

    def add(self, it: Item, log: str | None, show: bool) -> None:
        out = it.out
        used = bool(self.asked & set(it.variants)) if self.asked != {"ref"} else \
            bool(it.variants) and not set(it.variants) & set(SIMD)         # ref: portable kernels only
        row = self.table.setdefault(it.op, {s: 0 for s in STATUSES} | {"used": 0, "seconds": 0.0})
        row[out.status] += 1
        row["used"] += used
        row["seconds"] += it.seconds
        self.float_ratio = max(self.float_ratio, out.ratio)
        for v in it.variants:
            self.variants[v] = self.variants.get(v, 0) + 1
        for c in (it.d.params.get("classes", []) if it.d is not None else []):
            crow = self.classes.setdefault(c, {"models": 0, "compared": 0, "used": 0, "failure": 0})
            crow["models"] += 1
            crow["compared"] += out.status in ("exact", "tflm wraps", "failure")
            crow["used"] += used
            crow["failure"] += out.status == "failure"
        if out.status in ("tflm refused", "tf refused"):
            key = f"{it.op} {out.status}: {re.sub(r'[-0-9.e]{4,}', '#', out.detail)[:160]}"
            self.reasons[key] = self.reasons.get(key, 0) + 1
        entry = {"seed": it.seed, "op": it.op, "status": out.status, "detail": out.detail,
                 "variants": list(it.variants), "params": it.d.params if it.d is not None else None}
        if out.status == "failure":
            self.failures.append(entry)
            if log:
                Path(log).parent.mkdir(parents=True, exist_ok=True)
                with open(log, "a") as f:
                    f.write(json.dumps(entry, default=str) + "\n")
        if show:
            print(json.dumps(entry, default=str))


def campaign(seeds, ops: list[str] | None = None, log: str | None = None, show: bool = False,
             progress: bool = True, variant: str = "ref", qemu: str | None = None, batch: int = 24,
             jobs: int = 1) -> dict:
    """Run every seed (``batch`` models per host program); returns the table {op: {status: count, 'used':
    n, 'seconds': s}}, the coverage per shape class {class: {models, compared, used, failure}}, the
    failures (seed, op, variants, params, detail), the refusals' reasons {"op status: reason (numbers
    as #)": count}, the variants seen {variant: models} and the largest float |diff| / bound."""
    import warnings
    warnings.filterwarnings("ignore")
    runner = Runner(variant, qemu, jobs)
    tally = Tally(runner.asked())
    bar = None
    if progress and not show:
        from tqdm import tqdm
        bar = tqdm(total=len(seeds), unit="model", dynamic_ncols=True)
    try:
        for k in range(0, len(seeds), max(1, batch)):
            items = [_item(s, ops) for s in seeds[k:k + max(1, batch)]]
            runner.run(items)
            for it in items:
                tally.add(it, log, show)
            if bar is not None:
                bar.update(len(items))
                bar.set_postfix(fail=len(tally.failures))
    finally:
        if bar is not None:
            bar.close()
        runner.close()
    return {"table": tally.table, "classes": tally.classes, "failures": tally.failures, "reasons": tally.reasons,
            "variants": tally.variants, "float_ratio": tally.float_ratio, "asked": sorted(tally.asked)}


def format_table(table: dict, used: str = "used") -> str:
    """A markdown table: op | models | exact | tflm wraps | tflm refused | tf refused | failures | <used> | seconds."""
    head = f"| op | models | exact | tflm wraps | tflm refused | tf refused | failures | {used} | seconds |"
    lines = [head, "|" + "---|" * 9]
    total = {s: 0 for s in STATUSES} | {"used": 0, "seconds": 0.0}
    for op in sorted(table):
        row = table[op]
        for k in total:
            total[k] += row.get(k, 0)
        lines.append(f"| {op} | {sum(row[s] for s in STATUSES)} | " + " | ".join(str(row[s]) for s in STATUSES)
                     + f" | {row.get('used', 0)} | {row['seconds']:.0f} |")
    lines.append(f"| **total** | {sum(total[s] for s in STATUSES)} | " + " | ".join(str(total[s]) for s in STATUSES)
                 + f" | {total['used']} | {total['seconds']:.0f} |")
    return "\n".join(lines)


def format_classes(classes: dict, used: str = "used") -> str:
    """A markdown table per shape class: models, compared with TFLM, models using the asked variant, failures."""
    lines = [f"| shape class | models | compared | {used} | failures |", "|---|---|---|---|---|"]
    for c in sorted(classes):
        r = classes[c]
        lines.append(f"| {c} | {r['models']} | {r['compared']} | {r['used']} | {r['failure']} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="random TFLite models: tinyfuse vs TFLM (int8 byte for byte, "
                                 "float within the rounding bound), per kernel variant")
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0, help="first seed (seeds are consecutive)")
    ap.add_argument("--ops", default="", help="comma-separated op names or groups (" + ", ".join(GROUPS)
                    + "); default: all for ref, dsp for arm_dsp, mve (simd + dsp16) for arm_mve, float for arm_fpu, dsp or mve + float for --qemu")
    ap.add_argument("--variant", choices=list(VARIANT_TARGET), default="ref",
                    help="kernels to compile for (ref: host; arm_dsp: cortex-m4; arm_mve: cortex-m55; arm_fpu: "
                    "cortex-m4), built on the host through the SIMD stand-ins")
    ap.add_argument("--qemu", default=None, metavar="TARGET", help="compile for TARGET and run under qemu instead")
    ap.add_argument("--batch", type=int, default=24, help="models per host program")
    ap.add_argument("--jobs", type=int, default=1, help="C compilers at a time for a host program")
    ap.add_argument("--log", default=str(ROOT / "build" / "fuzz" / "tflm_twin_failures.jsonl"),
                    help="append each failure (seed, op, parameters, detail) as a JSON line")
    ap.add_argument("--show", action="store_true", help="print every model's parameters and outcome")
    args = ap.parse_args(argv)
    ops = op_list(args.ops, args.variant, args.qemu)
    unknown = set(ops) - set(OPS)
    if unknown:
        ap.error(f"unknown ops {sorted(unknown)}; known: {', '.join(OPS)}; groups: {', '.join(GROUPS)}")
    if args.qemu:
        from tinyfuse.targets import TARGETS
        if args.qemu not in TARGETS or args.qemu == "host":
            ap.error(f"--qemu {args.qemu}: choose one of {', '.join(t for t in TARGETS if t != 'host')}")
    t0 = time.time()
    r = campaign(list(range(args.seed, args.seed + args.count)), ops, args.log, args.show, variant=args.variant,
                 qemu=args.qemu, batch=args.batch, jobs=args.jobs)
    where = f"qemu {args.qemu}" if args.qemu else f"{args.variant} ({VARIANT_TARGET[args.variant]}, host build)"
    used = "used " + "/".join(r["asked"]) if r["asked"] else "used"
    print(f"## {where}, seeds {args.seed}..{args.seed + args.count - 1}")
    print(format_table(r["table"], used))
    print()
    print(format_classes(r["classes"], used))
    print(f"\nkernel variants (models): {dict(sorted(r['variants'].items()))}; "
          f"largest float |diff| / bound: {r['float_ratio']:.3g}")
    for reason, n in sorted(r["reasons"].items()):
        print(f"  {n:4d} x {reason}")
    for f in r["failures"]:
        print(f"FAIL seed {f['seed']} {f['op']} {f['variants']}: {f['detail']}\n  params: {json.dumps(f['params'], default=str)}")
    print(f"{args.count} models in {time.time() - t0:.0f} s; {len(r['failures'])} failures"
          + (f" (logged to {args.log})" if r["failures"] else ""))
    return 1 if r["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
