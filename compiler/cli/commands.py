"""What each command does (``COMMANDS``: name -> ``cmd_<name>(args) -> exit code``)."""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from .._version import __version__
from ..codegen.labels import read_labels
from ..errors import TinyfuseError
from ..harness.cycles import time_estimate, time_text
from ..harness.inputs import load_inputs
from ..harness.verdict import compare, is_quantized, output_lines, verdict_line
from ..quantize import cmd_quantize
from ..targets import TARGETS, get_target
from ..userdir import input_file

from .args import EXIT_MISMATCH, EXIT_OK


def _compile(args, needs_board: bool = False):
    """compile_model with the command line's options. ``needs_board`` (run, bench, report --measure,
    validate): a model that fits no qemu board of the target is the one error of ``check_fits``
    instead of compile's NoBoardWarning."""
    if not needs_board:
        return _compile_model(args)
    from ..targets import NoBoardWarning, check_fits
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBoardWarning)
        result = _compile_model(args)
    check_fits(result, get_target(args.target))
    return result


def _compile_model(args):
    from ..driver import compile_model
    ram_limit, records = None, args.tuning_records
    if getattr(args, "ram_limit", None):
        from ..tune.ramlimit import parse_bytes, predicted_config
        ram_limit = parse_bytes(args.ram_limit)
        if records is None:
            from ..tune import TuningRecords
            from ..tune.command import compile_options
            pick = predicted_config(args.model, args.target, ram_limit, args.cost_model, compile_options(args))
            records, ram_limit = TuningRecords(config=pick["config"]), None
            print(f"--ram-limit {args.ram_limit}: predicted build arena {pick['arena_bytes']} B, ~{pick['predicted']} "
                  f"instructions ({'; '.join(pick['changes']) or 'default'})", file=sys.stderr)
    flash_limit = None
    if getattr(args, "flash_limit", None):
        from ..tune.ramlimit import parse_bytes
        flash_limit = parse_bytes(args.flash_limit, "--flash-limit")
    placement = {k: getattr(args, k, None) for k in ("weights_section", "arena_section", "code_section", "align")}
    return compile_model(args.model, target=args.target, name=args.name, disabled_passes=args.disable_pass,
                         dump_ir=args.dump_ir, planner=args.planner, rounding=args.rounding, kernels=args.kernels,
                         scratch_bytes=args.scratch_bytes, tuning_records=records, ram_limit=ram_limit,
                         stateful=getattr(args, "stateful", None) or (), weights_dtype=args.weights_dtype,
                         realtime=dict(skip_zero_activations=args.skip_zero_activations, wcet=args.wcet,
                                       max_step_instructions=args.max_step_instructions or 0), io_buffers=getattr(args, "io_buffers", "arena"),
                         sparse=getattr(args, "sparse", None), flash_limit=flash_limit,
                         labels=read_labels(getattr(args, "class_labels", None)),
                         input_shapes=getattr(args, "input_shapes", ()), bind=getattr(args, "bind", ()),
                         input_rows=getattr(args, "input_rows", 0) or 0, **placement)


def cmd_compile(args) -> int:
    from ..project.command import archive_output, write_archive_output
    archive = archive_output(args)
    result = _compile(args)
    if archive is not None:
        return write_archive_output(args, result, archive)
    out = result.write(args.output)
    if args.report:
        from ..report.text import compile_report_text
        print(compile_report_text(result))
    state = f", state {result.state_bytes} bytes" if result.states else ""
    print(f"wrote {', '.join(sorted(result.files))} to {out}/  "
          f"(kernels {len(result.steps)}, arena {result.arena_bytes} bytes{state}, weights {result.weights_bytes} bytes)")
    return 0


def cmd_project(args) -> int:
    from ..project.command import run_project
    return run_project(args, _compile)


def cmd_report(args) -> int:
    from ..report import report, report_files
    from ..targets import get_target
    from ..userdir import check_claim, claim, write_atomic
    target = get_target(args.target)
    if args.output:     # before anything runs: only files tinyfuse wrote there, or new ones (tinyfuse.userdir)
        check_claim(args.output, report_files(args.plot_format), "-o DIR")
    result = _compile(args, needs_board=args.measure)
    measured = measure_kernels(result, target, args.seed) if args.measure else None
    text, files = report(result, target, measured, args.plot_format if args.output else None)
    print(files["report.json"].decode().rstrip() if args.json else text)
    if args.output:
        out = claim(args.output, files, "-o DIR")
        for fname, body in files.items():
            write_atomic(out / fname, body)
        print(f"wrote {', '.join(sorted(files))} to {out}/", file=sys.stderr if args.json else sys.stdout)
    return 0


def measure_kernels(result, target, seed: int) -> dict:
    """bench_target's figures (instructions, measured traffic per kernel) of one run on a seeded random input."""
    from ..harness.bench import bench_target
    from ..harness.qemu import build_target
    if target.is_host:
        raise TinyfuseError("--measure runs under qemu: give --target a qemu target (cortex-m0 ... rv32imac)")
    with tempfile.TemporaryDirectory(prefix="tinyfuse_report_") as tmp:
        return bench_target(build_target(result, target, Path(tmp), load_inputs(None, result.inputs, seed)),
                            measure=True)


def _build_and_run(result, target, inputs, keep: str | None) -> tuple[list[np.ndarray], str | None]:
    """Build the generated C (host gcc or a qemu target) in ``keep`` (claimed first: harness/workdir.py)
    or a temp dir, run it on ``inputs``; (outputs, qemu board name or None)."""
    from ..harness import build_host, run_host
    from ..harness.qemu import build_target, run_target
    from ..harness.workdir import keep_dir
    kept = keep_dir(keep, result, target, "run")
    with tempfile.TemporaryDirectory(prefix="tinyfuse_") as tmp:
        work = kept or Path(tmp)
        if target.is_host:
            return run_host(build_host(result, work), result, inputs), None
        build = build_target(result, target, work, inputs)
        return run_target(build), build.board.name


