"""The command line of ``tinyfuse tune`` (``tinyfuse.cli`` registers it) and the ``--ram-limit`` help."""
from __future__ import annotations

import json
from pathlib import Path

RAM_LIMIT_HELP = ("RAM budget in bytes (K = 1024, M = 1024 K), e.g. 24K: with --tuning-records, the fastest "
                  "measured build whose arena + measured stack fits; without, the fastest build predicted by the "
                  "cost model (--cost-model, else the analytical estimate) whose arena + a 256 B stack estimate "
                  "fits; an error names the smallest arena reachable")


def int_at_least(low: int):
    """An argparse type: an integer >= ``low`` (``tinyfuse.cli``'s --seed / --scratch-bytes take 0, tune's
    --trials / --workers / --topk 1); ArgumentTypeError otherwise."""
    import argparse
    words = "a non-negative integer" if low == 0 else f"an integer >= {low}"

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {words}, got '{text}'") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"must be {words}, got {v}")
        return v
    return parse


_positive = int_at_least(1)


def specialize_options(p) -> None:
    """--input-shape and --bind (ONNX; frontend/onnx/specialize.py), shared by every command that compiles."""
    p.add_argument("--input-shape", action="append", default=[], dest="input_shapes", metavar="NAME=DIMS",
                   help="fix a dynamic ONNX input shape: NAME=1x3x224x224, or one symbolic dim NAME=DIM=VALUE (DIM: "
                   "its dim_param name or axis; NAME '*': every input with that dim_param); repeatable. A symbolic "
                   "batch dim alone defaults to 1")
    p.add_argument("--bind", action="append", default=[], metavar="NAME=VALUE", help="make an ONNX graph input a "
                   "constant (a number, true/false, or an .npy file) so what it feeds folds at compile time (an If "
                   "on it picks its branch); repeatable")


def add_parser(sub, epilog: dict, qemu_targets: list[str], build_options) -> None:
    """The ``tune`` subcommand (module doc of ``tinyfuse.tune``); ``build_options(parser)`` adds the compile
    options that change a build (cli.args), which every measured build is compiled and recorded under."""
    t = sub.add_parser("tune", help="search kernel/chain/graph knobs, measured under qemu on Dask: tuning records, "
                       "Pareto front of RAM vs instructions", **epilog)
    t.add_argument("model", help="an .onnx or .tflite file")
    t.add_argument("--target", required=True, choices=qemu_targets, metavar="TARGET",
                   help=f"a qemu target: {', '.join(qemu_targets)}")
    t.add_argument("--trials", type=_positive, default=16, help="measured builds the records should hold (default 16; "
                   "a rerun with the same records resumes and skips the builds already measured)")
    t.add_argument("--records", metavar="FILE", help="JSON-lines file the records are appended to "
                   "(default <model stem>.<target>.tune.jsonl)")
    t.add_argument("--workers", type=_positive, default=None, help="Dask LocalCluster worker processes (default: one "
                   "per core)")
    t.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="an existing Dask scheduler (its workers need "
                   "tinyfuse, the cross toolchains and qemu) instead of a LocalCluster")
    t.add_argument("--topk", type=_positive, default=None, help="candidates measured per round (default: 2 x workers)")
    t.add_argument("--ram-limit", metavar="BYTES", help="measure only candidates whose arena + the default's "
                   "measured stack fits, and report the fastest measured build that fits (K/M suffixes)")
    t.add_argument("--out", metavar="DIR", help="write the Pareto front there (front.md, front.svg)")
    t.add_argument("--seed", type=int, default=0, help="seed of the proposals (default 0)")
    specialize_options(t)
    t.add_argument("--json", action="store_true", help="print one JSON object")
    t.add_argument("--no-progress", action="store_true", help="no progress bar")
    t.add_argument("--debug", action="store_true", help="show tracebacks")
    build_options(t)


def compile_options(args) -> dict:
    """``compile_model``'s keyword arguments of the build options ``args`` carries (cli.args.build_options)."""
    return {"kernels": args.kernels, "rounding": args.rounding, "planner": args.planner,
            "disabled_passes": tuple(args.disable_pass), "scratch_bytes": args.scratch_bytes,
            "weights_dtype": args.weights_dtype, "io_buffers": args.io_buffers, "sparse": args.sparse,
            "realtime": {"skip_zero_activations": args.skip_zero_activations, "wcet": args.wcet,
                         "max_step_instructions": args.max_step_instructions or 0}}


def specialized_path(args, tmp: str) -> str:
    """The model the workers compile: ``args.model`` itself, or with --input-shape / --bind its specialised
    copy written to ``tmp`` under the same stem (a compile with the same flags hashes the same model, so
    it finds these records)."""
    if not (args.input_shapes or args.bind):
        return args.model
    from ..driver import specialized_model
    model = specialized_model(args.model, args.input_shapes, args.bind)
    path = Path(tmp) / Path(args.model).name
    path.write_bytes(model.SerializeToString())
    return str(path)


def cmd_tune(args) -> int:
    import tempfile
    with tempfile.TemporaryDirectory(prefix="tinyfuse_tune_model_") as tmp:
        return _tune(args, specialized_path(args, tmp))


def _tune(args, model: str) -> int:
    from . import tune
    from .pareto import brief_changes
    from .ramlimit import parse_bytes
    records = args.records or f"{Path(args.model).stem}.{args.target}.tune.jsonl"
    s = tune(model, args.target, trials=args.trials, records_path=records, workers=args.workers,
             scheduler=args.scheduler, seed=args.seed, topk=args.topk,
             ram_limit=parse_bytes(args.ram_limit) if args.ram_limit else None, out_dir=args.out,
             progress=not args.no_progress and not args.json, options=compile_options(args))
    if args.json:
        print(json.dumps(s))
        return 0
    d, c = s["default"], s["chosen"]
    print(f"model {s['model']} on {s['target']}: {s['measured']} builds measured, {s['skipped']} already in the "
          f"records, {s['failed']} failed; {s['seconds']} s on {s['workers']} workers "
          f"({s['candidates_per_second']} candidates/s)")
    print(f"default: arena {d['arena_bytes']} B, {d['instructions']} instructions, model flash {d['flash_bytes']} B; "
          f"at no more RAM: arena {c['arena_bytes']} B, {c['instructions']} instructions "
          f"({s['gain_at_default_ram']:.1%} fewer), model flash {c['flash_bytes']} B")
    if "ram_limit" in s:
        r = s["ram_limit"]
        print(f"--ram-limit {args.ram_limit}: arena {r['arena_bytes']} B + stack {r['ram_stack']} B, "
              f"{r['instructions']} instructions ({brief_changes(r['changes']) or 'default'})")
    print("Pareto front (arena + stack vs instructions):")
    print(s["front_table"])
    print("Pareto front in arena + stack, model flash and instructions:")
    print(s["front_flash_table"])
    limit = f"--ram-limit {args.ram_limit}" if args.ram_limit else "[--ram-limit BYTES] [--flash-limit BYTES]"
    print(f"records: {records}; use: tinyfuse compile {args.model} --target {args.target} --tuning-records "
          f"{records} {limit} -o OUT")
    return 0


__all__ = ["RAM_LIMIT_HELP", "add_parser", "cmd_tune", "compile_options"]