def cmd_run(args) -> int:
    """Compile, build, run, compare with the oracle (harness/verdict.py); exit 1 on a mismatch. ``--json``
    has the same keys for every model (stateful ones run frames: harness/frames.py)."""
    from ..harness.frames import model_figures, single_frame_keys
    from ..harness.per_layer_report import per_layer_lines
    target = get_target(args.target)
    if args.tflite_ref:
        input_file(args.tflite_ref, "--tflite-ref")
    result = _compile(args, needs_board=True)
    if args.frames or result.states:            # a stateful model runs frames from its reset state
        return _run_frames(args, target, result)
    inputs = load_inputs(args.input, result.inputs, args.seed)
    outs, board = _build_and_run(result, target, inputs, args.keep)
    host = result if target.is_host or not is_quantized(result) else \
        _compile(argparse.Namespace(**{**vars(args), "target": "host", "tuning_records": None, "ram_limit": None,
                                       "flash_limit": None}))   # the real-arithmetic oracle traces the host build
    # (portable kernels: the target's tuning records and limits do not apply; the target build is checked end to end)
    verdict, lines = compare(args.model, result, inputs, outs, args.rounding, args.tflite_ref, host)
    summary = {"model": result.name, "target": args.target, "board": board, "tinyfuse_version": __version__,
               **model_figures(result), **single_frame_keys(result, outs), "oracle_unavailable": verdict["oracle_error"],
               **verdict, "per_layer": None}
    status = EXIT_OK if summary["outputs_match"] else EXIT_MISMATCH     # --per-layer reports, never changes it
    lines += output_lines(result, outs)
    if board:
        lines.append(f"ran on {args.target} under qemu ({board})")
    lines += [verdict_line(summary),
              f"kernels {len(result.steps)}, arena_bytes {result.arena_bytes}, naive_bytes {result.naive_bytes} "
              f"(no planning), weights {result.weights_bytes} bytes, {result.macs} MACs"]
    if args.per_layer:   # the same build, compiled with the trace hook, run once more
        summary["per_layer"], more = per_layer_lines(args.model, result, target, inputs, args.keep)
        lines += more
    print(json.dumps(summary) if args.json else "\n".join(lines))
    return status


def _run_frames(args, target, result) -> int:
    """``run --frames N``: every frame against the oracle (harness/frames.py); exit 1 on a mismatch."""
    from ..harness.frames import frame_inputs, frames_text, run_frames
    from ..harness.per_layer_report import per_layer_lines
    frames = frame_inputs(args.input, result.inputs, args.frames or 1, args.seed)
    from ..driver import stateful_pairs
    pairs = stateful_pairs(args.stateful) if args.stateful else ()
    from ..harness.workdir import keep_dir
    kept = keep_dir(args.keep, result, target, "run", frames=True)
    summary = {"tinyfuse_version": __version__, **run_frames(args.model, result, target, frames, kept, pairs),
               "per_layer": None}
    text = frames_text(summary)
    if args.per_layer:              # the first frame, from the reset state
        summary["per_layer"], more = per_layer_lines(args.model, result, target, frames[0], args.keep)
        text += "\n" + "\n".join(more)
    print(json.dumps(summary) if args.json else text)
    return EXIT_OK if summary["outputs_match"] else EXIT_MISMATCH


def cmd_bench(args) -> int:
    from ..harness.bench import bench_target
    from ..harness.realtime import realtime_figures
    from ..harness.qemu import build_target
    from ..harness.workdir import keep_dir
    from ..targets import get_target
    target = get_target(args.target)
    if target.is_host:
        raise TinyfuseError(f"bench runs on a qemu target: --target one of {', '.join(t for t in TARGETS if t != 'host')}")
    result = _compile(args, needs_board=True)
    inputs = load_inputs(args.input, result.inputs, args.seed)
    kept = keep_dir(args.keep, result, target, "bench")
    with tempfile.TemporaryDirectory(prefix="tinyfuse_") as tmp:
        build = build_target(result, target, kept or Path(tmp), inputs)
        figures = bench_target(build, measure=args.measure)
        figures |= realtime_figures(build, args.wcet, inputs, args.seed)
    if args.clock_mhz:
        figures["time_estimate_ms"] = time_estimate(figures, args.clock_mhz)
    if args.json:
        print(json.dumps(figures))
        return 0
    from ..harness.measure_text import bench_text
    print(bench_text(figures))
    if args.measure:
        from ..harness.measure_text import measured_text
        print(measured_text(figures))
    if args.clock_mhz:
        print("\n".join(time_text(figures["time_estimate_ms"])))
    return 0


def cmd_validate(args) -> int:
    from ..validate import validate, validate_text
    s = validate(args.model, args.inputs, labels=args.labels, target=args.target, float_model=args.float_model,
                 progress=not args.no_progress and not args.json, result=_compile(args, needs_board=True),
                 quantize_inputs=args.quantize_inputs, fail_under=args.fail_under)
    print(json.dumps(s) if args.json else validate_text(s))
    return EXIT_OK if s["passed"] else EXIT_MISMATCH


def cmd_tune(args) -> int:
    from ..tune.command import cmd_tune as run
    return run(args)


COMMANDS = {"compile": cmd_compile, "run": cmd_run, "bench": cmd_bench, "report": cmd_report, "tune": cmd_tune,
            "validate": cmd_validate, "project": cmd_project, "quantize": cmd_quantize}
